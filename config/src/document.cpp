// Diagnostics, Document loading and Node navigation. MapReader lives in map_reader.cpp and
// Document::apply_override in override.cpp.
#include "drivelab/config/document.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "drivelab/core/errors.hpp"
#include "text.hpp"

namespace drivelab::config {
namespace {

constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

// yaml-cpp marks are 0-based; a null mark (-1) means "no position".
Location location_of(const YAML::Mark& mark, const std::string& file) {
  if (mark.is_null() || mark.line < 0) return Location{file, 0, 0};
  return Location{file, mark.line + 1, mark.column + 1};
}

// A protocol is a few KiB: these bound what one may hold before yaml-cpp builds its tree, which
// takes some 300 bytes per node (a 16 MiB file of "1," is 8 million nodes, gigabytes of memory
// and minutes of decoding). The largest real lists (hosts: entries, curve points) are far below.
constexpr std::size_t kMaxSequenceElements = 100'000;
constexpr std::size_t kMaxNodes = 1'000'000;

// Sees a stream's documents without building them: whether a document has content (an empty
// one, or one whose root is null, gives a single OnNull), where each begins, and the first place
// where it passes a bound above (with the key path of the list or the document).
class DocumentScan final : public YAML::EventHandler {
 public:
  YAML::Mark begin;  // the document's first token
  bool content = false;
  YAML::Mark start;            // of the root node, when there is content
  std::string too_large;       // what passed a bound ("" while none did)
  YAML::Mark too_large_at;     // where: the list's start, or the node that passed kMaxNodes
  std::string too_large_path;  // its key path ("tests[0].vdbench.curve")

