// A protocol's hosts: section (runner/hosts.hpp, issue 16): its decoding and errors at their keys,
// which entry is a process's, and its overrides applied to the document as --set would.
#include <gtest/gtest.h>

#include "drivelab/runner/hosts.hpp"
#include "drivelab/runner/protocol.hpp"
#include "test_emulator.hpp"

namespace drivelab::runner {
namespace {

using namespace std::chrono_literals;

constexpr const char* kProtocol = R"(protocol: p
hosts:
  - rank: 0
    target: /mnt/a/{rank}
    set:
      tests[0].duration: 3s
      tests[*].warmup: 1s
  - host: vm2
    target: /mnt/b
    out: /srv/results
  - rank: 1
    target: /mnt/c
tests:
  - {name: a, kind: tick, duration: 10s}
  - {name: b, kind: tick}
)";

TEST(Hosts, EntriesDecodeWithTheirOverridesAsSetAssignments) {
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string(kProtocol, "p.yaml", diags);
  const std::vector<HostEntry> hosts = hosts_of(doc);
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].rank, 0);
  EXPECT_EQ(hosts[0].target, "/mnt/a/{rank}");
  EXPECT_EQ(hosts[0].set, (std::vector<std::string>{"tests[0].duration=3s", "tests[*].warmup=1s"}));
  EXPECT_EQ(hosts[1].host, "vm2");
  EXPECT_FALSE(hosts[1].rank.has_value());
  EXPECT_EQ(hosts[1].out, "/srv/results");
  EXPECT_EQ(hosts[1].describe(), "host vm2");
  EXPECT_EQ(hosts[2].key_path, "hosts[2]");
  EXPECT_EQ(hosts[0].where.line, 3);
}

TEST(Hosts, ARankEntryWinsOverAHostEntryAndNoneMatchesAnotherHost) {
  config::Diagnostics diags;
  const auto hosts = hosts_of(config::Document::load_string(kProtocol, "p.yaml", diags));
  EXPECT_EQ(find_host_entry(hosts, 1, "vm2"), &hosts[2]) << "rank 1 has its own entry";
  EXPECT_EQ(find_host_entry(hosts, 5, "vm2"), &hosts[1]) << "vm2's entry for another rank on vm2";
  EXPECT_EQ(find_host_entry(hosts, 0, "anything"), &hosts[0]);
  EXPECT_EQ(find_host_entry(hosts, 7, "vm9"), nullptr);
}

TEST(Hosts, OverridesApplyBeforeDecodingAndTheRecordShowsTheSection) {
  testing::PhaseLog log;
  config::Diagnostics diags;
  config::Document doc = config::Document::load_string(kProtocol, "p.yaml", diags);
  const auto hosts = hosts_of(doc);
  apply_host_overrides(doc, hosts[0], diags);
  const Registry reg = testing::make_test_registry(&log);
  const Protocol p = decode_protocol(doc, reg, diags);
  ASSERT_TRUE(diags.empty()) << diags.to_string();
  ASSERT_EQ(p.tests.size(), 2u);
  EXPECT_EQ(p.tests[0].settings.duration, 3s);
  EXPECT_EQ(p.tests[0].settings.warmup, 1s);
  EXPECT_EQ(p.tests[1].settings.warmup, 1s);
  ASSERT_EQ(p.hosts.size(), 3u);
  const auto eff = p.effective();
  EXPECT_EQ(eff["hosts"][0]["rank"], 0);
  EXPECT_EQ(eff["hosts"][1]["host"], "vm2");
  EXPECT_EQ(eff["hosts"][0]["set"][0], "tests[0].duration=3s");
}

TEST(Hosts, AnOverrideThatDoesNotApplyIsReportedAtTheEntry) {
  config::Diagnostics diags;
  config::Document doc = config::Document::load_string(
      "protocol: p\nhosts:\n  - rank: 0\n    set:\n      tests[5].duration: 3s\ntests:\n  - {name: a, kind: tick}\n",
      "p.yaml", diags);
  const auto hosts = hosts_of(doc);
  ASSERT_EQ(hosts.size(), 1u);
  apply_host_overrides(doc, hosts[0], diags);
  ASSERT_EQ(diags.size(), 1u);
  const std::string msg = diags.to_string();
  EXPECT_NE(msg.find("p.yaml:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hosts[0].set"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tests[5].duration=3s (rank 0)"), std::string::npos) << msg;
}

TEST(Hosts, MistakesAreReportedAtTheirKeys) {
  testing::PhaseLog log;
  const Registry reg = testing::make_test_registry(&log);
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string(R"(protocol: p
hosts:
  - {rank: 0, host: vm1, target: /a}
  - {target: /b}
  - {rank: 1, target: /c}
  - {rank: 1, target: /d}
  - {host: vm2, target: ""}
  - {host: vm2, set: [a, b]}
  - {rank: -1}
  - {rank: 3, tagret: /e}
tests:
  - {name: a, kind: tick}
)",
                                                             "p.yaml", diags);
  (void)decode_protocol(doc, reg, diags);
  const std::string all = diags.to_string();
  EXPECT_EQ(all.find("hosts[6]: an entry needs"), std::string::npos) << "one error for a bad rank, not two:\n" << all;
  for (const char* expected :
       {"p.yaml:3:5: hosts[0]: an entry names a rank or a host, not both",
        "p.yaml:4:5: hosts[1]: an entry needs rank: (mpirun's rank number) or host: (the host's name)",
        "hosts[3].rank: rank 1 has two entries", "hosts[4].target: target must name a directory or a block device",
        "hosts[5].host: host 'vm2' has two entries", "hosts[5].set: expected a mapping of key paths to values",
        "hosts[6].rank: rank must be between 0 and 1000000",
        "hosts[7].tagret: unknown key 'tagret' (did you mean 'target'?)"})
    EXPECT_NE(all.find(expected), std::string::npos) << expected << "\n--- got:\n" << all;
}

TEST(Hosts, NotAListIsAnError) {
  testing::PhaseLog log;
  const Registry reg = testing::make_test_registry(&log);
  config::Diagnostics diags;
  const config::Document doc = config::Document::load_string(
      "protocol: p\nhosts: {rank: 0}\ntests:\n  - {name: a, kind: tick}\n", "p.yaml", diags);
  (void)decode_protocol(doc, reg, diags);
  EXPECT_NE(diags.to_string().find("hosts: expected a list of hosts"), std::string::npos) << diags.to_string();
}

}  // namespace
}  // namespace drivelab::runner
