#pragma once
/// \file names.hpp
/// An enum's words, written once: one table of {word, value} pairs beside the enum serves both
/// printing (`to_string`: the record's effective config, messages) and decoding (config::MapReader::
/// choice, whose error lists the words in table order), so the word a record prints is always the
/// word a protocol accepts.
///
///     enum class Rw { randread, randwrite, read, write };
///     inline constexpr EnumNames<Rw, 4> kRwNames{{
///         {"randread", Rw::randread}, {"randwrite", Rw::randwrite}, {"read", Rw::read}, {"write", Rw::write}}};
///     std::string_view to_string(Rw rw) noexcept { return name_of(kRwNames, rw); }
///     r.choice("rw", job.rw, kRwNames);
///
/// A table may list one value under several words (an alias); name_of returns the first.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace drivelab {

/// The words of enum E: {word, value} in the order a choice error lists them.
template <class E, std::size_t N>
using EnumNames = std::array<std::pair<std::string_view, E>, N>;

/// The first word of `value` in `names`; "?" for a value the table does not list (a cast from an
/// out-of-range integer), so a printer never throws.
template <class E, std::size_t N>
constexpr std::string_view name_of(const EnumNames<E, N>& names, E value) noexcept {
  for (const auto& [word, v] : names)
    if (v == value) return word;
  return "?";
}

/// The value of `word` in `names` (exact, case-sensitive match, as protocol keys are), or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> value_of(const EnumNames<E, N>& names, std::string_view word) noexcept {
  for (const auto& [w, v] : names)
    if (w == word) return v;
  return std::nullopt;
}

}  // namespace drivelab
