// Document::apply_override: "--set tests[*].warmup=0s". The path is parsed, then walked once
// without writing (so a bad path leaves the document as it was), then walked again to assign.
#include <cctype>
#include <charconv>
#include <variant>

#include <fmt/format.h>

#include "drivelab/config/document.hpp"
#include "text.hpp"

namespace drivelab::config {
namespace {

const char* const kSetFile = "<--set>";

struct AllElements {};
using Segment = std::variant<std::string, std::size_t, AllElements>;  // key, [N], [*]

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "a.b[2].c" into segments; returns an error message or "".
std::string parse_path(std::string_view path, std::vector<Segment>& out) {
  std::size_t i = 0;
  bool expect_key = path.front() != '[';  // a path may start with [N] when the root is a sequence
  while (i < path.size()) {
    if (path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string_view::npos) return fmt::format("missing ']' in path '{}'", path);
      const std::string_view inside = path.substr(i + 1, close - i - 1);
      if (inside == "*") {
        out.emplace_back(AllElements{});
      } else {
        std::size_t index = 0;
        const auto [ptr, ec] = std::from_chars(inside.data(), inside.data() + inside.size(), index);
        if (inside.empty() || ec != std::errc{} || ptr != inside.data() + inside.size())
          return fmt::format("bad index '[{}]' in path '{}' (use [N] with N >= 0, or [*] for every element)", inside,
                             path);
        out.emplace_back(index);
      }
      i = close + 1;
      if (i < path.size() && path[i] != '.' && path[i] != '[')
        return fmt::format("expected '.' or '[' after ']' in path '{}'", path);
      if (i < path.size() && path[i] == '.') {
        ++i;
        expect_key = true;
        if (i == path.size()) return fmt::format("empty key at the end of path '{}'", path);
      } else {
        expect_key = false;
      }
      continue;
    }
    if (!expect_key) return fmt::format("expected '.' or '[' in path '{}'", path);
    const std::size_t end = path.find_first_of(".[", i);
    const std::string_view key = path.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
    if (trim(key).empty()) return fmt::format("empty key in path '{}'", path);
    out.emplace_back(std::string(trim(key)));
    i = end == std::string_view::npos ? path.size() : end;
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) return fmt::format("empty key at the end of path '{}'", path);
    } else {
      expect_key = false;
    }
  }
  return {};
}

std::string append(const std::string& path, const Segment& seg, std::size_t index = 0) {
  if (const auto* key = std::get_if<std::string>(&seg)) return path.empty() ? *key : path + "." + *key;
  if (const auto* n = std::get_if<std::size_t>(&seg)) return fmt::format("{}[{}]", path, *n);
  return fmt::format("{}[{}]", path, index);
}

// A copy of `n` made of fresh nodes: no marks (so it reports at "<--set>") and no data shared
// with the parsed value (so "[*]" does not alias one node into every element).
YAML::Node fresh_copy(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: {
      YAML::Node out(n.Scalar());
      out.SetTag(n.Tag());
      return out;
    }
    case YAML::NodeType::Sequence: {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const YAML::Node& e : n) out.push_back(fresh_copy(e));
      return out;
    }
    case YAML::NodeType::Map: {
      YAML::Node out(YAML::NodeType::Map);
      for (auto it = n.begin(); it != n.end(); ++it) out.force_insert(fresh_copy(it->first), fresh_copy(it->second));
      return out;
    }
    case YAML::NodeType::Null: {
      YAML::Node out(YAML::NodeType::Null);
      out.SetTag(n.Tag());  // the spelling of an override's null (kWrittenTag)
      return out;
    }
    case YAML::NodeType::Undefined: break;
  }
  return YAML::Node(YAML::NodeType::Null);
}

YAML::Node find_key(const YAML::Node& map, const std::string& key) {
  if (map.IsDefined() && map.IsMap())
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node(YAML::NodeType::Undefined);
}

class Assigner {
 public:
  Assigner(const std::vector<Segment>& segments, const YAML::Node& value) : segments_(segments), value_(value) {}

