#pragma once
/// \file json_read.hpp (private)
/// Typed, path-aware accessors for reading records back: every error is a ConfigError that names
/// the key path ("tests[1].metrics.tps.value: expected a number, got string"), so a hand-edited or
/// damaged record says where it is wrong.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "drivelab/core/errors.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results::detail {

/// A number for the record: non-finite values become null (JSON has no NaN/inf).
inline Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

/// The dump used for every file we write: invalid UTF-8 (from a device model string, say) is
/// replaced by U+FFFD instead of throwing halfway through a record.
inline std::string dump_json(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

/// Joins a key path: join("tests[1]", "name") == "tests[1].name"; join("", "name") == "name".
inline std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
inline std::string at_index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

[[noreturn]] inline void malformed(const std::string& path, const std::string& what) {
  throw ConfigError(path.empty() ? what : path + ": " + what);
}

inline void expect(bool ok, const Json& j, const std::string& path, const char* expected) {
  if (!ok) malformed(path, std::string("expected ") + expected + ", got " + j.type_name());
}

inline const Json& object_at(const Json& j, const std::string& path) {
  expect(j.is_object(), j, path, "an object");
  return j;  // NOLINT(bugprone-return-const-ref-from-parameter): callers pass a record's member, never a temporary
}

/// The member `key` of object `obj`, or nullptr when absent.
inline const Json* member(const Json& obj, std::string_view key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

/// The member `key` of object `obj`; malformed "missing" when absent. `path` is a string_view so
/// that a call with a literal makes no temporary: GCC 14 warns (-Wdangling-reference) about a
/// reference returned by a function that took one.
inline const Json& required(const Json& obj, std::string_view key, std::string_view path) {
  const Json* m = member(obj, key);
  if (m == nullptr) malformed(join(std::string(path), key), "missing");
  return *m;
}

inline std::string as_string(const Json& j, const std::string& path) {
  expect(j.is_string(), j, path, "a string");
  return j.get<std::string>();
}

/// A number; null reads as NaN (what to_json wrote for a non-finite value).
inline double as_double(const Json& j, const std::string& path) {
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  expect(j.is_number(), j, path, "a number");
  return j.get<double>();
}

inline std::int64_t as_int64(const Json& j, const std::string& path) {
  expect(j.is_number_integer(), j, path, "an integer");
  if (j.is_number_unsigned() &&
      j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    malformed(path, "integer out of range");
  }
  return j.get<std::int64_t>();
}

inline std::uint64_t as_uint64(const Json& j, const std::string& path) {
  expect(j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0), j, path,
         "a non-negative integer");
  return j.get<std::uint64_t>();
}

inline bool as_bool(const Json& j, const std::string& path) {
  expect(j.is_boolean(), j, path, "a boolean");
  return j.get<bool>();
}

/// Optional members: `out` keeps its default when the key is absent.
inline void read_opt(const Json& obj, std::string_view key, const std::string& path, std::string& out) {
  if (const Json* m = member(obj, key)) out = as_string(*m, join(path, key));
}
inline void read_opt(const Json& obj, std::string_view key, const std::string& path, double& out) {
  if (const Json* m = member(obj, key)) out = as_double(*m, join(path, key));
}

inline Status as_status(const Json& j, const std::string& path) {
  const std::string word = as_string(j, path);
  try {
    return status_from_string(word);
  } catch (const std::invalid_argument&) {
    malformed(path, "unknown status '" + word + "' (expected running, complete, interrupted, failed or skipped)");
  }
}

}  // namespace drivelab::results::detail