  void OnDocumentStart(const YAML::Mark& mark) override {
    begin = mark;
    content = false;
    stack_.clear();
    nodes_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, nullptr); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    saw(mark);
    node(mark, nullptr);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    saw(mark);
    node(mark, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    saw(mark);
    node(mark, nullptr);
    stack_.push_back(Frame{.map = false, .at = mark, .count = 0, .key = {}});
  }
  void OnSequenceEnd() override { pop(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    saw(mark);
    node(mark, nullptr);
    stack_.push_back(Frame{.map = true, .at = mark, .count = 0, .key = {}});
  }
  void OnMapEnd() override { pop(); }

 private:
  struct Frame {
    bool map = false;
    YAML::Mark at;
    std::size_t count = 0;  // sequence: elements so far; map: keys and values so far
    std::string key;        // map: the key of the value being read
  };

  void saw(const YAML::Mark& mark) {
    if (!content) start = mark;
    content = true;
  }
  // Every node: counted; a map's even nodes are its keys (their text is kept for the path).
  void node(const YAML::Mark& mark, const std::string* scalar) {
    ++nodes_;
    if (!stack_.empty()) {
      Frame& f = stack_.back();
      if (f.map && f.count % 2 == 0) f.key = scalar != nullptr ? *scalar : std::string("?");
      ++f.count;
      if (!f.map && f.count == kMaxSequenceElements + 1 && too_large.empty()) {
        too_large =
            fmt::format("a list of more than {} elements; no protocol key takes that many", kMaxSequenceElements);
        too_large_at = f.at;
        too_large_path = path(stack_.size() - 1);
      }
    }
    if (nodes_ == kMaxNodes + 1 && too_large.empty()) {
      too_large = fmt::format("more than {} YAML nodes in one protocol; a protocol holds a few hundred", kMaxNodes);
      too_large_at = mark;
      too_large_path = path(stack_.size());
    }
  }
  void pop() {
    if (!stack_.empty()) stack_.pop_back();
  }
  // The key path of the node that frames [0, depth) lead to (what Node::path() would say).
  std::string path(std::size_t depth) const {
    std::string out;
    for (std::size_t i = 0; i < depth; ++i) {
      const Frame& f = stack_[i];
      if (f.map)
        out += (out.empty() ? "" : ".") + f.key;
      else
        out += fmt::format("[{}]", f.count - 1);
    }
    return out;
  }

  std::vector<Frame> stack_;
  std::size_t nodes_ = 0;
};

struct DocumentCount {
  std::size_t documents = 0;
  std::string too_large;  // the first document's first bound passed (DocumentScan)
  YAML::Mark too_large_at;
  std::string too_large_path;
  YAML::Mark second;    // where the second one begins
  bool stuck = false;   // a token no rule consumes (yaml-cpp 0.8 rejects such streams)
  YAML::Mark stuck_at;  // where it is
};

bool same_place(const YAML::Mark& a, const YAML::Mark& b) { return a.pos == b.pos && a.line == b.line; }

// Counts a stream's documents without building them. yaml-cpp 0.7 (Debian 12) never ends
// YAML::LoadAll on a stream whose next token no document rule consumes (one that starts with
// ',', a file of random bytes): each HandleNextDocument reports another empty document at the
// same token (jbeder/yaml-cpp#1040, fixed upstream in 0.8.0 by #1319). An empty document that
// begins where the previous one began consumed nothing, so the count stops there.
// Throws YAML::ParserException on a syntax error.
DocumentCount count_documents(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentScan scan;
  DocumentCount count;
  YAML::Mark previous = YAML::Mark::null_mark();
  while (parser.HandleNextDocument(scan)) {
    if (!scan.content && count.documents > 0 && same_place(scan.begin, previous)) {
      count.stuck = true;
      count.stuck_at = scan.begin;
      break;
    }
    if (++count.documents == 1 && !scan.too_large.empty()) {
      count.too_large = scan.too_large;
      count.too_large_at = scan.too_large_at;
      count.too_large_path = scan.too_large_path;
    }
    if (count.documents == 2) count.second = scan.content ? scan.start : scan.begin;
    previous = scan.begin;
  }
  return count;
}

}  // namespace

// ---- Diagnostic / Diagnostics -------------------------------------------------------------------

std::string Diagnostic::to_string() const {
  std::string out = where.file;
  if (where.line > 0) out += fmt::format(":{}:{}", where.line, where.column);
  if (!out.empty()) out += ": ";
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  return out;
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): printable() copies it anyway; one string per error
void Diagnostics::error(Location where, std::string key_path, std::string message) {
  items_.push_back(Diagnostic{std::move(where), detail::printable(key_path), std::move(message)});
}

std::string Diagnostics::to_string() const {
  std::string out;
  for (const Diagnostic& d : items_) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}

void Diagnostics::throw_if_any() const {
  if (!items_.empty()) throw ConfigError(to_string());
}

// ---- Document -----------------------------------------------------------------------------------

namespace {

/// What is wrong with the indentation of the line of a YAML syntax error (0-based `line`) or of
/// the line before it, as "; line N ..." to append to yaml-cpp's message ("end of map not found",
/// "end of sequence not found"), which never names the indentation; "" when neither line is
/// mis-indented or the text is beyond this reading:
///  - "; line 6 is indented with a tab (YAML indents with spaces only)": a tab in the line's
///    leading blanks (YAML 1.2 spec, 6.1: tabs are not indentation);
///  - "; line 5 is indented 3 spaces, unlike the lines before it (0, 2 or 4): ...": a block line
///    that lines up with no open mapping or sequence (8.2.1, 8.2.2: siblings share one
///    indentation) and is not the deeper first line of a block opened by "key:" or "-" above it.
/// The open indentations are the block lines' since the last less-indented one, "- " adding the
/// column of the item's content. Flow collections, quoted scalars and block scalars that span
/// lines end the reading (their lines may sit anywhere): no hint then.
std::string indentation_hint(std::string_view text, int line) {
  std::vector<std::size_t> open;  // the indentations of the open blocks, increasing
  bool opens_block = false;       // the line before ends with "key:" or is a bare "-"
  std::size_t start = 0;
  for (int n = 0; n <= line && start <= text.size(); ++n) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view l = text.substr(start, end - start);
    start = end + 1;
    const std::size_t indent = std::min(l.find_first_not_of(" \t"), l.size());
    const bool checked = n >= line - 1;
    if (l.substr(0, indent).find('\t') != std::string_view::npos)
      return checked ? fmt::format("; line {} is indented with a tab (YAML indents with spaces only)", n + 1) : "";
    std::string_view content = l.substr(indent);
    if (const std::size_t hash = content.find(" #"); hash != std::string_view::npos) content = content.substr(0, hash);
    while (!content.empty() && (content.back() == ' ' || content.back() == '\r')) content.remove_suffix(1);
    if (content.empty() || content.front() == '#') continue;
    if (content.starts_with("---") || content.starts_with("...") || content.front() == '%') return "";
    if (checked && !open.empty() && std::find(open.begin(), open.end(), indent) == open.end() &&
        !(opens_block && indent > open.back())) {
      std::string levels;
      for (std::size_t i = 0; i < open.size(); ++i)
        levels += fmt::format("{}{}", i == 0 ? "" : i + 1 == open.size() ? " or " : ", ", open[i]);
      return fmt::format(
          "; line {} is indented {} spaces, unlike the lines before it ({}): YAML nests by indentation, so a key "
          "lines up with the other keys of its mapping and an item's '-' with the other items'",
          n + 1, indent, levels);
    }
    // Beyond this reading: a flow collection or a quoted scalar left open, a block scalar.
    const auto count = [&](std::string_view chars) {
      return std::count_if(content.begin(), content.end(),
                           [&](char c) { return chars.find(c) != std::string_view::npos; });
    };
    if (count("[{") != count("]}") || count("\"") % 2 != 0 || count("'") % 2 != 0) return "";
    if (content.back() == '|' || content.back() == '>' || content.ends_with("|-") || content.ends_with(">-") ||
        content.ends_with("|+") || content.ends_with(">+"))
      return "";
    while (!open.empty() && open.back() >= indent) open.pop_back();
    open.push_back(indent);
    std::size_t column = indent;
    while (content.starts_with("-") && (content.size() == 1 || content[1] == ' ')) {  // "- " items, "- - " nested
      const std::size_t skip = std::min(content.find_first_not_of(' ', 1), content.size());
      if (skip == content.size()) break;  // a bare "-": its content is on the next lines
      column += skip;
      content.remove_prefix(skip);
      open.push_back(column);
    }
    opens_block = content.back() == ':' || content == "-";
  }
  return "";
}

}  // namespace

Document Document::load_file(const std::filesystem::path& path, Diagnostics& diags) {
  const std::string name = path.string();
  const auto refuse = [&](const std::string& why) {
    Document doc;
    doc.name_ = name;
    doc.root_ = YAML::Node(YAML::NodeType::Undefined);
    diags.error(Location{name, 0, 0}, "", "cannot read file: " + why);
    return doc;
  };
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::directory) return refuse("it is a directory");
  // A device never ends (/dev/zero) or is not a protocol; a pipe (<(...)) is read up to the cap.
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block ||
      type == std::filesystem::file_type::socket)
    return refuse("it is a device or socket, not a protocol file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    Document doc;
    doc.name_ = name;
    doc.root_ = YAML::Node(YAML::NodeType::Undefined);
    diags.error(Location{name, 0, 0}, "",
                fmt::format("cannot read file: {}", err != 0 ? std::strerror(err) : "open failed"));
    return doc;
  }
  // Read at most kMaxConfigBytes: a protocol is a few KiB, and a pipe may never end.
  std::string text;
  char chunk[65536];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes)
      return refuse(fmt::format("larger than {} MiB; a protocol file is a few KiB", kMaxConfigBytes >> 20));
  }
  if (in.bad()) return refuse("read error");
  return load_string(text, name, diags);
}

