// The trace readers on hand-written samples of every format (tests/data/traces/README.md cites
// each layout's source): detection, units, skipped events, and "file:line: reason" errors.
#include <gtest/gtest.h>

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/trace/native.hpp"
#include "drivelab/trace/readers.hpp"
#include "temp_dir.hpp"
#include "input.hpp"
#include "test_util.hpp"

namespace drivelab::trace {
namespace {

using testing::read_all;
using testing::sample;

std::vector<TraceIo> read_sample(const std::string& name, TraceFormat format = TraceFormat::automatic,
                                 const TraceReadOptions& options = {}) {
  auto source = open_trace(sample(name), format, options);
  return read_all(*source);
}

std::size_t count_op(const std::vector<TraceIo>& ios, TraceOp op) {
  std::size_t n = 0;
  for (const TraceIo& io : ios) n += io.op == op ? 1 : 0;
  return n;
}

/// The message of the TraceFormatError that reading `text` as `format` throws.
std::string error_of(const std::string& text, TraceFormat format) {
  try {
    auto source = detail::open_trace_memory(text, "bad.trace", format);
    TraceIo io;
    while (source->next(io)) {
    }
  } catch (const TraceFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TraceFormats, NamesRoundTripAndUnknownNamesAreConfigErrors) {
  EXPECT_EQ(parse_trace_format(to_string(TraceFormat::automatic)), TraceFormat::automatic);
  for (const TraceFormatInfo* row : trace_formats()) {
    const TraceFormat f(*row);
    EXPECT_EQ(parse_trace_format(to_string(f)), f) << row->name;
    std::string underscored(row->name);
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    EXPECT_EQ(parse_trace_format(underscored), f) << underscored;
  }
  EXPECT_THROW((void)parse_trace_format("disksim"), ConfigError);
}

// The 5-column form is MQSim's ASCII trace: its canonical name says so, and the old name still
// opens it (protocols that say `format: umass` keep working).
TEST(TraceFormats, UmassIsAnAliasOfMqsim) {
  EXPECT_EQ(to_string(parse_trace_format("mqsim")), "mqsim");
  EXPECT_EQ(parse_trace_format("umass"), parse_trace_format("mqsim"));
  try {
    (void)parse_trace_format("nope");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mqsim, spc"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("umass"), std::string::npos) << e.what();  // accepted, not advertised
  }
  EXPECT_EQ(parse_time_unit("NANOSECOND"), TimeUnit::ns);
  EXPECT_EQ(parse_time_unit("us"), TimeUnit::us);
  EXPECT_EQ(parse_time_unit("µs"), TimeUnit::us);
  EXPECT_EQ(parse_time_unit("PicoSecond"), TimeUnit::ps);
  EXPECT_THROW((void)parse_time_unit("fortnight"), ConfigError);
  EXPECT_EQ(parse_fio_wait("relative_us"), FioWait::relative_us);
  EXPECT_THROW((void)parse_fio_wait("ms"), ConfigError);
}

TEST(TraceFormats, DetectsEverySampleFromItsContent) {
  // Every row's sample file (tests/data/traces), detected from its content alone.
  for (const TraceFormatInfo* row : trace_formats()) {
    if (row->seed_file.empty()) continue;
    EXPECT_EQ(detect_trace_format(sample(std::string(row->seed_file))), TraceFormat(*row)) << row->seed_file;
  }
  // The shared real traces, when they are beside this checkout.
  if (std::filesystem::exists(testing::shared_trace("cloudphysics_vm_vscsi.csv"))) {
    EXPECT_EQ(detect_trace_format(testing::shared_trace("cloudphysics_vm_vscsi.csv")),
              parse_trace_format("cloudphysics-csv"));
  }
  if (std::filesystem::exists(testing::shared_trace("umass_tpcc_small.trace"))) {
    EXPECT_EQ(detect_trace_format(testing::shared_trace("umass_tpcc_small.trace")), parse_trace_format("mqsim"));
  }
  // Without a header the CSV formats are told apart by their fields.
  EXPECT_EQ(detail::detect_format_from_head("1,5633898,2a,512,42932745\n", 26), parse_trace_format("cloudphysics-csv"));
  const auto detect = [](const std::string& text) { return detail::detect_format_from_head(text, text.size()); };
  EXPECT_EQ(detect("1456135200.013118000,0.000806000,R,4,899056122368,131072\n"), parse_trace_format("systor17"));
  EXPECT_EQ(detect("1456135200.013118000,,,4,899056122368,131072\n"), parse_trace_format("systor17"));
  // SYSTOR's six fields do not take an SPC line with one trailing field, nor MSR's seven.
  EXPECT_EQ(detect("0,20941264,8192,W,0.551706,7\n"), parse_trace_format("spc"));
  EXPECT_EQ(detect("128166372003061629,mds,1,Read,3154506752,4096,2301\n"), parse_trace_format("msr-cambridge"));
  EXPECT_EQ(detect("1.5,0.1,X,4,0,4096\n"), TraceFormat::automatic);
  EXPECT_EQ(detail::detect_format_from_head("hello world\n", 12), TraceFormat::automatic);
}

TEST(TraceFormats, UnrecognisedContentNamesTheFile) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  testing::write_file(dir / "x.txt", "this is not a trace\n");
  try {
    (void)open_trace(dir / "x.txt");
    FAIL() << "expected TraceFormatError";
  } catch (const TraceFormatError& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir / "x.txt").string() + ":1: unrecognised trace format", 0), 0u)
        << e.what();
  }
  EXPECT_THROW((void)open_trace(dir / "missing.csv"), EnvironmentError);
}

