// `drivelab results validate`: the built-in schema, python3-jsonschema through core/process.hpp,
// and the test suite's copies of written records.
#include "drivelab/results/validate.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/process.hpp"
#include "file_io.hpp"

namespace drivelab::results {

namespace detail {
extern const std::string_view kRecordSchemaText;  // record_schema.cpp (generated)
extern const std::string_view kValidatorPython;
}  // namespace detail

std::string_view record_schema_text() noexcept { return detail::kRecordSchemaText; }

Validation validate_files(const std::vector<std::filesystem::path>& files, const std::filesystem::path& schema_file,
                          std::chrono::milliseconds timeout) {
  const auto python = find_program("python3");
  if (!python)
    throw EnvironmentError(
        "results validate: python3 not found on PATH (install the Debian packages python3 and "
        "python3-jsonschema)");
  // The schema as one argument (about 20 KB, far below Linux's 128 KiB per argument) or @FILE.
  std::vector<std::string> argv{
      python->string(), "-c", std::string(detail::kValidatorPython),
      schema_file.empty() ? std::string(detail::kRecordSchemaText) : "@" + schema_file.string()};
  for (const auto& f : files) argv.push_back(f.string());
  // The output goes to a temporary file, read whole afterwards: a capture pipe keeps only the
  // last 64 KiB, and the suite's validation of hundreds of files must not lose a fault.
  std::string out_template = (std::filesystem::temp_directory_path() / "drivelab-validate-XXXXXX").string();
  const int fd = ::mkstemp(out_template.data());
  if (fd < 0)
    throw EnvironmentError("results validate: cannot create a temporary file in " +
                           std::filesystem::temp_directory_path().string());
  ::close(fd);
  const std::filesystem::path out_file = out_template;
  SpawnOptions options;
  options.output = ChildOutput::append_to_file;
  options.output_file = out_file;
  options.start_error = "results validate: start " + python->string();
  Validation v;
  try {
    ChildProcess child(argv, options);
    const std::optional<int> status = child.wait_for(timeout);
    if (!status) child.kill();
    v.output = detail::read_file(out_file, "validator output");
    if (!status) {
      v.output += fmt::format("drivelab: results validate: the validator did not finish within {} s\n",
                              std::chrono::duration_cast<std::chrono::seconds>(timeout).count());
      v.exit_code = 3;
    } else {
      const int code = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
      v.exit_code = code == 0 || code == 2 ? code : 3;
    }
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(out_file, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::remove(out_file, ec);
  return v;
}

void keep_copy_for_validation(const std::filesystem::path& file) noexcept {
  const char* dir = std::getenv(kKeepRecordsEnv);
  if (dir == nullptr || *dir == '\0' || file.empty()) return;
  try {
    std::filesystem::create_directories(dir);
    const auto copy = std::filesystem::path(dir) / fmt::format("{}-{}", ::getpid(), file.filename().string());
    detail::write_file_atomically(copy, detail::read_file(file, "file to keep"), "kept copy");
  } catch (const std::exception& e) {
    std::cerr << fmt::format("drivelab: warning: {}: cannot keep a copy of {} in {}: {}\n", kKeepRecordsEnv,
                             file.string(), dir, e.what());
  }
}

}  // namespace drivelab::results
