#include "mysql_process.hpp"

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::mysql {

ChildProcess start_logged(const std::vector<std::string>& argv, const std::filesystem::path& log_file) {
  SpawnOptions options;
  options.output = ChildOutput::append_to_file;
  options.output_file = log_file;
  return ChildProcess(argv, options);
}

int run_to_completion(const std::vector<std::string>& argv, const std::filesystem::path& log_file,
                      std::chrono::milliseconds timeout) {
  ChildProcess child = start_logged(argv, log_file);
  if (auto st = child.wait_for(timeout)) return *st;
  child.terminate(std::chrono::seconds(5));
  throw EnvironmentError(fmt::format("{} did not finish within {} s (log: {}):\n{}", argv[0], timeout.count() / 1000,
                                     log_file.string(), tail_of(log_file)));
}

std::optional<std::filesystem::path> find_server_program(const std::string& name) {
  return find_program(name, {"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"});
}

std::string tail_of(const std::filesystem::path& file, int lines) {
  const std::string tail = tail_of_file(file, lines);
  std::string out;
  for (std::size_t start = 0; start < tail.size();) {
    const auto nl = tail.find('\n', start);
    const auto end = nl == std::string::npos ? tail.size() : nl;
    out += "  " + tail.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace drivelab::oltp::mysql