  // Walks from `cur` (whose path is `path`) through segments_[i..]; writes only when `apply`.
  // Returns an error message, "" on success.
  std::string walk(YAML::Node cur, std::size_t i, const std::string& path, bool apply) const {
    const Segment& seg = segments_[i];
    const bool last = i + 1 == segments_.size();
    const std::string where = path.empty() ? "the document root" : "'" + path + "'";
    const bool absent = !cur.IsDefined() || cur.IsNull();
    if (const auto* key = std::get_if<std::string>(&seg)) {
      if (cur.IsDefined() && cur.IsScalar())
        return fmt::format("cannot set key '{}': {} is a scalar ({}), not a mapping", *key, where,
                           detail::quote(cur.Scalar()));
      if (cur.IsDefined() && cur.IsSequence())
        return fmt::format("cannot set key '{}': {} is a sequence, not a mapping (use [N] or [*])", *key, where);
      if (last) {
        if (apply) cur[*key] = fresh_copy(value_);
        return {};
      }
      // Missing keys become mappings (non-const operator[] creates them on assignment).
      YAML::Node next = apply ? cur[*key] : find_key(cur, *key);
      return walk(next, i + 1, append(path, seg), apply);
    }
    if (absent) {
      const auto* index = std::get_if<std::size_t>(&seg);
      return fmt::format("{}: {} {}", index ? fmt::format("index {} out of range", *index) : "cannot apply [*]", where,
                         cur.IsDefined() ? "is empty" : "does not exist");
    }
    if (!cur.IsSequence())
      return fmt::format("cannot index {}: it is {}, not a sequence", where, detail::describe(cur));
    if (const auto* index = std::get_if<std::size_t>(&seg)) {
      if (*index >= cur.size())
        return fmt::format("index {} out of range: {} has {} element{}", *index, where, cur.size(),
                           cur.size() == 1 ? "" : "s");
      return step(cur, *index, i, path, last, apply);
    }
    for (std::size_t k = 0; k < cur.size(); ++k)  // [*]
      if (std::string error = step(cur, k, i, path, last, apply); !error.empty()) return error;
    return {};
  }

 private:
  std::string step(YAML::Node& seq, std::size_t k, std::size_t i, const std::string& path, bool last,
                   bool apply) const {
    if (last) {
      if (apply) seq[k] = fresh_copy(value_);
      return {};
    }
    return walk(seq[k], i + 1, append(path, segments_[i], k), apply);
  }

  const std::vector<Segment>& segments_;
  const YAML::Node& value_;
};

}  // namespace

void Document::apply_override(std::string_view assignment, Diagnostics& diags) {
  const auto report = [&](std::string path, std::string message) {
    diags.error(Location{kSetFile, 0, 0}, std::move(path), std::move(message));
  };
  const std::size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    report("", fmt::format("{} is not an override: expected key.path=value (e.g. tests[0].duration=10s)",
                           detail::quote(assignment)));
    return;
  }
  const std::string path(trim(assignment.substr(0, eq)));
  const std::string value_text(assignment.substr(eq + 1));
  if (path.empty()) {
    report("",
           fmt::format("{} has an empty key path before '=' (e.g. tests[0].duration=10s)", detail::quote(assignment)));
    return;
  }
  std::vector<Segment> segments;
  if (std::string error = parse_path(path, segments); !error.empty()) {
    report(path, error);
    return;
  }
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
    if (!value.IsDefined()) value = YAML::Node(YAML::NodeType::Null);  // `key=`: an empty value
    if (value.IsNull()) value.SetTag(std::string(detail::kWrittenTag) + std::string(trim(value_text)));
  } catch (const YAML::Exception& e) {
    report(path, fmt::format("value {} is not valid YAML: {}", detail::quote(value_text), e.msg));
    return;
  }
  // A document that failed to load has its error reported already; still check the path syntax
  // above, but do not build a document out of overrides alone.
  if (!loaded_) return;
  if (!root_.IsDefined() || root_.IsNull()) {
    if (!std::holds_alternative<std::string>(segments.front())) {
      report(path, "index out of range: the document is empty");
      return;
    }
    root_ = YAML::Node(YAML::NodeType::Map);
  }
  const Assigner assigner(segments, value);
  if (std::string error = assigner.walk(root_, 0, "", /*apply=*/false); !error.empty()) {
    report(path, error);
    return;
  }
  (void)assigner.walk(root_, 0, "", /*apply=*/true);
}

}  // namespace drivelab::config