Document Document::load_string(const std::string& text, std::string name, Diagnostics& diags) {
  Document doc;
  doc.name_ = std::move(name);
  doc.root_ = YAML::Node(YAML::NodeType::Undefined);
  try {
    const DocumentCount count = count_documents(text);
    if (count.stuck) {
      const auto pos = static_cast<std::size_t>(std::max(count.stuck_at.pos, 0));
      diags.error(location_of(count.stuck_at, doc.name_), "",
                  fmt::format("YAML syntax error: unexpected {}{}",
                              pos < text.size() ? detail::quote(text.substr(pos, 1)) : "end of file",
                              indentation_hint(text, count.stuck_at.line)));
      return doc;
    }
    if (!count.too_large.empty()) {  // before yaml-cpp builds the tree that would take the memory
      diags.error(location_of(count.too_large_at, doc.name_), count.too_large_path, count.too_large);
      return doc;
    }
    if (count.documents > 1 && text.starts_with("{\"event\":")) {  // results/journal.hpp: one JSON event a line
      diags.error(Location{doc.name_, 1, 1}, "",
                  "this is a drivelab result journal (one JSON event a line), not a protocol: drivelab results "
                  "recover " +
                      doc.name_ + " rebuilds its record");
      return doc;
    }
    if (count.documents > 1) {
      diags.error(location_of(count.second, doc.name_), "",
                  fmt::format("expected one YAML document, found {} (remove the '---' separators)", count.documents));
      return doc;
    }
    doc.root_ = YAML::Load(text);  // the first document (one HandleNextDocument: no LoadAll loop)
    doc.text_ = std::make_shared<const std::string>(text);
    if (!doc.root_.IsDefined()) doc.root_ = YAML::Node(YAML::NodeType::Null);
    doc.loaded_ = true;
  } catch (const YAML::Exception& e) {
    // ParserException (and its DeepRecursion) carry the position of the offending token.
    diags.error(location_of(e.mark, doc.name_), "",
                fmt::format("YAML syntax error: {}{}", detail::printable(e.msg), indentation_hint(text, e.mark.line)));
  }
  return doc;
}

Node Document::root(Diagnostics& diags) const {
  Node root(root_, "", name_, &diags);
  root.text_ = text_;
  return root;
}

// ---- Node ---------------------------------------------------------------------------------------

