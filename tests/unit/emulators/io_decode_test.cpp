#include <gtest/gtest.h>

#include "drivelab/config/document.hpp"
#include "drivelab/emulators/io_job.hpp"

namespace drivelab::emulators {
namespace {

// Decodes the `io:` mapping of a one-line document and returns every diagnostic, one per line.
std::string decode_errors(const std::string& io_yaml, IoJobConfig* out = nullptr) {
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string("io: " + io_yaml, "t.yaml", diags);
  const IoJobConfig job = decode_io_job(doc.root(diags).child("io"));
  if (out) *out = job;
  return diags.to_string();
}

TEST(IoJobDecode, AbsentSectionMeansFioLikeDefaults) {
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string("other: 1", "t.yaml", diags);
  const IoJobConfig job = decode_io_job(doc.root(diags).child("io"));
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(job.engine, "io_uring");
  EXPECT_EQ(job.rw, Rw::randread);
  EXPECT_EQ(job.xfersize_bytes, 4096u);
  EXPECT_EQ(job.iodepth, 32u);
  EXPECT_EQ(job.file_size_bytes, 1u << 30);
  EXPECT_TRUE(job.direct);
  EXPECT_EQ(job.jobs, 1u);
  EXPECT_TRUE(job.keep_file);
}

TEST(IoJobDecode, ReadsEveryKey) {
  IoJobConfig job;
  EXPECT_EQ(decode_errors("{engine: psync, rw: write, xfersize: 64k, iodepth: 8, file_size: 2GiB, direct: false, "
                          "jobs: 4, keep_file: false, registerfiles: true, fixedbufs: true, iodepth_batch_submit: 4}",
                          &job),
            "");
  EXPECT_EQ(job.engine, "psync");
  EXPECT_EQ(job.rw, Rw::write);
  EXPECT_EQ(job.xfersize_bytes, 65536u);
  EXPECT_EQ(job.iodepth, 8u);
  EXPECT_EQ(job.file_size_bytes, 2ull << 30);
  EXPECT_FALSE(job.direct);
  EXPECT_EQ(job.jobs, 4u);
  EXPECT_FALSE(job.keep_file);
  EXPECT_TRUE(job.registerfiles && job.fixedbufs);
  EXPECT_EQ(job.iodepth_batch_submit, 4u);
}

TEST(IoJobDecode, BatchSubmitIsBoundedByTheDepth) {
  IoJobConfig job;
  EXPECT_EQ(job.iodepth_batch_submit, 1u);  // fio's default
  EXPECT_NE(decode_errors("{iodepth: 8, iodepth_batch_submit: 16}", &job)
                .find("iodepth_batch_submit must be at most iodepth (8), found 16"),
            std::string::npos);
}

TEST(IoJobDecode, EngineOptionsWithFioNamesAndDefaults) {
  IoJobConfig job;
  EXPECT_EQ(job.iodepth_batch_complete_min, 1u);  // fio's defaults: reap at least 1 ...
  EXPECT_EQ(job.complete_max(), 1u);              // ... and at most iodepth_batch_complete_min
  EXPECT_FALSE(job.sqthread_poll);
  EXPECT_EQ(decode_errors("{engine: io_uring, sqthread_poll: true, sqthread_poll_cpu: 1, sq_thread_idle: 50ms, "
                          "iodepth: 64, iodepth_batch_complete_min: 4, iodepth_batch_complete_max: 16}",
                          &job),
            "");
  EXPECT_TRUE(job.sqthread_poll);
  EXPECT_EQ(job.sqthread_poll_cpu, 1);
  EXPECT_EQ(job.sq_thread_idle, std::chrono::milliseconds(50));
  EXPECT_EQ(job.iodepth_batch_complete_min, 4u);
  EXPECT_EQ(job.complete_max(), 16u);
  EXPECT_EQ(decode_errors("{engine: libaio, direct: true}", &job), "");
  EXPECT_EQ(job.engine, "libaio");
  EXPECT_EQ(decode_errors("{iodepth_batch_complete_min: 0}", &job), "");
  EXPECT_EQ(job.complete_max(), 1u) << "polling still takes at least one completion per reap";
}

TEST(IoJobDecode, EffectiveConfigDecodesBackToTheSameJob) {
  IoJobConfig job;
  decode_errors("{rw: randwrite, xfersize: 1536, file_size: 3m, sqthread_poll: true, sq_thread_idle: 20ms}", &job);
  const std::string again = to_json(job).dump();
  IoJobConfig back;
  EXPECT_EQ(decode_errors(again, &back), "");
  EXPECT_EQ(to_json(back).dump(), again);
  EXPECT_EQ(to_json(back)["xfersize"], 1536);  // "1.5 KiB" would be rounded for other sizes: bytes
  EXPECT_EQ(to_json(back)["file_size"], "3 MiB");
  EXPECT_EQ(back.xfersize_bytes, 1536u);
  EXPECT_EQ(back.file_size_bytes, 3u << 20);
  EXPECT_TRUE(back.sqthread_poll);
  EXPECT_EQ(back.sq_thread_idle, std::chrono::milliseconds(20));
}

struct BadKey {
  const char* yaml;
  const char* message;
};

class IoJobDecodeError : public testing::TestWithParam<BadKey> {};

TEST_P(IoJobDecodeError, NamesFileLinePathAndReason) { EXPECT_EQ(decode_errors(GetParam().yaml), GetParam().message); }

INSTANTIATE_TEST_SUITE_P(
    Keys, IoJobDecodeError,
    testing::Values(
        BadKey{"{xfersize: 1000}", "t.yaml:1:16: io.xfersize: xfersize must be a multiple of 512 bytes, found 1000 B"},
        BadKey{"{xfersize: 256}", "t.yaml:1:16: io.xfersize: xfersize must be between 512 B and 64 MiB, found 256 B"},
        BadKey{"{iodepth: 0}", "t.yaml:1:15: io.iodepth: iodepth must be between 1 and 65536, found 0"},
        BadKey{"{jobs: 2000}", "t.yaml:1:12: io.jobs: jobs must be between 1 and 1024, found 2000"},
        BadKey{"{rw: randrw}",
               "t.yaml:1:10: io.rw: rw must be one of: randread, randwrite, read, write; found 'randrw'"},
        BadKey{"{engine: aio}",
               "t.yaml:1:14: io.engine: engine must be one of: io_uring, libaio, psync, null; found 'aio'"},
        BadKey{"{engine: libaio, sqthread_poll: true}",
               "t.yaml:1:37: io.sqthread_poll: sqthread_poll is an io_uring option; engine is libaio"},
        BadKey{"{iodepth: 4, iodepth_batch_complete_min: 8}",
               "t.yaml:1:46: io.iodepth_batch_complete_min: iodepth_batch_complete_min must be at most iodepth (4), "
               "found 8"},
        BadKey{"{iodepth_batch_complete_min: 4, iodepth_batch_complete_max: 2}",
               "t.yaml:1:65: io.iodepth_batch_complete_max: iodepth_batch_complete_max must be at least "
               "iodepth_batch_complete_min (4), found 2"},
        BadKey{"{direct: maybe}",
               "t.yaml:1:14: io.direct: expected a boolean (true/false, yes/no, on/off), found 'maybe'"},
        BadKey{"{file_size: 1k, xfersize: 4k}",
               "t.yaml:1:17: io.file_size: file_size must be at least xfersize (4 KiB), found 1 KiB"},
        BadKey{"{xfersiz: 4k}", "t.yaml:1:6: io.xfersiz: unknown key 'xfersiz' (did you mean 'xfersize'?)"},
        BadKey{
            "{xfersize: 64m, iodepth: 65536}",
            "t.yaml:1:5: io: jobs x iodepth x xfersize = 4 TiB of I/O buffers is more than 4 GiB; lower one of them"}));

TEST(IoJobDecode, YamlNullSelectsTheNullEngine) {
  IoJobConfig job;
  EXPECT_EQ(decode_errors("{engine: null}", &job), "");
  EXPECT_EQ(job.engine, "null");
  EXPECT_EQ(decode_errors("{engine: 'null'}", &job), "");
  EXPECT_EQ(job.engine, "null");
  EXPECT_EQ(decode_errors("{engine: NULL, rw: read}", &job), "");
  EXPECT_EQ(job.engine, "null");
}

// YAML's other spellings of null are a value left out, not the engine that does no I/O: refused
// at the key, naming the words and the default.
TEST(IoJobDecode, AnEmptyOrTildeEngineIsRefusedNotTheNullEngine) {
  EXPECT_EQ(decode_errors("{engine: ~, rw: read}"),
            "t.yaml:1:6: io.engine: engine has no value ('~' is YAML's null): give one of io_uring, libaio, psync, "
            "null, or leave the key out for the default (io_uring)");
  const std::string empty = decode_errors("\n  engine:\n  rw: read\n");
  EXPECT_NE(empty.find("io.engine: engine has no value (an empty value is YAML's null)"), std::string::npos) << empty;
  EXPECT_NE(empty.find("t.yaml:2:3:"), std::string::npos) << "at the key: " << empty;
  EXPECT_NE(decode_errors("\n  rw: read\n  engine:").find("an empty value"), std::string::npos)
      << "at the end of the file too";
}

// The same through --set (an unset shell variable: --set "tests[*].io.engine=$ENGINE"): refused
// at "<--set>"; the word null is the null engine there too.
TEST(IoJobDecode, AnEmptyOrTildeEngineOverrideIsRefused) {
  const auto with_override = [](const std::string& assignment, IoJobConfig* job = nullptr) {
    config::Diagnostics diags;
    config::Document doc = config::Document::load_string("io: {rw: read}", "t.yaml", diags);
    doc.apply_override(assignment, diags);
    const IoJobConfig j = decode_io_job(doc.root(diags).child("io"));
    if (job) *job = j;
    return diags.to_string();
  };
  EXPECT_EQ(with_override("io.engine="),
            "<--set>: io.engine: engine has no value (an empty value is YAML's null): give one of io_uring, libaio, "
            "psync, null, or leave the key out for the default (io_uring)");
  EXPECT_NE(with_override("io.engine=~").find("('~' is YAML's null)"), std::string::npos);
  IoJobConfig job;
  EXPECT_EQ(with_override("io.engine=null", &job), "");
  EXPECT_EQ(job.engine, "null");
  EXPECT_EQ(with_override("io.engine=psync", &job), "");
  EXPECT_EQ(job.engine, "psync");
}

TEST(IoJobDecode, ReportsEveryProblemAtOnce) {
  const std::string errors = decode_errors("{xfersize: 1000, iodepth: 0, rw: randrw, bogus: 1}");
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n') + (errors.empty() ? 0 : 1), 4) << errors;
}

}  // namespace
}  // namespace drivelab::emulators
