#pragma once
/// \file document.hpp
/// YAML documents of the config toolkit: loading a protocol (a file, a string, a `--set` override)
/// and walking its nodes with their key paths, and the Diagnostics every problem is recorded in,
/// reported as
///
///     config/quick.yaml:12:5: tests[1].io.xfersize: '4q' is not a size: unknown size unit 'q' (use ...)
///
/// (file:line:column, 1-based, then the key path, then the reason). Decoders do not stop at the
/// first problem: they record a Diagnostic, keep the default and go on, so `drivelab validate`
/// shows every mistake at once. Mappings are decoded with config::MapReader (map_reader.hpp).
#include <filesystem>
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
  std::shared_ptr<const std::string> text_;  ///< what was parsed, for Node::written
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
  /// The characters this node was written as in its document, from its position up to the first
  /// blank, ',', ']', '}', '#' or line end: what a null was spelled (YAML reads `null`, `Null`,
  /// `NULL`, `~` and an empty value alike; for an empty value yaml-cpp marks the next token, so
  /// that token is returned). An override's null (`--set key=~`) gives what followed the '='.
  /// nullopt when the node has neither (the root of an empty document).
  std::optional<std::string> written() const;
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
  friend class Document;  // root() gives the root its text_
  /// Where the `-` of an empty block sequence item (a null `element` of this sequence) stands, found
  /// in the text before yaml-cpp's mark; nullopt when there is no text or no dash there.
  std::optional<Location> dash_before(const YAML::Node& element) const;
  /// The value of mapping entry `key`, reporting at the key when the value is empty.
  Node value_node(const YAML::Node& key, const YAML::Node& value, std::string path) const;

  YAML::Node node_;
  std::string path_;
  std::string file_;
  Diagnostics* diags_;
  std::shared_ptr<const std::string> text_;  ///< the document's text (Document::text_), or null
  /// Where a node without a text of its own is reported: for a missing child, the mapping that
  /// lacks it; for an empty value (`xfersize:`), its key (yaml-cpp marks such a null at the next
  /// token, often on the following line).
  std::optional<Location> fallback_location_;
};

}  // namespace drivelab::config