TEST(FioIolog, Version2WaitIsFiosAbsoluteMillisecondsAndSyncTrimAreKept) {
  auto source = open_trace(sample("fio_v2.iolog"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(ios[0].op, TraceOp::read);
  EXPECT_EQ(ios[0].size_bytes, 4096u);
  EXPECT_EQ(ios[1].op, TraceOp::write);
  EXPECT_EQ(ios[1].offset_bytes, 8192u);
  EXPECT_EQ(ios[1].time_ns, 1'000'000'000);  // wait 1000: until 1000 ms after the start, as fio 3.33 does
  EXPECT_EQ(ios[2].op, TraceOp::flush);
  EXPECT_EQ(ios[3].op, TraceOp::discard);
  EXPECT_EQ(ios[3].offset_bytes, 1048576u);
  EXPECT_EQ(ios[3].size_bytes, 65536u);
  EXPECT_EQ(source->devices(), std::vector<std::string>{"/dev/sdb"});
  EXPECT_EQ(source->clock().unit, "ms (wait, since the start)");
  EXPECT_FALSE(source->clock().given);
}

// fio 3.33 sleeps until `wait N` ms after the start, so a wait earlier than the clock waits not at
// all (fio issues 247, 756; this machine: waits of 1500, 1000, 2000 took 2.0 s); the HOWTO's
// reading, N µs after the previous wait, is an option.
TEST(FioIolog, Version2WaitsAreAbsoluteUnlessTheHowtoReadingIsAsked) {
  const std::string log =
      "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf wait 1500 0\nf read 1 4096\nf wait 1000 0\n"
      "f read 2 4096\nf wait 2000 0\nf read 3 4096\nf wait 50 0\nf read 4 4096\n";
  auto fio = detail::open_trace_memory(log, "w.iolog", parse_trace_format("fio-iolog-v2"));
  std::vector<std::int64_t> times;
  for (const TraceIo& io : read_all(*fio)) times.push_back(io.time_ns);
  EXPECT_EQ(times, (std::vector<std::int64_t>{0, 1'500'000'000, 1'500'000'000, 2'000'000'000, 2'000'000'000}));
  TraceReadOptions howto;
  howto.fio_wait = FioWait::relative_us;
  auto relative = detail::open_trace_memory(log, "w.iolog", parse_trace_format("fio-iolog-v2"), howto);
  times.clear();
  for (const TraceIo& io : read_all(*relative)) times.push_back(io.time_ns);
  EXPECT_EQ(times, (std::vector<std::int64_t>{0, 1'500'000, 2'500'000, 4'500'000, 4'500'000}));  // 50 < 100: dropped
  EXPECT_TRUE(relative->clock().given);
}

TEST(FioIolog, Version3TimestampsAreMicroseconds) {
  const auto ios = read_sample("fio_v3.iolog");
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(ios[0].time_ns, 0);
  EXPECT_EQ(ios[1].time_ns, 1'000'000);
  EXPECT_EQ(ios[2].time_ns, 2'000'000);
  EXPECT_EQ(ios[2].size_bytes, 16384u);
  EXPECT_EQ(ios[3].op, TraceOp::flush);
  EXPECT_EQ(ios[3].time_ns, 2'400'000);
}

TEST(Blkparse, QueueEventsSkipMergesCompletionsAndSummaries) {
  auto source = open_trace(sample("blkparse.txt"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 6u);  // Q: R, W, W, FWS, D, RA
  EXPECT_EQ(count_op(ios, TraceOp::read), 2u);
  EXPECT_EQ(count_op(ios, TraceOp::write), 2u);
  EXPECT_EQ(count_op(ios, TraceOp::flush), 1u);
  EXPECT_EQ(count_op(ios, TraceOp::discard), 1u);
  EXPECT_EQ(ios[0].offset_bytes, 2048u * 512);
  EXPECT_EQ(ios[0].size_bytes, 8u * 512);
  EXPECT_EQ(ios[2].time_ns, 1'000'500);
  EXPECT_EQ(ios[4].size_bytes, 2048u * 512);
  EXPECT_EQ(source->devices(), (std::vector<std::string>{"8,16", "8,32"}));
  EXPECT_EQ(ios[5].device, 1u);
}

TEST(Blkparse, DispatchEventsSeeTheMergedRequestAndTheRequeue) {
  TraceReadOptions options;
  options.blkparse_event = BlkparseEvent::dispatch;
  const auto ios = read_sample("blkparse.txt", parse_trace_format("blkparse"), options);
  ASSERT_EQ(ios.size(), 6u);  // D: R, W (merged 32 sectors), W again after the requeue, FN, D, RA
  EXPECT_EQ(ios[1].op, TraceOp::write);
  EXPECT_EQ(ios[1].size_bytes, 32u * 512);
  EXPECT_EQ(ios[2].offset_bytes, ios[1].offset_bytes);
  EXPECT_EQ(ios[3].op, TraceOp::flush);
  EXPECT_EQ(ios[0].time_ns, 0);  // relative to the first D event
  EXPECT_EQ(ios[1].time_ns, 1'002'000 - 5'000);
}

TEST(MsrCambridge, FiletimeTicksAndHostDiskDevices) {
  auto source = open_trace(sample("msr_cambridge.csv"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(count_op(ios, TraceOp::read), 2u);
  EXPECT_EQ(ios[1].time_ns, (128166372016382155LL - 128166372003061629LL) * 100);
  EXPECT_EQ(ios[2].offset_bytes, 2909716480u);
  EXPECT_EQ(ios[2].size_bytes, 16384u);
  EXPECT_EQ(source->devices(), (std::vector<std::string>{"mds,1", "mds,0"}));
  EXPECT_EQ(source->tick_ns(), 100);
}

TEST(CloudPhysics, CsvOpcodesSectorsAndSeconds) {
  const auto ios = read_sample("cloudphysics_small.csv");
  ASSERT_EQ(ios.size(), 5u);  // INQUIRY (0x12) moves no data and is skipped
  EXPECT_EQ(ios[0].op, TraceOp::write);
  EXPECT_EQ(ios[0].offset_bytes, 42932745ULL * 512);
  EXPECT_EQ(ios[1].op, TraceOp::read);
  EXPECT_EQ(ios[2].op, TraceOp::read);  // READ(16)
  EXPECT_EQ(ios[2].offset_bytes, 2000000000ULL * 512);
  EXPECT_EQ(ios[2].time_ns, 1'000'000'000);
  EXPECT_EQ(ios[3].op, TraceOp::flush);
  EXPECT_EQ(ios[4].op, TraceOp::discard);
}

TEST(CloudPhysics, BinaryV1Records) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  std::string bytes;
  const auto record = [&](std::uint32_t len, std::uint16_t cmd, std::uint64_t lbn, std::uint64_t ts_us) {
    char r[32] = {};
    std::uint16_t ver = 1;
    std::memcpy(r + 4, &len, 4);
    std::memcpy(r + 12, &cmd, 2);
    std::memcpy(r + 14, &ver, 2);
    std::memcpy(r + 16, &lbn, 8);
    std::memcpy(r + 24, &ts_us, 8);
    bytes.append(r, 32);
  };
  record(4096, 0x28, 100, 5'000'000);
  record(8192, 0x2a, 200, 5'000'250);
  record(36, 0x12, 0, 5'000'300);  // INQUIRY: skipped
  testing::write_file(dir / "w01.vscsi", bytes);
  auto source = open_trace(dir / "w01.vscsi");
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 2u);
  EXPECT_EQ(ios[1].op, TraceOp::write);
  EXPECT_EQ(ios[1].offset_bytes, 200u * 512);
  EXPECT_EQ(ios[1].size_bytes, 8192u);
  EXPECT_EQ(ios[1].time_ns, 250'000);
  // A partial record names its record number.
  testing::write_file(dir / "cut.vscsi", bytes.substr(0, 80));  // two records and half of the third
  auto cut = open_trace(dir / "cut.vscsi", parse_trace_format("cloudphysics-binary"));
  TraceIo io;
  EXPECT_TRUE(cut->next(io));
  EXPECT_TRUE(cut->next(io));
  try {
    (void)cut->next(io);
    FAIL();
  } catch (const TraceFormatError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_NE(std::string(e.what()).find("truncated record (16 of 32 bytes)"), std::string::npos);
  }
  // Records of other commands only (what random bytes of a size divisible by 32 give, detected as
  // vscsi for their NUL bytes) are not a trace of 0 I/Os but an error.
  bytes.clear();
  for (std::uint64_t i = 0; i < 64; ++i) record(36, 0x12, i, 5'000'000 + i);  // INQUIRY only
  testing::write_file(dir / "none.vscsi", bytes);
  auto none = open_trace(dir / "none.vscsi");
  try {
    (void)none->next(io);
    FAIL() << "64 records, none a read or write, read as an empty trace";
  } catch (const TraceFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("64 records of 32 bytes and not one is a SCSI read or write"),
              std::string::npos)
        << e.what();
  }
}

// MQSim's ASCII trace: arrival in the workload's <Time_Unit>, NANOSECOND in MQSim's configurations
// (it had been read as µs, a 1000x slow replay); `time_unit` gives another.
TEST(Mqsim, ArrivalIsNanosecondsByDefaultSectorsAndReadFlagOne) {
  auto source = open_trace(sample("mqsim_small.trace"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(count_op(ios, TraceOp::read), 2u);
  EXPECT_EQ(ios[0].op, TraceOp::write);
  EXPECT_EQ(ios[0].offset_bytes, 264719034ULL * 512);
  EXPECT_EQ(ios[2].size_bytes, 32u * 512);
  EXPECT_EQ(ios[1].time_ns, 315'000);  // 938828000 - 938513000 ns
  EXPECT_EQ(source->devices(), (std::vector<std::string>{"4", "3", "13"}));
  EXPECT_EQ(source->tick_ns(), 1);
  EXPECT_EQ(source->clock().unit, "ns");
  EXPECT_NE(source->clock().origin.find("<Time_Unit>NANOSECOND"), std::string::npos);
  EXPECT_EQ(source->describe(), "mqsim_small.trace (mqsim)");
}

TEST(Mqsim, TimeUnitOptionScalesArrivals) {
  for (const auto& [unit, expected_ns, tick] :
       {std::tuple{TimeUnit::ps, std::int64_t{315}, std::int64_t{1}},
        std::tuple{TimeUnit::us, std::int64_t{315'000'000}, std::int64_t{1000}},
        std::tuple{TimeUnit::ms, std::int64_t{315'000'000'000}, std::int64_t{1'000'000}}}) {
    TraceReadOptions options;
    options.time_unit = unit;
    auto source = open_trace(sample("mqsim_small.trace"), TraceFormat::automatic, options);
    const auto ios = read_all(*source);
    ASSERT_EQ(ios.size(), 4u);
    EXPECT_EQ(ios[1].time_ns, expected_ns) << to_string(unit);
    EXPECT_EQ(source->tick_ns(), tick) << to_string(unit);
    EXPECT_EQ(source->clock().unit, to_string(unit));
    EXPECT_TRUE(source->clock().given);
  }
  // The old name reads the same file the same way.
  EXPECT_EQ(read_sample("mqsim_small.trace", parse_trace_format("umass"))[1].time_ns, 315'000);
}

// The formats whose file carries its unit refuse a time_unit rather than ignore it.
TEST(TraceClock, TimeUnitIsRefusedWhereTheFileCarriesTheUnit) {
  TraceReadOptions us;
  us.time_unit = TimeUnit::us;
  for (const auto& [name, format] :
       {std::pair{"blkparse.txt", TraceFormat::automatic}, std::pair{"spc.csv", parse_trace_format("spc")},
        std::pair{"systor17_vdi.csv", TraceFormat::automatic}, std::pair{"fio_v2.iolog", TraceFormat::automatic}}) {
    try {
      (void)open_trace(sample(name), format, us);
      ADD_FAILURE() << name << ": no ConfigError";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("does not apply to"), std::string::npos) << e.what();
    }
  }
  // fio v3 takes one: a log written in ms.
  TraceReadOptions ms;
  ms.time_unit = TimeUnit::ms;
  EXPECT_EQ(read_sample("fio_v3.iolog", TraceFormat::automatic, ms)[1].time_ns, 1'000'000'000);
  EXPECT_TRUE(takes_time_unit(parse_trace_format("tencent")));
  EXPECT_FALSE(takes_time_unit(parse_trace_format("native")));
}

TEST(Spc, BytesAndDecimalSeconds) {
  const auto ios = read_sample("spc.csv");
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(count_op(ios, TraceOp::read), 2u);
  EXPECT_EQ(ios[0].offset_bytes, 20941264ULL * 512);
  EXPECT_EQ(ios[2].size_bytes, 15872u);
  EXPECT_EQ(ios[1].time_ns, 2'335'000);
}

TEST(Alibaba, BytesAndMicroseconds) {
  auto source = open_trace(sample("alibaba.csv"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(count_op(ios, TraceOp::read), 2u);
  EXPECT_EQ(ios[1].offset_bytes, 8653365248u);
  EXPECT_EQ(ios[1].time_ns, 98'000);
  EXPECT_EQ(source->devices(), (std::vector<std::string>{"419", "7"}));
}

TEST(Tencent, SectorsSecondsAndVolumes) {
  auto source = open_trace(sample("tencent.csv"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(count_op(ios, TraceOp::read), 2u);
  EXPECT_EQ(ios[0].op, TraceOp::write);
  EXPECT_EQ(ios[0].offset_bytes, 12910952ULL * 512);
  EXPECT_EQ(ios[2].size_bytes, 256u * 512);
  EXPECT_EQ(ios[3].time_ns, 3'000'000'000);
  EXPECT_EQ(source->devices(), (std::vector<std::string>{"1283", "2024"}));
}

// The public SYSTOR '17 VDI traces: decimal Unix seconds (µs resolution), bytes, LUN as the device,
// a blank IOType (no response seen) skipped.
TEST(Systor17, SecondsBytesLunsAndBlankTypesSkipped) {
  auto source = open_trace(sample("systor17_vdi.csv"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 4u);
  EXPECT_EQ(count_op(ios, TraceOp::read), 2u);
  EXPECT_EQ(ios[0].offset_bytes, 899056122368u);
  EXPECT_EQ(ios[0].size_bytes, 131072u);
  EXPECT_EQ(ios[1].op, TraceOp::write);
  EXPECT_EQ(ios[1].time_ns, 127'000);
  EXPECT_EQ(ios[2].time_ns, 501'183'000);
  EXPECT_EQ(ios[2].device, 1u);
  EXPECT_EQ(source->devices(), (std::vector<std::string>{"4", "6"}));
  EXPECT_EQ(source->tick_ns(), 1000);
  EXPECT_EQ(source->clock().unit, "s (decimal, us resolution)");
}

// blkparse_fmt.c fill_rwbs(): [F]{D|W|R|N}[F]...: a leading F is the preflush, an F after the op
// letter FUA. "FWFS" had been read as a plain write (its flush lost) and FUA never reported.
TEST(Blkparse, PreflushAndFuaAreCarriedAsFlags) {
  const std::string text =
      "  8,0 0 1 0.000000000 1 Q FWFS 100 + 8 [jbd2]\n"
      "  8,0 0 2 0.000001000 1 Q WFS 200 + 8 [jbd2]\n"
      "  8,0 0 3 0.000002000 1 Q FWS [jbd2]\n"
      "  8,0 0 4 0.000003000 1 Q FN [kworker]\n"
      "  8,0 0 5 0.000004000 1 Q N [kworker]\n"
      "  8,0 0 6 0.000005000 1 Q WS 300 + 8 [fio]\n"
      "  8,0 0 7 0.000006000 1 Q DE 400 + 8 [blkdiscard]\n";
  auto source = detail::open_trace_memory(text, "b.txt", parse_trace_format("blkparse"));
  const auto ios = read_all(*source);
  ASSERT_EQ(ios.size(), 6u);  // 'N' without a preflush moves nothing and is skipped
  EXPECT_EQ(ios[0].op, TraceOp::write);
  EXPECT_EQ(ios[0].flags, TraceIo::kPreflush | TraceIo::kFua);
  EXPECT_EQ(ios[0].size_bytes, 8u * 512);
  EXPECT_EQ(ios[1].op, TraceOp::write);
  EXPECT_EQ(ios[1].flags, TraceIo::kFua);
  EXPECT_EQ(ios[2].op, TraceOp::flush);  // a preflush without data is the flush itself
  EXPECT_EQ(ios[2].flags, 0);
  EXPECT_EQ(ios[3].op, TraceOp::flush);
  EXPECT_EQ(ios[4].flags, 0);
  EXPECT_EQ(ios[5].op, TraceOp::discard);
}

// The binary readers read through a buffer: one read(2) per 64 KiB, not one per 24-byte record.
TEST(NativeTrace, RecordsAreReadThroughABuffer) {
  struct CountingInput final : detail::ByteInput {
    detail::MemoryInput inner;
    std::size_t* calls;
    CountingInput(std::string bytes, std::size_t* c) : inner(std::move(bytes)), calls(c) {}
    std::size_t read(char* out, std::size_t n) override {
      ++*calls;
      return inner.read(out, n);
    }
  };
  drivelab::test_support::TempDir dir("drivelab-trace");
  std::vector<TraceIo> ios;
  for (std::int64_t i = 0; i < 2000; ++i)
    ios.push_back({i * 1000, static_cast<std::uint64_t>(i) * 4096, 4096, 0, TraceOp::read});
  testing::VectorSource vector(ios, {"sda"});
  ASSERT_EQ(write_native_trace(vector, dir / "t.dltrace"), 2000u);
  const std::string bytes = testing::read_bytes(dir / "t.dltrace");
  std::size_t calls = 0;
  auto source = detail::open_trace_input(std::make_unique<CountingInput>(bytes, &calls), "t.dltrace",
                                         parse_trace_format("native"), {});
  EXPECT_EQ(read_all(*source).size(), 2000u);
  EXPECT_LE(calls, 4u) << "48 KiB of records in " << calls << " reads";
}

TEST(TraceErrors, MalformedLinesNameFileAndLine) {
  struct Case {
    std::string text;
    TraceFormat format;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"fio version 2 iolog\nf add\nf read 0\n", parse_trace_format("fio-iolog-v2"),
       "bad.trace:3: 'read' needs OFFSET LENGTH"},
      {"fio version 1 iolog\n", parse_trace_format("fio-iolog-v2"),
       "bad.trace:1: expected the header 'fio version 2 iolog'"},
      {"fio version 3 iolog\n0 f wait 10 0\n", parse_trace_format("fio-iolog-v3"),
       "bad.trace:2: 'wait' is not allowed"},
      {"  8,0 0 1 0.0 1 Q R x + 8 [a]\n", parse_trace_format("blkparse"),
       "bad.trace:1: sector: expected an unsigned integer, got 'x'"},
      {"1,h,0,Read,0,4096,1\n2,h,0,Erase,0,4096,1\n", parse_trace_format("msr-cambridge"),
       "bad.trace:2: Type: expected Read or Write"},
      {"version,time,op,size,lbn\n1,2,zz,512,0\n", parse_trace_format("cloudphysics-csv"),
       "bad.trace:2: op: expected an unsigned hexadecimal integer"},
      {"1 2 3 4 0\n# comment\n1 2 3 4\n", parse_trace_format("mqsim"), "bad.trace:3: expected 5 fields"},
      {"1 2 3 4 7\n", parse_trace_format("mqsim"), "bad.trace:1: TYPE: expected 1 (read) or 0 (write), got 7"},
      {"1 2 3 99999999999 1\n", parse_trace_format("mqsim"),
       "bad.trace:1: SIZE: 51199999999488 bytes is larger than the 4 GiB"},
      {"0,20941264,8192,W,0.551706\n", parse_trace_format("mqsim"), "bad.trace:1: a comma-separated line"},
      {"1.5,0.1,X,4,0,4096\n", parse_trace_format("systor17"),
       "bad.trace:1: IOType (or blank): expected R or W, got 'X'"},
      {"1.5,0.1,R,4,0\n", parse_trace_format("systor17"), "bad.trace:1: expected 6 fields"},
      {"fio version 2 iolog\nf wait\n", parse_trace_format("fio-iolog-v2"), "bad.trace:2: 'wait' needs its time"},
      // Issue 29: a one-field wait was accepted; fio's iolog.c skips it as "bad iolog2".
      {"fio version 2 iolog\nf add\nf wait 1000\n", parse_trace_format("fio-iolog-v2"),
       "bad.trace:3: 'wait' needs its time in the offset field and a length (fio reads 'FILE wait TIME LENGTH' "
       "only, e.g. 'f wait 1000 0'); found 1 field after 'wait'"},
      {"fio version 2 iolog\nf add\nf wait 1000 0 7\n", parse_trace_format("fio-iolog-v2"),
       "bad.trace:3: 'wait' needs its time"},
      // Found by the fresh review: the request's end wrapped past 2^64 and the LBA span read [0, 4095).
      {"fio version 2 iolog\nf add\nf read 18446744073709551615 4096\n", parse_trace_format("fio-iolog-v2"),
       "bad.trace:3: offset 18446744073709551615 + length 4096 passes the end of any device"},
      {"1,X,0,4096,10\n", parse_trace_format("alibaba"), "bad.trace:1: opcode: expected R or W"},
      {"1,0,8,2,5\n", parse_trace_format("tencent"), "bad.trace:1: IOType: expected 0 (read) or 1 (write), got 2"},
      {"99999999999999999999,0,8,0,5\n", parse_trace_format("tencent"),
       "bad.trace:1: Timestamp: expected an unsigned integer"},
      {"18446744073709551615,0,8,0,5\n", parse_trace_format("tencent"),
       "bad.trace:1: Timestamp: 18446744073709551615 is out of range"},
      {"1 2 3 4 1\n" + std::string(5000, '1') + "\n", parse_trace_format("mqsim"),
       "bad.trace:2: line longer than 4096 bytes"},
  };
  for (const Case& c : cases) {
    const std::string what = error_of(c.text, c.format);
    EXPECT_EQ(what.rfind(c.expected, 0), 0u) << "got: " << what << "\nexpected prefix: " << c.expected;
  }
}

TEST(TraceErrors, FileErrorsCarryThePath) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  testing::write_file(dir / "t.csv", "1,W,0,4096,10\n1,W,0,4096,11\n1,W,0,-5,12\n");
  auto source = open_trace(dir / "t.csv");
  TraceIo io;
  ASSERT_TRUE(source->next(io));
  ASSERT_TRUE(source->next(io));
  try {
    (void)source->next(io);
    FAIL();
  } catch (const TraceFormatError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_EQ(e.file(), dir / "t.csv");
    EXPECT_EQ(std::string(e.what()), (dir / "t.csv").string() + ":3: length: expected an unsigned integer, got '-5'");
  }
}

// Devices and directories are refused before they are read (/dev/zero had been detected as
// CloudPhysics binary, size 0 being a multiple of 32, and read without end).
TEST(TraceInput, DevicesAndDirectoriesAreRefusedWithTheirKind) {
  const auto message = [](const std::filesystem::path& p) {
    try {
      (void)open_trace(p);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no ConfigError");
  };
  EXPECT_EQ(message("/dev/zero"),
            "trace /dev/zero is a character device, not a trace file (give a regular file, or a pipe)");
  test_support::TempDir dir;
  EXPECT_EQ(message(dir.path()),
            "trace " + dir.path().string() + " is a directory, not a trace file (give a regular file, or a pipe)");
  EXPECT_THROW((void)detect_trace_format("/dev/zero"), ConfigError);
  EXPECT_THROW((void)open_trace("/dev/zero", parse_trace_format("cloudphysics-binary")), ConfigError);
}

// A pipe is read once, as it streams: format detection keeps the bytes it read (they had been
// lost when the file was opened a second time for reading).
TEST(TraceInput, APipeIsDetectedAndReadOnce) {
  test_support::TempDir dir;
  const std::filesystem::path fifo = dir / "trace.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::signal(SIGPIPE, SIG_IGN);  // a reader that fails early must not kill the test
  std::string text;
  for (int i = 0; i < 2000; ++i) text += fmt::format("{} 0 {} 16 {}\n", i * 1000, i * 16, i % 2);  // > 4 KiB
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // waits for the reader
    if (fd < 0) return;
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  std::vector<TraceIo> ios;
  try {
    auto source = open_trace(fifo);
    ios = read_all(*source);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // lets the writer's open return
    if (fd >= 0) ::close(fd);
  }
  writer.join();
  ASSERT_EQ(ios.size(), 2000u);
  EXPECT_EQ(ios[0].op, TraceOp::write);
  EXPECT_EQ(ios[1].op, TraceOp::read);
  EXPECT_EQ(ios[1999].offset_bytes, 1999u * 16 * 512);
  EXPECT_EQ(ios[1999].time_ns, 1999LL * 1000);  // MQSim arrivals: ns
}

}  // namespace
}  // namespace drivelab::trace
