#pragma once
/// \file engine_key.hpp
/// The `engine:` key that every kind doing block I/O shares (io, vdbench, replay, vdi): one of
/// io::engine_names() ("io_uring", "libaio", "psync", "null"), decoded once here so the kinds
/// accept the same words with the same message ("engine must be one of: io_uring, libaio, psync,
/// null; found 'aio'", at the key). `engine: null` is YAML's null value, not the word "null": it
/// selects the null engine rather than being an empty value; but YAML's other spellings of null,
/// `engine: ~` and an empty `engine:` are refused, in a file and in an override alike (`--set
/// ...engine=` with an unset shell variable): config::Node::written tells the spellings apart, so
/// that a value left out by mistake never runs the engine that does no I/O. Whether the engine is compiled in
/// and usable here is not decided while decoding (validate runs anywhere): io::make_engine says
/// so when the test starts (NotCompiledIn, EnvironmentError).
#include <string>

#include "drivelab/config/map_reader.hpp"

namespace drivelab::runner {

/// Decodes `engine` from the mapping `r` reads; `engine` keeps its value when the key is absent
/// or invalid (the error is recorded in r's Diagnostics).
void decode_engine(config::MapReader& r, std::string& engine);

}  // namespace drivelab::runner
