// /sys/block/<dev>/stat parsing and iostat -x's figures on hand-computed samples, counter wrap
// as iostat takes it.
#include "drivelab/telemetry/block_stats.hpp"

#include <gtest/gtest.h>

#include "drivelab/core/errors.hpp"
#include "temp_dir.hpp"

namespace drivelab::telemetry {
namespace {

TEST(BlockStat, ParsesElevenFifteenAndSeventeenFields) {
  // The iostats.rst example line of nvme0n1 (17 fields).
  const BlockStat s = parse_block_stat(
      "  255999      814 12369153    47919   996858       81 36123056   426009        0   301809   580491        0"
      "        0        0        0    60605   106562\n",
      "stat");
  EXPECT_EQ(s.fields, 17);
  EXPECT_EQ(s.read_ios, 255999u);
  EXPECT_EQ(s.read_merges, 814u);
  EXPECT_EQ(s.read_sectors, 12369153u);
  EXPECT_EQ(s.read_ms, 47919u);
  EXPECT_EQ(s.write_ios, 996858u);
  EXPECT_EQ(s.write_sectors, 36123056u);
  EXPECT_EQ(s.write_ms, 426009u);
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.io_ticks_ms, 301809u);
  EXPECT_EQ(s.time_in_queue_ms, 580491u);
  EXPECT_EQ(s.flush_ios, 60605u);
  EXPECT_EQ(s.flush_ms, 106562u);
  EXPECT_TRUE(s.has_discards() && s.has_flushes());
  const BlockStat old = parse_block_stat("1 2 3 4 5 6 7 8 9 10 11", "stat");
  EXPECT_EQ(old.fields, 11);
  EXPECT_FALSE(old.has_discards());
  EXPECT_EQ(old.time_in_queue_ms, 11u);
  const BlockStat mid = parse_block_stat("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n", "stat");
  EXPECT_TRUE(mid.has_discards());
  EXPECT_FALSE(mid.has_flushes());
  EXPECT_EQ(mid.discard_ms, 15u);
}

TEST(BlockStat, BadTextNamesTheFileAndTheField) {
  try {
    parse_block_stat("1 2 x3 4 5 6 7 8 9 10 11", "/sys/block/sdq/stat");
    FAIL() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_STREQ(e.what(), "/sys/block/sdq/stat: field 3 is 'x3', not an unsigned number");
  }
  try {
    parse_block_stat("1 2 3 4 5 6 7 8 9 10 11 12", "/sys/block/sdq/stat");
    FAIL() << "no error";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("12 fields; the kernel writes 11, 15 or 17"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_block_stat("-1 2 3 4 5 6 7 8 9 10 11", "s"), EnvironmentError);
  EXPECT_FALSE(read_block_stat("/nonexistent/stat"));
  test_support::TempDir dir;
  const auto s = read_block_stat(dir.write("stat", "1 2 3 4 5 6 7 8 9 10 11\n"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->write_ios, 5u);
}

// Two samples 2 s apart, every delta chosen so each iostat -x column is a round number:
//   reads +400 (merges +100, sectors +6400, ms +800), writes +200 (+50, +12800, +1000),
//   io_ticks +1500, time_in_queue +3000, discards +4 (+4, +8192, +20), flushes +10 (ms +5).
TEST(BlockRates, EveryIostatColumnByHand) {
  const BlockStat a = parse_block_stat("1000 100 16000 2000 500 50 40000 5000 0 10000 20000 10 0 2048 30 5 10", "a");
  const BlockStat b = parse_block_stat("1400 200 22400 2800 700 100 52800 6000 3 11500 23000 14 4 10240 50 15 15", "b");
  const BlockRates r = block_rates(a, b, 2.0);
  EXPECT_EQ(r.reads, 400u);
  EXPECT_EQ(r.writes, 200u);
  EXPECT_EQ(r.read_bytes, 6400u * 512);
  EXPECT_EQ(r.write_bytes, 12800u * 512);
  EXPECT_DOUBLE_EQ(r.r_s, 200.0);
  EXPECT_DOUBLE_EQ(r.w_s, 100.0);
  EXPECT_DOUBLE_EQ(r.d_s, 2.0);
  EXPECT_DOUBLE_EQ(r.f_s, 5.0);
  EXPECT_DOUBLE_EQ(r.rMB_s, 1.5625);  // 6400 sectors / 2048 / 2 s
  EXPECT_DOUBLE_EQ(r.wMB_s, 3.125);
  EXPECT_DOUBLE_EQ(r.dMB_s, 2.0);
  EXPECT_DOUBLE_EQ(r.rrqm_s, 50.0);
  EXPECT_DOUBLE_EQ(r.wrqm_s, 25.0);
  EXPECT_DOUBLE_EQ(r.drqm_s, 2.0);
  EXPECT_DOUBLE_EQ(r.pct_rrqm, 20.0);  // 100 / (100 + 400)
  EXPECT_DOUBLE_EQ(r.pct_wrqm, 20.0);
  EXPECT_DOUBLE_EQ(r.pct_drqm, 50.0);
  EXPECT_DOUBLE_EQ(r.r_await, 2.0);  // 800 ms / 400 reads
  EXPECT_DOUBLE_EQ(r.w_await, 5.0);
  EXPECT_DOUBLE_EQ(r.d_await, 5.0);
  EXPECT_DOUBLE_EQ(r.f_await, 0.5);
  EXPECT_DOUBLE_EQ(r.rareq_sz, 8.0);  // 6400 sectors / 400 / 2 = 8 kB
  EXPECT_DOUBLE_EQ(r.wareq_sz, 32.0);
  EXPECT_DOUBLE_EQ(r.dareq_sz, 1024.0);
  EXPECT_DOUBLE_EQ(r.aqu_sz, 1.5);     // 3000 ms / 2000 ms
  EXPECT_DOUBLE_EQ(r.util_pct, 75.0);  // 1500 ms / 2000 ms
  EXPECT_TRUE(r.has_discards && r.has_flushes);
}

TEST(BlockRates, NoIoNoDivisionAndOldKernelsHaveNoDiscards) {
  const BlockStat a = parse_block_stat("5 0 40 7 0 0 0 0 0 9 9", "a");
  const BlockRates idle = block_rates(a, a, 1.0);
  EXPECT_EQ(idle.r_await, 0.0);
  EXPECT_EQ(idle.rareq_sz, 0.0);
  EXPECT_EQ(idle.pct_rrqm, 0.0);
  EXPECT_EQ(idle.util_pct, 0.0);
  const BlockStat b = parse_block_stat("15 0 120 27 0 0 0 0 0 19 29", "b");
  const BlockRates r = block_rates(a, b, 0.0);
  EXPECT_FALSE(r.has_discards);
  EXPECT_EQ(r.r_s, 0.0) << "no interval: no rate";
  EXPECT_DOUBLE_EQ(r.r_await, 2.0) << "an average per request needs no interval";
}

TEST(BlockRates, CountersWrapAsIostatTakesThem) {
  // The ms fields are 32-bit: 4294967000 -> 200 is +496.
  EXPECT_EQ(counter_delta(4294967000ULL, 200, 32), 496u);
  EXPECT_EQ(counter_delta(100, 250, 32), 150u);
  // A 32-bit kernel's unsigned long (sectors, ios) wraps at 2^32 too.
  EXPECT_EQ(counter_delta(4294967000ULL, 400, 64), 696u);
  // A 64-bit count wraps at 2^64.
  EXPECT_EQ(counter_delta(0xfffffffffffffff6ULL, 5, 64), 15u);
  EXPECT_EQ(counter_delta(1ULL << 40, (1ULL << 40) + 5, 64), 5u);
  const BlockStat a = parse_block_stat("10 0 4294967000 4294967000 0 0 0 0 0 4294966000 0", "a");
  const BlockStat b = parse_block_stat("20 0 400 200 0 0 0 0 0 704 0", "b");
  const BlockRates r = block_rates(a, b, 2.0);
  EXPECT_EQ(r.reads, 10u);
  EXPECT_EQ(r.read_bytes, 696u * 512);
  EXPECT_DOUBLE_EQ(r.r_await, 49.6);    // 496 ms / 10
  EXPECT_DOUBLE_EQ(r.util_pct, 100.0);  // 2000 ms over 2 s
}

}  // namespace
}  // namespace drivelab::telemetry
