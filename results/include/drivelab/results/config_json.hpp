#pragma once
/// \file config_json.hpp
/// How a test's effective configuration (its record's `config`, Emulator::effective_config) writes
/// a value so that it decodes again to the same value: written once for every kind's to_json.
#include <cstdint>
#include <string>

#include "drivelab/core/units.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// A size in bytes: format_size's text ("2GiB", "4KiB") when that is exact, else the number of
/// bytes; either decodes (config::MapReader::size) to the same number.
inline Json size_json(std::uint64_t bytes) {
  std::string text = format_size(bytes);
  if (text.find('.') != std::string::npos) return bytes;
  return text;
}

}  // namespace drivelab::results
