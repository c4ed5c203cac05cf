// --metrics-listen (docs/metrics.md): a real run of the binary (TPC-C on SQLite, then fio-style I/O
// on a real file) is scraped over HTTP while it runs; promtool (Debian package prometheus) accepts
// what it serves; the scraped TPS and IOPS are those of the record's interval with the same end
// and of the interval line printed for it; every metric name the Grafana dashboard
// (config/grafana/drivelab.json) queries is served (a device or PSI series when the run recorded
// its value, a drive health series when the run read drive health); each physics check's outcome
// is served; the device counters are whole numbers whose help says no "per second". And the flag's errors: a malformed
// address is exit 2, a port in use exit 3 before anything runs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "drivelab/core/process.hpp"
#include "drivelab/metrics/prometheus.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/summary.hpp"
#include "http_get.hpp"  // tests/support
#include "process.hpp"

namespace {

using drivelab::test_support::http_get;
using drivelab::testing::Child;
using drivelab::testing::read_file;
using drivelab::testing::ScratchDir;
using nlohmann::json;

const std::filesystem::path kSource = DRIVELAB_SOURCE_DIR;

/// A TCP socket listening on 127.0.0.1 on a port the kernel chose.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  Listener() {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 1) != 0)
      throw std::runtime_error("bind/listen");
    socklen_t len = sizeof sa;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    port = ntohs(sa.sin_port);
  }
  ~Listener() { ::close(fd); }
};

/// One sample of the exposition text: name, labels, value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

std::vector<Sample> parse_exposition(const std::string& text) {
  std::vector<Sample> out;
  static const std::regex line_re(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$)");
  static const std::regex label_re(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)")re");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.empty() || line[0] == '#' || !std::regex_match(line, m, line_re)) continue;
    Sample s{m[1], {}, std::strtod(m[4].str().c_str(), nullptr)};
    const std::string labels = m[3];
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label_re); it != std::sregex_iterator(); ++it)
      s.labels[(*it)[1]] = (*it)[2];
    out.push_back(std::move(s));
  }
  return out;
}

const Sample* find_sample(const std::vector<Sample>& samples, const std::string& name,
                          const std::map<std::string, std::string>& labels) {
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : labels) all = all && s.labels.count(k) && s.labels.at(k) == v;
    if (all) return &s;
  }
  return nullptr;
}

/// Every query text of the dashboard, at any depth: panels' "expr", variables' "query"/"definition".
void collect_exprs(const json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if ((k == "expr" || k == "query" || k == "definition") && v.is_string())
        out.push_back(v.get<std::string>());
      else
        collect_exprs(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) collect_exprs(v, out);
  }
}

/// The interval of `test` in the record whose end is `t_s`.
const json* record_interval(const json& rec, const std::string& test, double t_s) {
  for (const auto& t : rec["tests"])
    if (t["name"] == test)
      for (const auto& iv : t["intervals"])
        if (std::fabs(iv["t_s"].get<double>() - t_s) < 1e-9) return &iv;
  return nullptr;
}

/// The interval line printed for `test`'s interval ending at t_s: "[ 3.00s ] io  iops 10520 ...".
std::string printed_line(const std::string& out, const std::string& test, double t_s) {
  drivelab::results::Interval iv;
  iv.t_s = t_s;
  const std::string head = drivelab::results::format_interval_line(test, iv);
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(head + "  ")) return line;
  return {};
}

/// The number after `name` in an interval line.
std::string printed_value(const std::string& line, const std::string& name) {
  const auto at = line.find("  " + name + " ");
  if (at == std::string::npos) return {};
  const auto from = at + name.size() + 3;
  return line.substr(from, line.find(' ', from) - from);
}

constexpr const char* kProtocol = R"(protocol: metrics-test
tests:
  - name: oltp
    kind: tpcc
    warmup: 0s
    duration: 4s
    interval: 1s
    tpcc: {backend: sqlite, warehouses: 1, users: 2, think: none}
  - name: io
    kind: io
    warmup: 0s
    duration: 8s
    interval: 1s
    io: {engine: psync, rw: randread, xfersize: 4k, iodepth: 1, file_size: 32MiB, direct: false, keep_file: false}
)";

