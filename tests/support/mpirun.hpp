#pragma once
// Test helper: the one mpirun command line of the tests that start N ranks on this host (issue 30:
// Debian 12 ships Open MPI 4.1, Debian 13 Open MPI 5.0, whose mpirun is PRRTE's and takes other
// parameters). Every test builds its mpirun here, so a release's difference is written once.
//
//   Open MPI 4.1: --mca oob_tcp_if_include lo keeps mpirun's own control messages on loopback;
//                 --mca odls_base_sigkill_timeout 8: a rank that dies is answered by SIGTERM to
//                 the others and SIGKILL 8 s later (docs/multihost.md "When a host or rank dies").
//   Open MPI 5.0: PRRTE's bootstrap never uses a loopback interface (`--prtemca prte_if_include
//                 lo` fails: "No network interfaces were found for out-of-band communications"),
//                 and on one host it needs none, so no interface is named; PRRTE 3 has no
//                 odls_base_sigkill_timeout (measured on Debian 13's Open MPI 5.0.7, PRRTE 3.0.8).
// Both: TCP on loopback between the ranks (--mca btl self,tcp --mca btl_tcp_if_include lo),
// --oversubscribe (more ranks than cores), --allow-run-as-root when root, and the sanitizer
// build's options for every rank (Open MPI dlcloses its components in MPI_Finalize, so
// LeakSanitizer reports their allocations at exit under "<unknown module>", which no suppression
// can name; leaks are checked by every other test, ASan's error checks stay on).
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace drivelab::testing {

inline constexpr const char* kMpirun = "/usr/bin/mpirun";

/// Open MPI's major version from `mpirun --version` ("mpirun (Open MPI) 4.1.4"); 0 if unknown.
inline int open_mpi_major() {
  static const int major = [] {
    FILE* p = ::popen("/usr/bin/mpirun --version 2>/dev/null", "r");
    if (p == nullptr) return 0;
    std::array<char, 256> line{};
    std::string all;
    while (std::fgets(line.data(), static_cast<int>(line.size()), p) != nullptr) all += line.data();
    ::pclose(p);
    const auto at = all.find("(Open MPI) ");
    if (at == std::string::npos) return 0;
    return std::atoi(all.c_str() + at + 11);
  }();
  return major;
}

/// mpirun for `ranks` ranks on this host, then `command`.
inline std::vector<std::string> mpirun_local(int ranks, const std::vector<std::string>& command) {
  std::vector<std::string> args{kMpirun};
  if (::geteuid() == 0) args.emplace_back("--allow-run-as-root");
  for (const char* a : {"--oversubscribe", "-np"}) args.emplace_back(a);
  args.push_back(std::to_string(ranks));
  for (const char* a : {"--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"}) args.emplace_back(a);
  if (open_mpi_major() < 5)
    for (const char* a : {"--mca", "oob_tcp_if_include", "lo", "--mca", "odls_base_sigkill_timeout", "8"})
      args.emplace_back(a);
  for (const char* a : {"-x", "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"}) args.emplace_back(a);
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

}  // namespace drivelab::testing
