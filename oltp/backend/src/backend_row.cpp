// option_value, accepts_word (backend_row.hpp).
#include "drivelab/oltp/backend/backend_row.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace drivelab::oltp {

OptionValue option_value(std::span<const OptionKey> keys, const OptionValues& values, std::string_view name) {
  if (const auto it = values.find(name); it != values.end()) return it->second;
  for (const OptionKey& k : keys)
    if (k.name == name)
      return {.word = std::string(k.default_word), .bytes = k.default_bytes, .duration = k.default_duration};
  throw InternalError(fmt::format("backend key '{}' is not declared by its backend", name));
}

bool accepts_word(const OptionKey& key, std::string_view word) noexcept {
  const auto same = [&](std::string_view w) {
    if (!key.any_case) return w == word;
    return w.size() == word.size() && std::equal(w.begin(), w.end(), word.begin(), [](char a, char b) {
             return std::toupper(static_cast<unsigned char>(a)) == std::toupper(static_cast<unsigned char>(b));
           });
  };
  return std::any_of(key.words.begin(), key.words.end(), same);
}

}  // namespace drivelab::oltp
