// Result record files: atomic writes, reads with errors that name the file.
#include <string>

#include "drivelab/core/errors.hpp"
#include "drivelab/results/record.hpp"
#include "file_io.hpp"
#include "json_read.hpp"

namespace drivelab::results {

void write_record(const std::filesystem::path& path, const RunRecord& r, int indent) {
  detail::write_file_atomically(path, detail::dump_json(to_json(r), indent) + "\n", "result record");
}

namespace detail {

RunRecord record_from_text(const std::string& text, const std::filesystem::path& path) {
  const std::string where = "result record '" + path.string() + "'";
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw ConfigError(where + ": not valid JSON: " + e.what());
  }
  try {
    return run_record_from_json(j);
  } catch (const ConfigError& e) {
    throw ConfigError(where + ": " + e.what());
  }
}

}  // namespace detail

RunRecord read_record(const std::filesystem::path& path) {
  return detail::record_from_text(detail::read_file(path, "result record"), path);
}

}  // namespace drivelab::results
