// Conversion: native round trips from every reader (lossless), native format errors, and the fio
// iolog v3 writer read back by our reader and replayed by the real fio.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "drivelab/trace/convert.hpp"
#include "drivelab/trace/native.hpp"
#include "drivelab/trace/readers.hpp"
#include "temp_dir.hpp"
#include "test_util.hpp"

namespace drivelab::trace {
namespace {

using testing::read_all;
using testing::sample;

TEST(NativeTrace, RoundTripsEverySampleLosslessly) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  for (const std::string name :
       {"fio_v2.iolog", "fio_v3.iolog", "blkparse.txt", "msr_cambridge.csv", "cloudphysics_small.csv",
        "mqsim_small.trace", "spc.csv", "alibaba.csv", "tencent.csv", "systor17_vdi.csv"}) {
    auto original = open_trace(sample(name));
    const auto expected = read_all(*original);
    auto again = open_trace(sample(name));
    const auto out = dir / (name + ".dltrace");
    EXPECT_EQ(write_native_trace(*again, out), expected.size()) << name;
    EXPECT_EQ(detect_trace_format(out), parse_trace_format("native"));
    auto native = open_trace(out);
    const auto got = read_all(*native);
    ASSERT_EQ(got.size(), expected.size()) << name;
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(testing::same_io(got[i], expected[i])) << name << " #" << i;
    EXPECT_EQ(native->devices(), original->devices()) << name;
    EXPECT_EQ(native->tick_ns(), original->tick_ns()) << name;
  }
}

TEST(NativeTrace, RecordsAre24BytesAndTruncationIsAnError) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  testing::VectorSource source({{0, 0, 4096, 0, TraceOp::read}, {10, 4096, 4096, 0, TraceOp::write}}, {"sda"});
  ASSERT_EQ(write_native_trace(source, dir / "t.dltrace"), 2u);
  // header 32 + device definition 24 + name padded to 24 + two records
  EXPECT_EQ(std::filesystem::file_size(dir / "t.dltrace"), 32u + 24 + 24 + 2 * 24);
  const std::string bytes = testing::read_bytes(dir / "t.dltrace");
  testing::write_file(dir / "cut.dltrace", bytes.substr(0, bytes.size() - 24));
  auto cut = open_trace(dir / "cut.dltrace");
  TraceIo io;
  ASSERT_TRUE(cut->next(io));
  EXPECT_THROW(
      {
        try {
          (void)cut->next(io);
        } catch (const TraceFormatError& e) {
          EXPECT_NE(std::string(e.what()).find(":3: trace ends after 1 I/O records, the header announces 2"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      TraceFormatError);
  std::string bad_version = bytes;
  bad_version[8] = 9;
  testing::write_file(dir / "v9.dltrace", bad_version);
  EXPECT_THROW((void)open_trace(dir / "v9.dltrace"), TraceFormatError);
}

// TraceIo::flags (preflush, FUA) travel in the record's last byte, once reserved (0): a round trip
// keeps them, and a version-1 file from before them reads as no flags.
TEST(NativeTrace, FlagsSurviveARoundTripAndUnknownFlagsAreErrors) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  TraceIo w{0, 0, 4096, 0, TraceOp::write};
  w.flags = TraceIo::kPreflush | TraceIo::kFua;
  TraceIo fua{10, 4096, 4096, 0, TraceOp::write};
  fua.flags = TraceIo::kFua;
  testing::VectorSource source({w, fua, {20, 0, 0, 0, TraceOp::flush}}, {"sda"});
  ASSERT_EQ(write_native_trace(source, dir / "f.dltrace"), 3u);
  auto back = open_trace(dir / "f.dltrace");
  const auto got = read_all(*back);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].flags, TraceIo::kPreflush | TraceIo::kFua);
  EXPECT_EQ(got[1].flags, TraceIo::kFua);
  EXPECT_EQ(got[2].flags, 0);
  std::string bytes = testing::read_bytes(dir / "f.dltrace");
  bytes[32 + 48 + 23] = 0x40;  // the first I/O record's flags byte
  testing::write_file(dir / "bad.dltrace", bytes);
  auto bad = open_trace(dir / "bad.dltrace");
  TraceIo io;
  EXPECT_THROW((void)bad->next(io), TraceFormatError);
}

// A preflush is a flush before the request: fio's `sync` just before the write.
TEST(FioIologV3, APreflushIsASyncBeforeItsWrite) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  TraceIo w{1000, 8192, 4096, 0, TraceOp::write};
  w.flags = TraceIo::kPreflush;
  testing::VectorSource source({{0, 0, 4096, 0, TraceOp::write}, w}, {"sda"});
  (void)write_fio_iolog_v3(source, dir / "p.iolog");
  const std::string text = testing::read_bytes(dir / "p.iolog");
  EXPECT_NE(text.find("2 trace-dev0 sync 0 0\n2 trace-dev0 write 8192 4096\n"), std::string::npos) << text;
}

