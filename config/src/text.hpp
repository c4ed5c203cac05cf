#pragma once
/// \file text.hpp (private to drivelab_config)
/// Small text helpers shared by the decoder sources: how a found value is described in a message,
/// and the "did you mean" suggestion for unknown keys and words.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace drivelab::config::detail {

/// How a node is named after "found": "a mapping", "a sequence", "an empty value", "nothing" or
/// the quoted scalar ('abc'), shortened to one line of at most 40 characters.
std::string describe(const YAML::Node& node);

/// `text` with control characters and bytes that are not well-formed UTF-8 written as \xNN, and C1
/// and bidirectional control characters as \uNNNN, so a message never puts raw binary or terminal
/// controls on a terminal (a file of random bytes, a binary key).
std::string printable(std::string_view text);

/// `text` quoted for a message, cut to one line of at most 40 bytes; control characters and bytes
/// that are not well-formed UTF-8 are written as \xNN.
std::string quote(std::string_view text);

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, so "xfersiez"
/// is 1 away from "xfersize"), compared case-insensitively.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The known word closest to `word`, if it is close enough to be a plausible typo: edit distance
/// <= 2 (and smaller than the word itself, so "bs" does not suggest "rw"), or one word a prefix
/// of the other. Ties go to the earliest in `known`.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& known);

/// "a, b, c".
std::string join(const std::vector<std::string>& words);

/// The tag an override's null value carries, followed by what it was written as ("" for
/// `key=`, "~", "null"): an override's nodes have no place in the document's text, so
/// Node::written reads the spelling from here (Document::apply_override sets it).
inline constexpr std::string_view kWrittenTag = "!drivelab-written:";

}  // namespace drivelab::config::detail
