#pragma once
/// \file map_reader.hpp
/// Decoding one YAML mapping into a typed struct: every protocol is decoded once through
/// MapReader, and every problem is reported as a Diagnostic (document.hpp) at file:line:column
/// and key path. Unknown keys are errors (with a "did you mean" hint), never ignored.
///
/// Typical decoder:
///
///     IoJob decode_io(const config::Node& node) {
///       IoJob job;                                  // defaults live in the struct
///       config::MapReader r(node);
///       r.size("xfersize", job.xfersize_bytes, {.min = 512});
///       r.integer("iodepth", job.iodepth, {.min = 1, .max = 65536});
///       r.choice("rw", job.rw, {{"randread", Rw::randread}, {"randwrite", Rw::randwrite}});
///       r.finish();                                 // unknown keys -> diagnostics
///       return job;
///     }
///
/// Message shapes (pinned by tests/unit/config/): type errors "expected an integer, found 'abc'",
/// "expected a mapping, found a sequence"; range errors "iodepth must be between 1 and 65536,
/// found 0"; "rw must be one of: randread, randwrite; found 'randrw'"; "missing required key
/// 'kind'" (at the mapping that lacks it); "duplicate key 'rw' (first given at 3:5)"; "unknown key
/// 'xfersiz' (did you mean 'xfersize'?)" or, without a close match, "(known keys: a, b, c)".
/// yaml-cpp 0.7 keeps every pair of a mapping that repeats a key (lookups return the first), so
/// MapReader detects duplicates itself, as the YAML 1.2 spec requires (keys must be unique).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drivelab/config/document.hpp"
#include "drivelab/core/names.hpp"

namespace drivelab::config {

/// Bounds for numeric keys (inclusive). Unset = unbounded.
template <class T>
struct Range {
  std::optional<T> min{};
  std::optional<T> max{};
};

/// Decodes one YAML mapping. Each key is declared once, with its type, bounds and default (the
/// current value of `out`, kept when the key is absent or invalid). Every accessor returns true
/// when the key was present and valid. After the last key, finish() reports every key that was
/// not declared ("unknown key 'xfersiz' (did you mean 'xfersize'?)"). A node that is not a mapping
/// is reported once, and all accessors then return false. A null node (`io:` with no value) or an
/// undefined one (a missing section) reads as an empty mapping: every key keeps its default, and
/// only required keys are reported. A key with an empty value (`xfersize:`) is an error for every
/// scalar accessor ("expected a size, found an empty value"); for string_list it is an empty list.
/// Booleans accept true/false, yes/no, on/off (any case). Integers are decimal or 0x-hex; the
/// int/uint32 overloads also enforce the range of the target type.
class MapReader {
 public:
  explicit MapReader(const Node& map);
  ~MapReader();
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

  bool string(std::string_view key, std::string& out, bool required = false);
  bool boolean(std::string_view key, bool& out, bool required = false);
  bool integer(std::string_view key, std::int64_t& out, Range<std::int64_t> range = {}, bool required = false);
  bool integer(std::string_view key, int& out, Range<std::int64_t> range = {}, bool required = false);
  bool integer(std::string_view key, std::uint32_t& out, Range<std::int64_t> range = {}, bool required = false);
  bool number(std::string_view key, double& out, Range<double> range = {}, bool required = false);
  /// A size with units ("4k", "2GiB", "512"); see core/units.hpp.
  bool size(std::string_view key, std::uint64_t& bytes, Range<std::uint64_t> range = {}, bool required = false);
  /// A duration with units ("30s", "250ms"); a bare number is seconds.
  bool duration(std::string_view key, std::chrono::nanoseconds& out, Range<std::chrono::nanoseconds> range = {},
                bool required = false);
  /// A percentage 0..100 written as "45", "45%" or 45.0.
  bool percent(std::string_view key, double& out, bool required = false);
  /// One of a fixed set of words; the error lists the choices.
  template <class E>
  bool choice(std::string_view key, E& out, std::initializer_list<std::pair<std::string_view, E>> choices,
              bool required = false) {
    std::string word;
    std::vector<std::string_view> names;
    for (const auto& c : choices) names.push_back(c.first);
    if (!choice_word(key, word, names, required)) return false;
    for (const auto& c : choices)
      if (c.first == word) {
        out = c.second;
        return true;
      }
    return false;
  }
  /// One of an enum's words, from the table that also prints it (core/names.hpp).
  template <class E, std::size_t N>
  bool choice(std::string_view key, E& out, const EnumNames<E, N>& names, bool required = false) {
    std::string word;
    std::vector<std::string_view> words;
    for (const auto& c : names) words.push_back(c.first);
    if (!choice_word(key, word, words, required)) return false;
    if (const auto v = value_of(names, word)) {
      out = *v;
      return true;
    }
    return false;
  }
  /// One of a list of words kept as the word itself (the I/O engines' names, io::engine_names()).
  bool choice(std::string_view key, std::string& out, const std::vector<std::string_view>& words,
              bool required = false) {
    return choice_word(key, out, words, required);
  }
  /// A list of strings ("[a, b]" or a single scalar taken as a one-element list).
  bool string_list(std::string_view key, std::vector<std::string>& out, bool required = false);
  /// A nested section (mapping or sequence) to decode with its own reader. Marks `key` as known.
  /// Returns an undefined Node when absent (and records an error if `required`).
  Node section(std::string_view key, bool required = false);
  /// A nested sequence: its elements, or none when absent or null. Anything else is reported
  /// ("expected a sequence, found a mapping") and yields none. Marks `key` as known.
  std::vector<Node> sequence(std::string_view key, bool required = false);
  /// Marks a key as known without decoding it (e.g. decoded elsewhere).
  void accept(std::string_view key);
  /// Reports unknown keys. Called by the destructor if not called explicitly.
  void finish();

  const Node& node() const noexcept { return map_; }

 private:
  bool choice_word(std::string_view key, std::string& out, const std::vector<std::string_view>& names, bool required);
  /// Marks `key` known and returns its node if present; records "missing required key" if absent
  /// and required; records "expected a scalar" for maps/sequences.
  std::optional<Node> scalar_child(std::string_view key, bool required);
  /// Same, with the expected kind of value named in errors ("an integer").
  std::optional<Node> scalar_child(std::string_view key, bool required, std::string_view what);
  void report_duplicate_keys();

  Node map_;
  bool ok_ = true;
  bool finished_ = false;
  std::vector<std::string> known_;
};

}  // namespace drivelab::config
