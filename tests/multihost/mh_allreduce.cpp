// mh_allreduce: the smallest real MPI job for the multi-host harness (tests/multihost/). Every rank
// contributes rank + 1 to an MPI_Allreduce(MPI_SUM) and its host name and network namespace
// (the target of /proc/self/ns/net, e.g. "net:[4026532246]") to an MPI_Gather; rank 0 prints one
// line per rank, in rank order:
//   rank=<k> size=<N> host=<host name> netns=<net:[inode]> sum=<N(N+1)/2 as rank k computed it>
// and exits 0 only if every rank's sum is N(N+1)/2. With `--mca btl self,tcp` and ranks on two
// hosts, the Allreduce's messages between them can only travel over the TCP BTL.
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {
constexpr int kField = 256;  // bytes per gathered string (host names are at most 64)

void copy_field(const std::string& s, char* out) { std::snprintf(out, kField, "%s", s.c_str()); }
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  std::array<char, kField> host{};
  gethostname(host.data(), host.size() - 1);
  std::error_code ec;
  const std::string netns = std::filesystem::read_symlink("/proc/self/ns/net", ec).string();

  long long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);

  std::array<char, 3 * kField> row{};
  copy_field(host.data(), row.data());
  copy_field(ec ? "unknown" : netns, row.data() + kField);
  copy_field(std::to_string(sum), row.data() + 2 * kField);
  std::vector<char> rows(rank == 0 ? static_cast<size_t>(size) * row.size() : 0);
  MPI_Gather(row.data(), static_cast<int>(row.size()), MPI_CHAR, rows.data(), static_cast<int>(row.size()), MPI_CHAR, 0,
             MPI_COMM_WORLD);

  int status = 0;
  if (rank == 0) {
    const long long expected = static_cast<long long>(size) * (size + 1) / 2;
    for (int k = 0; k < size; ++k) {
      const char* r = rows.data() + static_cast<size_t>(k) * row.size();
      std::printf("rank=%d size=%d host=%s netns=%s sum=%s\n", k, size, r, r + kField, r + 2 * kField);
      if (std::to_string(expected) != r + 2 * kField) status = 1;
    }
    std::fflush(stdout);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
