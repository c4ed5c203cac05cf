#pragma once
/// \file yaml.hpp
/// YAML decoding toolkit: every protocol is decoded once into typed structs through these types,
/// and every problem is reported as
///
///     config/quick.yaml:12:5: tests[1].io.xfersize: '4q' is not a size: unknown size unit 'q' (use ...)
///
/// (file:line:column, 1-based, then the key path, then the reason). Decoders do not stop at the
/// first problem: they record a Diagnostic, keep the default and go on, so `drivelab validate`
/// shows every mistake at once. Unknown keys are errors (with a "did you mean" hint), never ignored.
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
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace drivelab::config {

/// A place in a source: file name as given by the user (or "<--set>", "<string>"), 1-based line
/// and column (yaml-cpp's Mark is 0-based; we add 1 as editors and compilers count); line 0 means
/// "no position". A key that is missing from a mapping is reported at the mapping's position; a
/// node written by Document::apply_override has no position and is reported at file "<--set>".
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

/// One problem found while decoding.
struct Diagnostic {
  Location where;
  std::string key_path;  ///< "tests[1].io.xfersize"; "" for the document root
  std::string message;
  /// "file:line:column: key.path: message" (position and path parts omitted when unknown).
  std::string to_string() const;
};

/// Collects every Diagnostic of a decode, in the order found.
class Diagnostics {
 public:
  void error(Location where, std::string key_path, std::string message);
  bool empty() const noexcept { return items_.empty(); }
  std::size_t size() const noexcept { return items_.size(); }
  const std::vector<Diagnostic>& items() const noexcept { return items_; }
  /// All diagnostics, one per line.
  std::string to_string() const;
  /// Throws drivelab::ConfigError whose what() is to_string(), if there is any diagnostic.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
};

/// A loaded YAML document. Keeps the yaml-cpp tree and the file name for locations.
/// Parse errors of the YAML itself are recorded in the Diagnostics passed to load_*().
class Document {
 public:
  /// Reads and parses `path`. A missing file or a YAML syntax error is recorded as a diagnostic
  /// (file:line:column of the syntax error); the document is then empty (root() is undefined).
  static Document load_file(const std::filesystem::path& path, Diagnostics& diags);
  /// Parses `text`, reporting positions against `name`. An empty text is an empty document (a null
  /// root, which MapReader reads as an empty mapping). A stream of several documents ("---") is an
  /// error: a protocol is one document.
  static Document load_string(const std::string& text, std::string name, Diagnostics& diags);

  /// Applies a command-line override "key.path=value" (e.g. "tests[0].duration=10s",
  /// "tests[*].warmup=0s" for every element, "seed=7"). Missing intermediate maps are created.
  /// Errors (bad syntax, index out of range, path through a scalar) go to `diags` at "<--set>".
  /// The value is parsed as YAML (so "[1,2]" is a list); positions point at "<--set>".
  /// Path syntax: keys separated by '.', "[N]" (0-based, must exist) or "[*]" after a sequence;
  /// a path may start with "[N]" when the root is a sequence. The path is checked completely
  /// before anything is written, so a failed override leaves the document unchanged. Nodes not on
  /// the path keep their locations. On a document that failed to load, the assignment is checked
  /// but not applied (the load error is already reported).
  void apply_override(std::string_view assignment, Diagnostics& diags);

  class Node root(Diagnostics& diags) const;
  const std::string& name() const noexcept { return name_; }
  bool loaded() const noexcept { return loaded_; }

 private:
  YAML::Node root_;
  std::string name_;
  bool loaded_ = false;
};

/// A node of a Document, with its key path and a pointer to the Diagnostics it reports into.
/// Copyable and cheap (yaml-cpp nodes are handles).
class Node {
 public:
  Node(YAML::Node node, std::string key_path, std::string file, Diagnostics* diags);

  bool defined() const noexcept;  ///< false for a missing key
  bool is_map() const noexcept;
  bool is_sequence() const noexcept;
  bool is_scalar() const noexcept;
  bool is_null() const noexcept;
  const std::string& path() const noexcept { return path_; }
  /// The document's name, as given to load_file/load_string.
  const std::string& file() const noexcept { return file_; }
  /// Where this node was written; see Location for undefined and overridden nodes.
  Location location() const;
  /// The scalar text ("" for non-scalars).
  std::string scalar() const;
  /// Child of a mapping (undefined Node if missing; path "parent.key").
  Node child(std::string_view key) const;
  /// Elements of a sequence (paths "parent[i]"). Empty if not a sequence.
  std::vector<Node> elements() const;
  /// Keys of a mapping in document order, each with its node.
  std::vector<std::pair<std::string, Node>> entries() const;
  /// Records an error at this node's location and path.
  void error(std::string message) const;
  Diagnostics& diagnostics() const noexcept { return *diags_; }
  const YAML::Node& yaml() const noexcept { return node_; }

 private:
  /// The value of mapping entry `key`, reporting at the key when the value is empty.
  Node value_node(const YAML::Node& key, const YAML::Node& value, std::string path) const;

  YAML::Node node_;
  std::string path_;
  std::string file_;
  Diagnostics* diags_;
  /// Where a node without a text of its own is reported: for a missing child, the mapping that
  /// lacks it; for an empty value (`xfersize:`), its key (yaml-cpp marks such a null at the next
  /// token, often on the following line).
  std::optional<Location> fallback_location_;
};

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
  bool duration(std::string_view key, std::chrono::nanoseconds& out,
                Range<std::chrono::nanoseconds> range = {}, bool required = false);
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
      if (c.first == word) { out = c.second; return true; }
    return false;
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
  bool choice_word(std::string_view key, std::string& out, const std::vector<std::string_view>& names,
                   bool required);
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