// NOLINTNEXTLINE(performance-unnecessary-value-param): YAML::Node has no move; its copy shares the data
Node::Node(YAML::Node node, std::string key_path, std::string file, Diagnostics* diags)
    : node_(std::move(node)), path_(std::move(key_path)), file_(std::move(file)), diags_(diags) {}

// IsDefined() is the one yaml-cpp query that is safe on an invalid (zombie) node; every other
// query is guarded by it.
bool Node::defined() const noexcept { return node_.IsDefined(); }
bool Node::is_map() const noexcept { return defined() && node_.IsMap(); }
bool Node::is_sequence() const noexcept { return defined() && node_.IsSequence(); }
bool Node::is_scalar() const noexcept { return defined() && node_.IsScalar(); }
bool Node::is_null() const noexcept { return defined() && node_.IsNull(); }

Location Node::location() const {
  if (fallback_location_ && (!defined() || node_.IsNull())) return *fallback_location_;
  if (!defined()) return Location{file_, 0, 0};
  const YAML::Mark mark = node_.Mark();
  // Every parsed node has a mark. Only nodes built by apply_override lack one, except the root
  // of an empty document, which belongs to the file.
  if (mark.is_null() && !path_.empty()) return Location{"<--set>", 0, 0};
  return location_of(mark, file_);
}

std::string Node::scalar() const { return is_scalar() ? node_.Scalar() : std::string(); }

std::optional<std::string> Node::written() const {
  if (!defined()) return std::nullopt;
  if (const std::string& tag = node_.Tag(); tag.starts_with(detail::kWrittenTag))
    return tag.substr(detail::kWrittenTag.size());
  if (!text_) return std::nullopt;
  const YAML::Mark mark = node_.Mark();
  if (mark.is_null() || mark.pos < 0 || static_cast<std::size_t>(mark.pos) > text_->size()) return std::nullopt;
  const std::string_view rest = std::string_view(*text_).substr(static_cast<std::size_t>(mark.pos));
  return std::string(rest.substr(0, std::min(rest.size(), rest.find_first_of(" \t\r\n,]}#"))));
}

Node Node::child(std::string_view key) const {
  const std::string path = path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  if (is_map()) {
    // Our own scan instead of operator[]: it never throws, ignores non-scalar keys, and returns
    // the first of duplicated keys (the duplicate itself is reported by MapReader).
    for (auto it = node_.begin(); it != node_.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return value_node(it->first, it->second, path);
  }
  Node missing(YAML::Node(YAML::NodeType::Undefined), path, file_, diags_);
  missing.text_ = text_;
  missing.fallback_location_ = location();
  return missing;
}

Node Node::value_node(const YAML::Node& key, const YAML::Node& value, std::string path) const {
  Node out(value, std::move(path), file_, diags_);
  out.text_ = text_;
  if (value.IsNull()) out.fallback_location_ = Node(key, out.path_, file_, diags_).location();
  return out;
}

std::optional<Location> Node::dash_before(const YAML::Node& element) const {
  if (!text_) return std::nullopt;
  const YAML::Mark mark = element.Mark();
  if (mark.is_null() || mark.pos <= 0 || static_cast<std::size_t>(mark.pos) > text_->size()) return std::nullopt;
  const std::string_view before = std::string_view(*text_).substr(0, static_cast<std::size_t>(mark.pos));
  const std::size_t dash = before.find_last_not_of(" \t\r\n");
  if (dash == std::string_view::npos || before[dash] != '-') return std::nullopt;
  const std::size_t newline = before.rfind('\n', dash);  // npos + 1 == 0: the dash is on the first line
  const auto line =
      static_cast<int>(std::count(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(dash), '\n'));
  return Location{file_, line + 1, static_cast<int>(dash - (newline + 1)) + 1};
}

std::vector<Node> Node::elements() const {
  std::vector<Node> out;
  if (!is_sequence()) return out;
  out.reserve(node_.size());
  std::size_t i = 0;
  for (auto it = node_.begin(); it != node_.end(); ++it, ++i) {
    Node& e = out.emplace_back(*it, fmt::format("{}[{}]", path_, i), file_, diags_);
    e.text_ = text_;
    // An empty item (`-` alone): yaml-cpp marks its null at the next token, often the next item's
    // line; it is reported at its dash.
    if (it->IsNull()) e.fallback_location_ = dash_before(*it);
  }
  return out;
}

std::vector<std::pair<std::string, Node>> Node::entries() const {
  std::vector<std::pair<std::string, Node>> out;
  if (!is_map()) return out;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string key = it->first.Scalar();
    out.emplace_back(key, value_node(it->first, it->second, path_.empty() ? key : fmt::format("{}.{}", path_, key)));
  }
  return out;
}

void Node::error(std::string message) const { diags_->error(location(), path_, std::move(message)); }

}  // namespace drivelab::config
