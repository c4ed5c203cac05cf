// Sizes and durations as users type them in protocols and on the command line (fio conventions:
// "4k" = 4096, "MB" in a size is binary).
#include "drivelab/core/units.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace drivelab {
namespace {

using std::chrono::nanoseconds;
using namespace std::chrono_literals;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
constexpr std::uint64_t kTiB = kGiB * 1024;

// The message must say what was wrong, so users can fix their protocol file.
void expect_size_error(const std::string& text, const std::string& fragment) {
  try {
    const std::uint64_t v = parse_size(text);
    ADD_FAILURE() << "'" << text << "' parsed as " << v;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "'" << text << "': " << e.what();
  }
}

void expect_duration_error(const std::string& text, const std::string& fragment) {
  try {
    const auto v = parse_duration(text);
    ADD_FAILURE() << "'" << text << "' parsed as " << v.count() << " ns";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "'" << text << "': " << e.what();
  }
}

TEST(ParseSize, BinarySuffixesAsFioReadsThem) {
  EXPECT_EQ(parse_size("4k"), 4 * kKiB);
  EXPECT_EQ(parse_size("4K"), 4 * kKiB);
  EXPECT_EQ(parse_size("4kb"), 4 * kKiB);
  EXPECT_EQ(parse_size("4KiB"), 4 * kKiB);
  EXPECT_EQ(parse_size("64KiB"), 64 * kKiB);
  EXPECT_EQ(parse_size("128m"), 128 * kMiB);
  EXPECT_EQ(parse_size("1MB"), kMiB);  // binary in sizes (fio), unlike MB/s
  EXPECT_EQ(parse_size("2GiB"), 2 * kGiB);
  EXPECT_EQ(parse_size("1g"), kGiB);
  EXPECT_EQ(parse_size("3t"), 3 * kTiB);
  EXPECT_EQ(parse_size("1PiB"), kTiB * 1024);
  EXPECT_EQ(parse_size(" 4 KiB "), 4 * kKiB);  // spaces around and before the unit
}

TEST(ParseSize, PlainBytes) {
  EXPECT_EQ(parse_size("512"), 512u);
  EXPECT_EQ(parse_size("512b"), 512u);
  EXPECT_EQ(parse_size("512B"), 512u);
  EXPECT_EQ(parse_size("0"), 0u);
  // Integers are exact beyond 2^53, where a double would round.
  EXPECT_EQ(parse_size("9007199254740993"), 9007199254740993u);
  EXPECT_EQ(parse_size("18446744073709551615"), 18446744073709551615u);
  EXPECT_EQ(parse_size("16383p"), 16383 * kTiB * 1024);
}

TEST(ParseSize, FractionsThatAreWholeBytes) {
  EXPECT_EQ(parse_size("1.5k"), 1536u);
  EXPECT_EQ(parse_size("0.5m"), 512 * kKiB);
  EXPECT_EQ(parse_size("2.25GiB"), 2 * kGiB + kGiB / 4);
  EXPECT_EQ(parse_size("512.0"), 512u);
  expect_size_error("0.5", "whole number of bytes");
  expect_size_error("1.5b", "whole number of bytes");
  expect_size_error("0.1k", "whole number of bytes");
}

TEST(ParseSize, RejectsBadInput) {
  expect_size_error("", "empty");
  expect_size_error("   ", "empty");
  expect_size_error("4x", "unknown size unit 'x'");
  expect_size_error("4kk", "unknown size unit");
  expect_size_error("4 kilobytes", "unknown size unit");
  expect_size_error("-4k", "expected a number");
  expect_size_error("k", "expected a number");
  expect_size_error("1e3", "unknown size unit");
  expect_size_error("1.2.3k", "not a size");
  expect_size_error(".", "not a size");
}

TEST(ParseSize, RejectsOverflow) {
  expect_size_error("18446744073709551616", "too large");  // 2^64
  expect_size_error("16384p", "too large");                // 2^64 exactly
  expect_size_error("99999999999999999999999", "too large");
  expect_size_error("17179869184g", "too large");
  expect_size_error("20000000000000000000.5", "too large");
}

TEST(ParseDuration, Units) {
  EXPECT_EQ(parse_duration("30s"), 30s);
  EXPECT_EQ(parse_duration("250ms"), 250ms);
  EXPECT_EQ(parse_duration("250us"), 250us);
  EXPECT_EQ(parse_duration("100ns"), 100ns);
  EXPECT_EQ(parse_duration("5m"), 5min);
  EXPECT_EQ(parse_duration("5min"), 5min);
  EXPECT_EQ(parse_duration("2h"), 2h);
  EXPECT_EQ(parse_duration("2H"), 2h);
  EXPECT_EQ(parse_duration("10sec"), 10s);
  EXPECT_EQ(parse_duration("30 s"), 30s);
}

TEST(ParseDuration, CompoundFractionalAndBare) {
  EXPECT_EQ(parse_duration("1h30m"), 90min);
  EXPECT_EQ(parse_duration("1h 30m"), 90min);
  EXPECT_EQ(parse_duration("2h30m15s"), 2h + 30min + 15s);
  EXPECT_EQ(parse_duration("1m500ms"), 60s + 500ms);
  EXPECT_EQ(parse_duration("1.5s"), 1500ms);
  EXPECT_EQ(parse_duration("0.25ms"), 250us);
  EXPECT_EQ(parse_duration("10"), 10s);  // a bare number is seconds (fio's runtime=10)
  EXPECT_EQ(parse_duration("0"), 0ns);
  EXPECT_EQ(parse_duration("2.5"), 2500ms);
}

TEST(ParseDuration, RejectsBadInput) {
  expect_duration_error("", "empty");
  expect_duration_error("  ", "empty");
  expect_duration_error("10x", "unknown duration unit 'x'");
  expect_duration_error("10 days", "unknown duration unit 'days'");
  expect_duration_error("-1s", "not a duration");
  expect_duration_error("s", "not a duration");
  expect_duration_error("1h30", "a unit is needed");  // ambiguous: 30 what?
  expect_duration_error("1.2.3s", "not a duration");
  expect_duration_error("1s-", "not a duration");
  expect_duration_error("300y", "unknown duration unit");
  expect_duration_error("3000000h", "out of range");  // > 2^63 ns (292 years)
}

TEST(FormatSize, ExactBinaryUnitsElseOneDecimal) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(64 * kKiB), "64 KiB");
  EXPECT_EQ(format_size(2 * kGiB), "2 GiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(1536 * kMiB), "1.5 GiB");
  EXPECT_EQ(format_size(kGiB + 1), "1.0 GiB");
  EXPECT_EQ(format_size(kMiB - 1), "1.0 MiB");  // not "1024.0 KiB"
  EXPECT_EQ(format_size(3 * kTiB * 1024), "3 PiB");
  EXPECT_EQ(format_size(5000 * kTiB * 1024), "5000 PiB");  // PiB is the largest unit
}