TEST(Metrics, ScrapedMidRunCheckedByPromtoolAndEqualToTheIntervals) {
  const auto promtool = drivelab::find_program("promtool");
  if (!promtool) GTEST_SKIP() << "promtool is not installed (Debian package prometheus); CI installs it";
  ScratchDir dir("metrics-scrape");
  const auto target = dir.path() / "target";
  const auto out = dir.path() / "out";
  std::filesystem::create_directories(target);
  std::ofstream(dir.path() / "protocol.yaml") << kProtocol;
  const int port = drivelab::test_support::free_loopback_ports();
  Child child({DRIVELAB_EXE, "run", (dir.path() / "protocol.yaml").string(), "--target", target.string(), "--out",
               out.string(), "--metrics-listen", "127.0.0.1:" + std::to_string(port)},
              dir.path() / "stdout.txt", dir.path() / "stderr.txt");

  // Mid-run: once the io test has printed two interval lines (the oltp test's figures stay served).
  std::optional<std::string> body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  while (!body && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string so = child.out();
    std::size_t lines = 0;
    for (auto at = so.find("] io  iops "); at != std::string::npos; at = so.find("] io  iops ", at + 1)) ++lines;
    if (lines >= 2) body = http_get(port, "/metrics");
  }
  ASSERT_TRUE(body) << child.out() << child.err();
  EXPECT_NE(child.out().find("metrics: http://127.0.0.1:" + std::to_string(port) + "/metrics"), std::string::npos);
  EXPECT_FALSE(http_get(port, "/nothing-here").has_value());

  // promtool accepts it (exposition format and Prometheus' naming rules).
  std::ofstream(dir.path() / "scrape.txt") << *body;
  const std::string cmd = promtool->string() + " check metrics < " + (dir.path() / "scrape.txt").string() + " > " +
                          (dir.path() / "promtool.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << read_file(dir.path() / "promtool.txt") << *body;

  const std::vector<Sample> samples = parse_exposition(*body);
  const std::map<std::string, std::string> io{{"test", "io"}, {"kind", "io"}, {"phase", "run"}, {"rank", "0"}};
  const std::map<std::string, std::string> oltp{{"test", "oltp"}, {"kind", "tpcc"}, {"phase", "run"}};
  const Sample* iops = find_sample(samples, "drivelab_interval_iops", io);
  const Sample* io_end = find_sample(samples, "drivelab_interval_end_seconds", io);
  const Sample* tps = find_sample(samples, "drivelab_interval_transactions_per_second", oltp);
  const Sample* oltp_end = find_sample(samples, "drivelab_interval_end_seconds", oltp);
  ASSERT_TRUE(iops && io_end && tps && oltp_end) << *body;
  EXPECT_FALSE(iops->labels.at("host").empty());
  EXPECT_GT(iops->value, 0);
  EXPECT_GT(tps->value, 0);
  const Sample* running = find_sample(samples, "drivelab_run_status", {{"status", "running"}});
  ASSERT_NE(running, nullptr) << *body;
  EXPECT_EQ(running->value, 1);
  const Sample* io_ops = find_sample(samples, "drivelab_operations_total", io);
  const Sample* oltp_ops = find_sample(samples, "drivelab_operations_total", oltp);
  ASSERT_TRUE(io_ops && oltp_ops) << *body;
  EXPECT_GT(io_ops->value, 0);
  EXPECT_GT(oltp_ops->value, 0);
  const Sample* p99 = find_sample(samples, "drivelab_interval_latency_seconds", {{"test", "io"}, {"percentile", "99"}});
  ASSERT_NE(p99, nullptr) << *body;
  EXPECT_GT(p99->value, 0);
  const Sample* progress = find_sample(samples, "drivelab_run_progress_ratio", {});
  ASSERT_NE(progress, nullptr);
  EXPECT_GE(progress->value, 0.5);  // the first of two tests is done
  EXPECT_LT(progress->value, 1.0);

  // Every metric name the dashboard queries is served.
  const json dashboard = json::parse(read_file(kSource / "config/grafana/drivelab.json"));
  std::vector<std::string> exprs;
  collect_exprs(dashboard, exprs);
  EXPECT_GE(exprs.size(), 6u);
  std::set<std::string> served;
  for (const auto& s : samples) served.insert(s.name);
  static const std::regex name_re(R"(drivelab_[a-z0-9_]+)");
  std::set<std::string> used;
  for (const auto& e : exprs)
    for (auto it = std::sregex_iterator(e.begin(), e.end(), name_re); it != std::sregex_iterator(); ++it)
      used.insert(it->str());
  EXPECT_GE(used.size(), 6u);
  ASSERT_EQ(child.wait(std::chrono::minutes(3)), 0) << child.out() << child.err();
  const json rec = json::parse(read_file(out / "latest.json"));
  // A telemetry series (docs/telemetry.md) is served when the run recorded its value: not for a
  // target without a block device, nor PSI on a kernel without /proc/pressure.
  std::set<std::string> recorded;
  for (const auto& t : rec["tests"])
    for (const auto& iv : t["intervals"])
      for (const auto& [name, v] : iv["values"].items()) recorded.insert(name);
  for (const drivelab::results::MetricDef* d : drivelab::results::metric_defs()) {
    const auto series = drivelab::metrics::telemetry_series(*d);
    if (series && !recorded.contains(std::string(d->name))) served.insert(series->gauge);
  }
  EXPECT_TRUE(recorded.contains("device_r_s") || rec["tests"][1].at("details").at("telemetry").contains("no_device"));
  // Drive health is served when the run read it (not on this VM's virtio disk: the record says why).
  const json& health = rec.at("details").at("health");
  if (!health.at("available").get<bool>()) {
    EXPECT_FALSE(health.at("reason").get<std::string>().empty());
    for (const std::string_view n : drivelab::metrics::kDriveHealthSeries) {
      EXPECT_EQ(served.count(std::string(n)), 0u) << n << " served without health data";
      served.insert(std::string(n));
    }
  }
  // Each check that a number is physical of the finished oltp test: one outcome 1, the others 0.
  for (const std::string check : {"link", "direct_io", "tpmc_per_warehouse", "harness_ceiling"}) {
    double sum = 0;
    for (const auto& smp : samples)
      if (smp.name == "drivelab_test_physics_check" && smp.labels.count("check") && smp.labels.at("check") == check &&
          smp.labels.at("test") == "oltp")
        sum += smp.value;
    EXPECT_EQ(sum, 1) << check << "\n" << *body;
  }
  const json& oltp_checks = rec["tests"][0]["details"]["telemetry"]["checks"];
  for (const auto& c : oltp_checks) {
    const Sample* s = find_sample(samples, "drivelab_test_physics_check",
                                  {{"test", "oltp"}, {"check", c["check"]}, {"outcome", c["outcome"]}});
    ASSERT_NE(s, nullptr) << c.dump() << *body;
    EXPECT_EQ(s->value, 1) << c.dump();
  }
  // The device counters count whole requests and bytes (rounded from rate x length per interval).
  for (const auto& smp : samples)
    if (smp.name.starts_with("drivelab_device_") && smp.name.ends_with("_total")) {
      EXPECT_EQ(smp.value, std::round(smp.value)) << smp.name;
    }
  for (const std::string counter : {"drivelab_device_read_total", "drivelab_device_write_bytes_total"}) {
    const auto help = body->find("# HELP " + counter + " ");
    if (help == std::string::npos) continue;  // no device under the target
    const std::string line = body->substr(help, body->find('\n', help) - help);
    EXPECT_EQ(line.find("per second"), std::string::npos) << line;
  }
  for (const auto& n : used) EXPECT_TRUE(served.count(n)) << "the dashboard queries " << n << ", which is not served";
  const std::string so = child.out();
  // The scraped figures are the record's interval with the same end, and the line printed for it.
  for (const auto& [test, sample, end, value] : {std::tuple{std::string("io"), iops, io_end, std::string("iops")},
                                                 std::tuple{std::string("oltp"), tps, oltp_end, std::string("tps")}}) {
    const json* iv = record_interval(rec, test, end->value);
    ASSERT_NE(iv, nullptr) << test << " t_s " << end->value;
    const double recorded = (*iv)["values"][value].get<double>();
    EXPECT_NEAR(sample->value, recorded, 1e-9 * recorded) << test;
    const std::string line = printed_line(so, test, end->value);
    ASSERT_FALSE(line.empty()) << test << " t_s " << end->value << "\n" << so;
    EXPECT_EQ(printed_value(line, value), drivelab::results::format_number(sample->value)) << line;
  }
}

TEST(Metrics, AMalformedAddressIsBadInput) {
  ScratchDir dir("metrics-bad-address");
  for (const std::string bad : {"127.0.0.1", "127.0.0.1:99999", "my-host:9464", "::1:9464", "127.0.0.1:94x"}) {
    const auto r = drivelab::testing::run(
        {DRIVELAB_EXE, "io", "--target", dir.path().string(), "--metrics-listen", bad}, dir.path());
    EXPECT_EQ(r.status, 2) << bad << r.out << r.err;
    EXPECT_NE(r.err.find("--metrics-listen '" + bad + "'"), std::string::npos) << r.err;
  }
}

TEST(Metrics, APortInUseStopsTheRunBeforeAnythingIsWritten) {
  ScratchDir dir("metrics-port-in-use");
  const Listener taken;
  const auto out = dir.path() / "out";
  const auto r = drivelab::testing::run(
      {DRIVELAB_EXE, "io", "--target", dir.path().string(), "--out", out.string(), "--metrics-listen",
       "127.0.0.1:" + std::to_string(taken.port), "--duration", "1s", "--engine", "null"},
      dir.path());
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("--metrics-listen 127.0.0.1:" + std::to_string(taken.port) +
                       ": cannot listen there: Address "
                       "already in use (EADDRINUSE)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "nothing is written when the exporter cannot listen";
}

}  // namespace
