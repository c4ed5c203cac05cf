#include <gtest/gtest.h>

#include "drivelab/runner/protocol.hpp"
#include "test_emulator.hpp"

namespace drivelab::runner {
namespace {

using namespace std::chrono_literals;

struct Decoded {
  Protocol protocol;
  config::Diagnostics diags;
};

Decoded decode(const std::string& yaml, testing::PhaseLog* log) {
  Decoded d;
  const Registry reg = testing::make_test_registry(log);
  config::Document doc = config::Document::load_string(yaml, "p.yaml", d.diags);
  d.protocol = decode_protocol(doc, reg, d.diags);
  return d;
}

TEST(DecodeProtocol, AppliesDefaultsAndTestSettings) {
  testing::PhaseLog log;
  auto d = decode(
      "protocol: p\nseed: 7\ndefaults: {warmup: 2s, duration: 10s, interval: 1s}\n"
      "tests:\n  - {name: a, kind: tick}\n  - {name: b, kind: tick, duration: 3s}\n",
      &log);
  ASSERT_TRUE(d.diags.empty()) << d.diags.to_string();
  EXPECT_EQ(d.protocol.name, "p");
  EXPECT_EQ(d.protocol.seed, 7u);
  ASSERT_EQ(d.protocol.tests.size(), 2u);
  EXPECT_EQ(d.protocol.tests[0].settings.warmup, 2s);
  EXPECT_EQ(d.protocol.tests[0].settings.duration, 10s);
  EXPECT_EQ(d.protocol.tests[1].settings.duration, 3s);
  EXPECT_EQ(d.protocol.tests[1].settings.interval, 1s);
  const auto eff = d.protocol.effective();
  EXPECT_EQ(eff["tests"][1]["duration_s"], 3.0);
  EXPECT_EQ(eff["tests"][0]["tick"]["fail_in"], "");
}

// A result record (JSON is YAML) given to validate or run: one error at its schema key that says
// what the file is, not each of the record's keys as unknown.
TEST(DecodeProtocol, AResultRecordIsNamedAsOneAndNotReadAsAProtocol) {
  testing::PhaseLog log;
  auto d = decode(
      "{\n  \"schema\": \"drivelab.run/1\",\n  \"run_id\": \"20261207T190028Z-91a202\",\n"
      "  \"status\": \"complete\",\n  \"tests\": []\n}\n",
      &log);
  ASSERT_EQ(d.diags.size(), 1u) << d.diags.to_string();
  EXPECT_EQ(d.diags.items()[0].where.line, 2) << d.diags.to_string();
  EXPECT_EQ(d.diags.items()[0].key_path, "schema");
  EXPECT_NE(d.diags.to_string().find("this is a drivelab result record (schema drivelab.run/1), not a protocol"),
            std::string::npos)
      << d.diags.to_string();
  // A protocol's own key named schema is not a record's: read (and refused) as any unknown key.
  auto p = decode("protocol: p\nschema: mine\ntests:\n  - {name: a, kind: tick}\n", &log);
  EXPECT_NE(p.diags.to_string().find("unknown key"), std::string::npos) << p.diags.to_string();
}

TEST(DecodeProtocol, MoreThanAMillionIntervalsAreRefusedAtTheKeyThatSetsThem) {
  testing::PhaseLog log;
  auto d = decode(
      "protocol: p\n"
      "defaults: {interval: 100ms}\n"
      "tests:\n"
      "  - {name: a, kind: tick, duration: 100001s}\n"  // 1,000,010 intervals of 100 ms
      "  - {name: b, kind: tick, duration: 5000000s, interval: 1s}\n"
      "  - {name: c, kind: tick, duration: 100000s}\n",  // exactly 1,000,000: accepted
      &log);
  const auto& items = d.diags.items();
  ASSERT_EQ(items.size(), 2u) << d.diags.to_string();
  EXPECT_EQ(items[0].to_string(),
            "p.yaml:4:37: tests[0].duration: duration 27h46m41s / interval 100ms is 1000010 intervals; at most "
            "1000000 (make interval longer)");
  EXPECT_EQ(items[1].key_path, "tests[1].interval");
  EXPECT_NE(items[1].message.find("is 5000000 intervals; at most 1000000"), std::string::npos) << items[1].message;
}

TEST(DecodeProtocol, ReportsEveryProblemWithLocation) {
  testing::PhaseLog log;
  auto d = decode(
      "protocol: p\n"
      "tests:\n"
      "  - name: a\n"
      "    kind: nosuch\n"
      "  - name: a\n"
      "    kind: tick\n"
      "  - name: 'bad name'\n"
      "    kind: tick\n"
      "    duration: 0s\n",
      &log);
  const auto& items = d.diags.items();
  ASSERT_EQ(items.size(), 4u) << d.diags.to_string();
  EXPECT_EQ(items[0].key_path, "tests[0].kind");
  EXPECT_EQ(items[0].where.line, 4);
  EXPECT_NE(items[0].message.find("unknown kind 'nosuch'"), std::string::npos);
  EXPECT_NE(items[0].message.find("tick"), std::string::npos);  // lists the known kinds
  EXPECT_EQ(items[1].key_path, "tests[1].name");
  EXPECT_NE(items[1].message.find("duplicate test name 'a'"), std::string::npos);
  EXPECT_EQ(items[2].key_path, "tests[2].name");
  EXPECT_EQ(items[3].key_path, "tests[2].duration");
}

TEST(DecodeProtocol, MissingTestsAndUnknownTopLevelKey) {
  testing::PhaseLog log;
  auto d = decode("protocol: p\ntest: []\n", &log);
  ASSERT_EQ(d.diags.size(), 2u) << d.diags.to_string();
  std::string all = d.diags.to_string();
  EXPECT_NE(all.find("tests"), std::string::npos);
  EXPECT_NE(all.find("unknown key 'test'"), std::string::npos);
}

TEST(DecodeProtocol, SeedMustBeANumberOrRandom) {
  testing::PhaseLog log;
  auto d = decode("protocol: p\nseed: -3\ntests: [{name: a, kind: tick}]\n", &log);
  ASSERT_EQ(d.diags.size(), 1u);
  EXPECT_EQ(d.diags.items()[0].key_path, "seed");
  auto r = decode("protocol: p\nseed: random\ntests: [{name: a, kind: tick}]\n", &log);
  EXPECT_TRUE(r.diags.empty()) << r.diags.to_string();
}

TEST(DecodeProtocol, KindSectionErrorsCarryTheTestPath) {
  testing::PhaseLog log;
  auto d = decode("protocol: p\ntests:\n  - name: a\n    kind: tick\n    tick: {stop_after: -1, bogus: 1}\n", &log);
  ASSERT_EQ(d.diags.size(), 2u) << d.diags.to_string();
  EXPECT_EQ(d.diags.items()[0].key_path, "tests[0].tick.stop_after");
  EXPECT_EQ(d.diags.items()[1].key_path, "tests[0].tick.bogus");
}

}  // namespace
}  // namespace drivelab::runner