TEST(FioIologV3, WrittenLogReadsBackWithMicrosecondTimes) {
  drivelab::test_support::TempDir dir("drivelab-trace");
  auto source = open_trace(sample("blkparse.txt"));
  const ConvertSummary summary = write_fio_iolog_v3(*source, dir / "out.iolog");
  EXPECT_EQ(summary.ios_written, 6u);
  EXPECT_EQ(summary.devices, 2u);
  auto original = open_trace(sample("blkparse.txt"));
  const auto expected = read_all(*original);
  auto back = open_trace(dir / "out.iolog");
  const auto got = read_all(*back);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].op, expected[i].op);
    EXPECT_EQ(got[i].offset_bytes, expected[i].offset_bytes);
    EXPECT_EQ(got[i].size_bytes, expected[i].size_bytes);
    EXPECT_EQ(got[i].time_ns, expected[i].time_ns / 1000 * 1000);  // truncated to whole µs
  }
  EXPECT_EQ(back->devices(), (std::vector<std::string>{"trace-dev0", "trace-dev1"}));
  std::ifstream in(dir / "out.iolog");
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(first, "fio version 3 iolog");
  EXPECT_EQ(second, "1 trace-dev0 add");  // no request at time 0 (fio ignores the gap after it)
}

/// Runs a shell command; returns its exit status and stdout.
std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, out};
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(FioIologV3, Fio333ReplaysTheConvertedAlibabaSample) {
  if (run("fio --version >/dev/null 2>&1").first != 0) GTEST_SKIP() << "fio is not installed";
  drivelab::test_support::TempDir dir("drivelab-trace");
  // The sample's offsets reach 8 GB; fold them into a 16 MiB file as the replayer would.
  auto source = open_trace(sample("alibaba.csv"));
  std::vector<TraceIo> ios = read_all(*source);
  for (TraceIo& io : ios) io.offset_bytes %= (16u << 20) - 65536;
  ios.push_back({200'000, 4096, 0, 0, TraceOp::flush});
  testing::VectorSource folded(ios, source->devices());
  FioIologOptions options;
  options.file_name = (dir / "target.dat").string();
  const ConvertSummary summary = write_fio_iolog_v3(folded, dir / "replay.iolog", options);
  ASSERT_EQ(summary.ios_written, 5u);
  {
    std::ofstream target(dir / "target.dat", std::ios::binary);
    target.seekp((16 << 20) - 1);
    target.put('\0');
  }
  const auto [status, out] = run("fio --name=replay --read_iolog=" + (dir / "replay.iolog").string() +
                                 " --ioengine=psync --output-format=json 2>&1");
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  const auto& job = j["jobs"][0];
  EXPECT_EQ(job["error"], 0);
  EXPECT_EQ(job["read"]["total_ios"], 2);
  EXPECT_EQ(job["write"]["total_ios"], 2);
  EXPECT_EQ(job["read"]["io_bytes"], 8192 + 4096);
  EXPECT_EQ(job["write"]["io_bytes"], 4096 + 65536);
}

}  // namespace
}  // namespace drivelab::trace