TEST(FormatDuration, ReadableForms) {
  EXPECT_EQ(format_duration(0ns), "0s");
  EXPECT_EQ(format_duration(500ns), "500ns");
  EXPECT_EQ(format_duration(1500ns), "1.5us");
  EXPECT_EQ(format_duration(250ms), "250ms");
  EXPECT_EQ(format_duration(1500ms), "1.5s");
  EXPECT_EQ(format_duration(30s), "30s");
  EXPECT_EQ(format_duration(150s), "2m30s");
  EXPECT_EQ(format_duration(1h), "1h");
  EXPECT_EQ(format_duration(90min), "1h30m");
  EXPECT_EQ(format_duration(3h + 5s), "3h5s");
  EXPECT_EQ(format_duration(-5ms), "-5ms");
}

TEST(FormatDuration, ParsesBack) {
  for (nanoseconds d :
       {nanoseconds(0), nanoseconds(999), nanoseconds(1500), nanoseconds(250'000), nanoseconds(1'500'000'000),
        nanoseconds(30'000'000'000), nanoseconds(5'400'000'000'000), nanoseconds(3'600'000'000'000 * 24)}) {
    EXPECT_EQ(parse_duration(format_duration(d)), d) << format_duration(d);
  }
}

TEST(FormatSize, ParsesBackWhenExact) {
  for (std::uint64_t b : {std::uint64_t{0}, std::uint64_t{512}, 4 * kKiB, 1536 * kMiB, 7 * kTiB}) {
    std::string text = format_size(b);
    EXPECT_EQ(parse_size(text), b) << text;
  }
}

TEST(Align, DownAndUpToAnyPositiveMultiple) {
  EXPECT_EQ(align_down(4095, 4096), 0u);
  EXPECT_EQ(align_down(4096, 4096), 4096u);
  EXPECT_EQ(align_down(10'000, 4096), 8192u);
  EXPECT_EQ(align_up(0, 4096), 0u);
  EXPECT_EQ(align_up(1, 4096), 4096u);
  EXPECT_EQ(align_up(4096, 4096), 4096u);
  EXPECT_EQ(align_up(4097, 512), 4608u);
  // Not only powers of two: a transfer size of 24 bytes, 3 x 1000 ns.
  EXPECT_EQ(align_up(25, 24), 48u);
  EXPECT_EQ(align_down(2999, 1000), 2000u);
  EXPECT_EQ(align_up(7, 1), 7u);
  // Near the top of 64 bits, align_down never overflows.
  EXPECT_EQ(align_down(~0ull, 4096), ~0ull - 4095);
  static_assert(align_up(513, 512) == 1024);
}

}  // namespace
}  // namespace drivelab
