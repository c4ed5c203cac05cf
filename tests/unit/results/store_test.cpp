// The results store's devices table (results/store.hpp, schema version 2; docs/reporter.md "The
// results store", issue 33): the record of a real run (an io test and a TPC-C test on SQLite in a
// directory of the build tree, through run_protocol) imported into a real SQLite file gives one row
// per test and device its telemetry names, whose numbers, read back with SQL, are the record's; a
// version-1 store written with raw SQL as the old code wrote it is upgraded in place to the same
// rows; the health of the drive a device is on comes from captured real nvme-cli and smartctl
// outputs (tests/data/health/README.md); `--where device=NAME` keeps the tests that ran on it.
#include <sqlite3.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "drivelab/core/errors.hpp"
#include "drivelab/emulators/register.hpp"
#include "drivelab/oltp/register.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/record.hpp"
#include "drivelab/results/store.hpp"
#include "drivelab/runner/protocol.hpp"
#include "drivelab/runner/run.hpp"
#include "drivelab/telemetry/health_record.hpp"

namespace drivelab::results {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in) << p;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// An empty directory `name` of the build tree's test-scratch.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(DRIVELAB_BINARY_DIR) / "test-scratch" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// A store file opened with SQLite itself (not through RunStore).
class Db {
 public:
  explicit Db(const fs::path& p) { EXPECT_EQ(sqlite3_open(p.c_str(), &db_), SQLITE_OK) << p; }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  /// Every row of `sql` as a JSON object {column: value} (NULL as null), with `text` bound to ?1.
  Json rows(const std::string& sql, const std::string& text = "") const {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db_) << ": " << sql;
    if (!text.empty()) sqlite3_bind_text(s, 1, text.c_str(), -1, SQLITE_TRANSIENT);
    Json out = Json::array();
    while (sqlite3_step(s) == SQLITE_ROW) {
      Json row = Json::object();
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const std::string name = sqlite3_column_name(s, c);
        switch (sqlite3_column_type(s, c)) {
          case SQLITE_INTEGER: row[name] = sqlite3_column_int64(s, c); break;
          case SQLITE_FLOAT: row[name] = sqlite3_column_double(s, c); break;
          case SQLITE_TEXT: row[name] = std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, c))); break;
          default: row[name] = nullptr;
        }
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(s);
    return out;
  }
  long long integer(const std::string& sql) const {
    const Json r = rows(sql);
    return r.empty() ? -1 : r[0].begin()->get<long long>();
  }
  void exec(const std::string& sql) const {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << ": " << sql;
    sqlite3_free(err);
  }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

/// The device rows of a store, in test and stack order, without run_id.
Json device_table(const Db& db, const std::string& run_id) {
  Json rows = db.rows("SELECT * FROM devices WHERE run_id = ?1 ORDER BY position, rowid", run_id);
  for (Json& r : rows) r.erase("run_id");
  return rows;
}

/// What the record holds for a device's figure `name`: the test's metric for the headline (the
/// first device), the device's details.telemetry.devices[].test figure otherwise; null when absent.
Json record_figure(const Json& test, std::size_t device_index, const std::string& name) {
  if (device_index == 0) {
    const Json& m = test.at("metrics");
    return m.contains(name) ? m.at(name).at("value") : Json(nullptr);
  }
  const Json& d = test.at("details").at("telemetry").at("devices").at(device_index);
  return d.contains("test") && d.at("test").contains(name) ? d.at("test").at(name) : Json(nullptr);
}

/// Checks every device row of run `record` in `db` against the record's JSON: one row per test and
/// device its telemetry names, in order, with each figure column the record's number (exactly: a
/// double through SQLite's REAL) or NULL where the record has none. Returns the rows checked.
std::size_t expect_rows_are_the_records(const Db& db, const Json& record) {
  const Json rows = device_table(db, record.at("run_id").get<std::string>());
  std::size_t at = 0, figures = 0;
  for (std::size_t pos = 0; pos < record.at("tests").size(); ++pos) {
    const Json& t = record.at("tests").at(pos);
    if (!t.at("details").contains("telemetry") || !t.at("details").at("telemetry").contains("devices")) continue;
    const Json& devices = t.at("details").at("telemetry").at("devices");
    for (std::size_t k = 0; k < devices.size(); ++k, ++at) {
      SCOPED_TRACE("test " + std::to_string(pos) + ", device " + devices[k].at("name").get<std::string>());
      if (!(at < rows.size())) {
        ADD_FAILURE() << "no row";
        return at;
      }
      const Json& row = rows[at];
      EXPECT_EQ(row.at("position"), pos);
      EXPECT_EQ(row.at("device"), devices[k].at("name"));
      EXPECT_EQ(row.at("role"), devices[k].at("role"));
      EXPECT_EQ(row.at("below"), devices[k].contains("below") ? devices[k].at("below") : Json(nullptr));
      for (const auto& [column, value] : row.items()) {
        if (find_metric_def(column) == nullptr) continue;  // not a figure column
        const Json want = record_figure(t, k, column);
        if (want.is_null()) {
          EXPECT_TRUE(value.is_null()) << column << " = " << value;
        } else {
          EXPECT_EQ(value.get<double>(), want.get<double>()) << column;
          ++figures;
        }
      }
    }
  }
  EXPECT_EQ(at, rows.size()) << "rows the record does not name";
  EXPECT_GT(figures, 0u);
  return at;
}

/// A real run, once per test process: an io test (4 KiB O_DIRECT random writes) and a TPC-C test
/// on SQLite, in a directory of the build tree.
class StoreOfARealRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest runs each test in a process of its own, two at once: a directory per process.
    const fs::path dir = fresh_dir("store_test_" + std::to_string(getpid()));
    fs::create_directories(dir / "target");
    runner::Registry reg;
    emulators::register_emulators(reg);
    oltp::register_emulators(reg);
    config::Diagnostics diags;
    config::Document doc = config::Document::load_string(
        "protocol: store\ntests:\n"
        "  - {name: rw, kind: io, warmup: 0s, duration: 2s, interval: 1s,\n"
        "     io: {engine: psync, rw: randwrite, xfersize: 4k, iodepth: 1, direct: true, file_size: 8m}}\n"
        "  - {name: tpcc, kind: tpcc, warmup: 1s, duration: 3s, interval: 1s,\n"
        "     tpcc: {warehouses: 1, users: 2, scale_items: 1000}}\n",
        "store.yaml", diags);
    runner::Protocol p = runner::decode_protocol(doc, reg, diags);
    ASSERT_TRUE(diags.empty()) << diags.to_string();
    runner::RunOptions o;
    o.target = dir / "target";
    o.out_dir = dir / "out";
    std::ostringstream out;
    o.out = &out;
    runner::StopFlag stop;
    const runner::RunOutcome r = runner::run_protocol(p, o, stop);
    record_path_ = new fs::path(r.record_path);
    scratch_ = new fs::path(dir);
  }
  static void TearDownTestSuite() {
    if (scratch_ != nullptr) fs::remove_all(*scratch_);
    delete record_path_;
    delete scratch_;
  }
  void SetUp() override {
    ASSERT_NE(record_path_, nullptr);
    record_ = Json::parse(read_text(*record_path_));
    ASSERT_EQ(record_.at("tests").size(), 2u);
    for (const Json& t : record_.at("tests")) ASSERT_EQ(t.at("status"), "complete") << t.at("reason");
    if (!record_.at("tests")[0].at("details").at("telemetry").contains("devices"))
      GTEST_SKIP() << "the build tree has no block device: "
                   << record_.at("tests")[0].at("details").at("telemetry").value("no_device", std::string());
    db_path_ = *scratch_ / (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".sqlite");
    fs::remove(db_path_);
  }
  std::string headline() const {
    return record_.at("tests")[0].at("details").at("telemetry").at("devices")[0].at("name").get<std::string>();
  }

  static inline fs::path* record_path_ = nullptr;
  static inline fs::path* scratch_ = nullptr;
  Json record_;
  fs::path db_path_;
};

TEST_F(StoreOfARealRun, ImportGivesARowPerTestAndDeviceWithTheRecordsNumbers) {
  {
    RunStore store(db_path_, true);
    ASSERT_TRUE(store.import_file(*record_path_).stored);
  }
  Db db(db_path_);
  EXPECT_EQ(db.integer("PRAGMA user_version"), 2);
  EXPECT_GE(expect_rows_are_the_records(db, record_), 2u);

  // The query a DBA runs (docs/reporter.md): the headline device's writes per test.
  const Json tpcc = record_.at("tests")[1];
  const Json q = db.rows(
      "SELECT t.name, d.device, d.device_wmb_s, d.device_w_await_ms, d.device_write_bytes_per_new_order,"
      " d.device_write_ios_per_txn, d.device_write_ios_per_io FROM devices d JOIN tests t USING (run_id, position)"
      " WHERE d.role = 'headline' ORDER BY d.position");
  ASSERT_EQ(q.size(), 2u) << q.dump();
  EXPECT_EQ(q[1].at("name"), "tpcc");
  EXPECT_EQ(q[1].at("device"), Json(headline()));
  EXPECT_EQ(q[1].at("device_wmb_s").get<double>(), tpcc.at("metrics").at("device_wmb_s").at("value").get<double>());
  EXPECT_EQ(q[1].at("device_w_await_ms").get<double>(),
            tpcc.at("metrics").at("device_w_await_ms").at("value").get<double>());
  ASSERT_TRUE(tpcc.at("metrics").contains("device_write_bytes_per_new_order")) << "SQLite commits reach the device";
  EXPECT_EQ(q[1].at("device_write_bytes_per_new_order").get<double>(),
            tpcc.at("metrics").at("device_write_bytes_per_new_order").at("value").get<double>());
  EXPECT_TRUE(q[1].at("device_write_ios_per_io").is_null()) << "a TPC-C test did no application I/Os";
  EXPECT_EQ(q[0].at("device_write_ios_per_io").get<double>(),
            record_.at("tests")[0].at("metrics").at("device_write_ios_per_io").at("value").get<double>());
  EXPECT_TRUE(q[0].at("device_write_ios_per_txn").is_null());

  // The query docs/reporter.md gives a DBA, as it is written there.
  const std::string page = read_text(fs::path(DRIVELAB_SOURCE_DIR) / "docs" / "reporter.md");
  const std::size_t from = page.find("```sql\n", page.find("What a DBA asks"));
  ASSERT_NE(from, std::string::npos);
  const std::string doc_sql = page.substr(from + 7, page.find("```", from + 7) - from - 7);
  const Json d = db.rows(doc_sql);
  ASSERT_EQ(d.size(), 1u) << doc_sql << d.dump();
  EXPECT_EQ(d[0].at("name"), "tpcc");
  EXPECT_EQ(d[0].at("device_wmb_s"), q[1].at("device_wmb_s"));
  EXPECT_EQ(d[0].at("device_write_ios_per_new_order").get<double>(),
            tpcc.at("metrics").at("device_write_ios_per_new_order").at("value").get<double>());

  // Drive health: what the run's record says (on a VM's virtio disk: why there is none).
  ASSERT_TRUE(record_.contains("details") && record_.at("details").contains("health")) << "the run reads health once";
  const Json& health = record_.at("details").at("health");
  if (!health.at("available").get<bool>()) {
    const Json h = db.rows("SELECT DISTINCT drive, drive_model, drive_reason FROM devices");
    ASSERT_EQ(h.size(), 1u) << h.dump();
    EXPECT_TRUE(h[0].at("drive").is_null());
    EXPECT_TRUE(h[0].at("drive_model").is_null());
    EXPECT_EQ(h[0].at("drive_reason"), health.at("reason"));
  }
}

/// The version-1 tables, as the code before version 2 created them (results/src/store.cpp).
constexpr const char* kVersion1 =
    "CREATE TABLE runs ("
    " run_id TEXT PRIMARY KEY,"
    " status TEXT NOT NULL, reason TEXT NOT NULL, protocol TEXT NOT NULL,"
    " started_at TEXT NOT NULL, finished_at TEXT NOT NULL,"
    " hostname TEXT, target_model TEXT, target_serial TEXT, target_path TEXT,"
    " source TEXT NOT NULL, imported_at TEXT NOT NULL, record TEXT NOT NULL);"
    "CREATE TABLE tests ("
    " run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
    " position INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,"
    " status TEXT NOT NULL, reason TEXT NOT NULL, measured_s REAL, headline TEXT NOT NULL,"
    " PRIMARY KEY (run_id, position));"
    "CREATE INDEX tests_kind ON tests(kind);"
    "CREATE INDEX tests_name ON tests(name);"
    "PRAGMA user_version = 1;";

/// Stores `text` (a record's JSON) in a version-1 store as its import did: a row of runs with the
/// text byte for byte, a row of tests per test.
void store_as_version_1(const Db& db, const std::string& text, const std::string& source) {
  const Json r = Json::parse(text);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db.handle(),
                               "INSERT INTO runs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                               "'2026-12-07T12:00:00.000Z', ?12)",
                               -1, &s, nullptr),
            SQLITE_OK);
  const auto str = [](const Json& j, const char* key) {
    return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
  };
  const std::vector<std::string> values{str(r, "run_id"),
                                        str(r, "status"),
                                        str(r, "reason"),
                                        str(r, "protocol"),
                                        str(r, "started_at"),
                                        str(r, "finished_at"),
                                        str(r.at("host"), "hostname"),
                                        str(r.at("target"), "model"),
                                        str(r.at("target"), "serial"),
                                        str(r.at("target"), "path"),
                                        source,
                                        text};
  for (std::size_t i = 0; i < values.size(); ++i)
    sqlite3_bind_text(s, static_cast<int>(i + 1), values[i].c_str(), -1, SQLITE_TRANSIENT);
  ASSERT_EQ(sqlite3_step(s), SQLITE_DONE) << sqlite3_errmsg(db.handle());
  sqlite3_finalize(s);
  for (std::size_t i = 0; i < r.at("tests").size(); ++i) {
    const Json& t = r.at("tests")[i];
    db.exec("INSERT INTO tests VALUES ('" + r.at("run_id").get<std::string>() + "', " + std::to_string(i) + ", '" +
            t.at("name").get<std::string>() + "', '" + t.at("kind").get<std::string>() + "', '" +
            t.at("status").get<std::string>() + "', '', 1.0, '{}')");
  }
}

TEST_F(StoreOfARealRun, AVersion1StoreIsUpgradedInPlaceToTheRowsOfAnImport) {
  const std::string text = read_text(*record_path_);
  // An older record, of a drivelab before the telemetry (the report's golden record): no device rows.
  const fs::path old_record = fs::path(DRIVELAB_SOURCE_DIR) / "tests/golden/report_run_disk_1.json";
  {
    Db v1(db_path_);
    v1.exec(kVersion1);
    store_as_version_1(v1, read_text(old_record), old_record.string());
    store_as_version_1(v1, text, record_path_->string());
    EXPECT_EQ(v1.integer("SELECT count(*) FROM sqlite_master WHERE name = 'devices'"), 0);
  }
  {
    RunStore upgraded(db_path_, false);
  }
  Db db(db_path_);
  EXPECT_EQ(db.integer("PRAGMA user_version"), 2);
  EXPECT_EQ(db.integer("SELECT count(*) FROM runs"), 2);
  const std::string old_id = Json::parse(read_text(old_record)).at("run_id");
  EXPECT_EQ(db.integer("SELECT count(*) FROM devices WHERE run_id = '" + old_id + "'"), 0);
  EXPECT_GE(expect_rows_are_the_records(db, record_), 2u);

  // The same rows as an import of the record into a new store.
  const fs::path fresh = db_path_.string() + ".fresh";
  fs::remove(fresh);
  {
    RunStore store(fresh, true);
    store.import_file(*record_path_);
  }
  const std::string id = record_.at("run_id");
  EXPECT_EQ(device_table(db, id), device_table(Db(fresh), id));
  // Opening it again changes nothing.
  const Json before = device_table(db, id);
  {
    RunStore again(db_path_, false);
  }
  EXPECT_EQ(device_table(db, id), before);
  fs::remove(fresh);
}

TEST_F(StoreOfARealRun, WhereDeviceKeepsTheTestsThatRanOnIt) {
  // A copy of the run whose second test has no telemetry (as a record before issue 33).
  Json copy = record_;
  copy["run_id"] = record_.at("run_id").get<std::string>() + "-copy";
  copy["tests"][1]["details"].erase("telemetry");
  const fs::path copy_path = db_path_.string() + ".copy.json";
  write_text(copy_path, copy.dump());
  RunStore store(db_path_, true);
  store.import_file(*record_path_);
  store.import_file(copy_path);
  const std::vector<StoredRun> both = store.select({parse_run_filter("device=" + headline())});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].record.at("tests").size(), 2u);
  ASSERT_EQ(both[1].record.at("tests").size(), 1u) << "only the test whose telemetry names the device";
  EXPECT_EQ(both[1].record.at("tests")[0].at("name"), "rw");
  // With another test key: a test matches both; the copy, whose TPC-C test names no device, has none.
  const std::vector<StoredRun> tpcc =
      store.select({parse_run_filter("device=" + headline()), parse_run_filter("kind=tpcc")});
  ASSERT_EQ(tpcc.size(), 1u);
  EXPECT_EQ(tpcc[0].run_id, record_.at("run_id").get<std::string>());
  ASSERT_EQ(tpcc[0].record.at("tests").size(), 1u);
  EXPECT_EQ(tpcc[0].record.at("tests")[0].at("name"), "tpcc");
  EXPECT_TRUE(store.select({parse_run_filter("device=no-such-device")}).empty());
  fs::remove(copy_path);
}

// ---- Drive health: which drive a device is on, from captured real outputs ----

std::string health_data(const std::string& name) {
  return read_text(fs::path(DRIVELAB_SOURCE_DIR) / "tests" / "data" / "health" / name);
}

/// A drive's reading from captured outputs, as the runner takes it (telemetry/drive_health.hpp).
telemetry::DriveHealthRead drive(const std::string& node, telemetry::HealthSnapshot s) {
  s.device = node;
  return {node, std::move(s), ""};
}

/// A record of one test whose telemetry names `devices` ({name, role, below}) and whose
/// details.health is test_health(before, after) of those readings.
RunRecord record_with_health(const std::vector<std::vector<std::string>>& devices,
                             const telemetry::HealthReading& before, const telemetry::HealthReading& after) {
  RunRecord r;
  r.run_id = "20261207T120000Z-health";
  r.protocol = "p";
  r.status = Status::complete;
  r.started_at = "2026-12-07T12:00:00.000Z";
  r.finished_at = "2026-12-07T12:01:00.000Z";
  r.details["health"] = {{"available", true}};
  TestRecord t;
  t.name = "oltp";
  t.kind = "tpcc";
  t.status = Status::complete;
  t.metrics = {{"device_w_s", 412, "1/s", ""}};
  Json list = Json::array();
  for (const auto& d : devices) {
    Json j = {{"name", d[0]}, {"role", d[1]}};
    if (d.size() > 2) j["below"] = d[2];
    if (d.size() > 2) j["test"] = {{"device_w_s", 100}};
    list.push_back(std::move(j));
  }
  t.details["telemetry"] = {{"devices", std::move(list)}};
  t.details["health"] = telemetry::test_health(before, after).json;
  r.tests.push_back(std::move(t));
  return r;
}

TEST(StoreDeviceHealth, EachDeviceHasTheHealthOfTheOneDriveItIsOn) {
  // A WDC SN730 (nvme-cli 2) that throttled during the test, and a SATA SSD (smartctl 7.3).
  telemetry::HealthSnapshot sn730 = telemetry::parse_nvme_smart_log(health_data("nvme-cli-2-smart-log.json"), "before");
  telemetry::apply_nvme_id_ctrl(sn730, health_data("nvme-cli-id-ctrl-wdc-sn730.json"), "id-ctrl");
  telemetry::HealthSnapshot throttled =
      telemetry::parse_nvme_smart_log(health_data("nvme-cli-2-smart-log-after-throttle.json"), "after");
  telemetry::apply_nvme_id_ctrl(throttled, health_data("nvme-cli-id-ctrl-wdc-sn730.json"), "id-ctrl");
  const telemetry::HealthSnapshot sata =
      telemetry::parse_smartctl(health_data("smartctl-7.3-sat-wdc-wds400t1r0a.json"), "smartctl");
  const telemetry::HealthReading before{
      {drive("/dev/nvme0", sn730), drive("/dev/sdb", sata), {"/dev/sdc", std::nullopt, "smartctl timed out"}}, ""};
  const telemetry::HealthReading after{
      {drive("/dev/nvme0", throttled), drive("/dev/sdb", sata), {"/dev/sdc", std::nullopt, "smartctl timed out"}}, ""};
  // An LVM volume over a partition of the NVMe drive and a SATA disk, and a third disk below too.
  const RunRecord r = record_with_health({{"dm-0", "headline"},
                                          {"nvme0n1p2", "slave", "dm-0"},
                                          {"nvme0n1", "whole_disk", "nvme0n1p2"},
                                          {"sdb", "slave", "dm-0"},
                                          {"sdc1", "slave", "dm-0"}},
                                         before, after);
  const fs::path dir = fresh_dir("store_test_health");
  write_text(dir / "r.json", to_json(r).dump());
  {
    RunStore store(dir / "runs.sqlite", true);
    store.import_file(dir / "r.json");
  }
  Db db(dir / "runs.sqlite");
  const Json rows = device_table(db, r.run_id);
  ASSERT_EQ(rows.size(), 5u) << rows.dump(1);
  const Json& nvme = r.tests[0].details.at("health").at("drives")[0];
  ASSERT_TRUE(nvme.at("throttled").get<bool>());
  for (const int i : {1, 2}) {  // the partition and its disk: the SN730
    SCOPED_TRACE(rows[i].at("device").get<std::string>());
    EXPECT_EQ(rows[i].at("drive"), "/dev/nvme0");
    EXPECT_EQ(rows[i].at("drive_model"), nvme.at("model"));
    EXPECT_EQ(rows[i].at("drive_firmware"), nvme.at("firmware"));
    EXPECT_EQ(rows[i].at("drive_temperature_max_c").get<double>(), nvme.at("temperature_c").at("max").get<double>());
    EXPECT_EQ(rows[i].at("drive_tmt1_transitions"), 4);
    EXPECT_EQ(rows[i].at("drive_tmt2_transitions"), 0);
    EXPECT_EQ(rows[i].at("drive_throttled"), 1);
    EXPECT_EQ(rows[i].at("drive_media_errors"), nvme.at("delta").at("media_errors"));
    EXPECT_EQ(rows[i].at("drive_percentage_used"), nvme.at("percentage_used").at("after"));
    EXPECT_TRUE(rows[i].at("drive_reason").is_null());
  }
  EXPECT_EQ(rows[1].at("device_w_s").get<double>(), 100.0);
  EXPECT_EQ(rows[3].at("drive"), "/dev/sdb");
  EXPECT_EQ(rows[3].at("drive_model"), Json(*sata.model));
  EXPECT_EQ(rows[3].at("drive_throttled"), 0);
  // No reading: the reason the record gives.
  EXPECT_EQ(rows[4].at("drive"), "/dev/sdc");
  EXPECT_TRUE(rows[4].at("drive_model").is_null());
  EXPECT_NE(rows[4].at("drive_reason").get<std::string>().find("smartctl timed out"), std::string::npos)
      << rows[4].dump();
  // The dm device is on three drives: none of theirs is its, and it says where they are.
  EXPECT_EQ(rows[0].at("device_w_s").get<double>(), 412.0);
  EXPECT_TRUE(rows[0].at("drive").is_null());
  EXPECT_EQ(rows[0].at("drive_reason"),
            "dm-0 is on 3 drives (/dev/nvme0, /dev/sdb, /dev/sdc): see the rows of the devices below it");
  fs::remove_all(dir);
}

TEST(StoreVersion, ANewerStoreIsRefusedByName) {
  const fs::path dir = fresh_dir("store_test_newer");
  const fs::path p = dir / "runs.sqlite";
  {
    Db db(p);
    db.exec(kVersion1);
    db.exec("PRAGMA user_version = 3");
  }
  try {
    RunStore store(p, false);
    ADD_FAILURE() << "opened";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("has version 3; this drivelab reads version 2"), std::string::npos)
        << e.what();
  }
  Db db(p);
  EXPECT_EQ(db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'devices'"), 0) << "left as it was";
  fs::remove_all(dir);
}

// --db naming a file in a folder that is not there, or naming a folder: said in drivelab's words, the path
// named, before SQLite is asked (whose own words are "unable to open database file").
TEST(StoreOpen, AMissingFolderOrAFolderIsNamed) {
  const fs::path dir = fresh_dir("store_test_open");
  const auto error_of = [](const fs::path& p) -> std::string {
    try {
      RunStore store(p, true);
    } catch (const EnvironmentError& e) {
      return e.what();
    }
    return "(opened)";
  };
  const std::string missing = error_of(dir / "nowhere" / "runs.sqlite");
  EXPECT_NE(missing.find("its directory '" + (dir / "nowhere").string() + "' does not exist"), std::string::npos)
      << missing;
  EXPECT_FALSE(fs::exists(dir / "nowhere")) << "nothing made";
  const std::string folder = error_of(dir);
  EXPECT_NE(folder.find("is a directory"), std::string::npos) << folder;
  fs::remove_all(dir);
}

// A device figure declared after a store was made: the store gains its column when opened.
TEST(StoreVersion, AFigureDeclaredLaterGainsItsColumnOnOpen) {
  const fs::path dir = fresh_dir("store_test_column");
  const fs::path p = dir / "runs.sqlite";
  {
    RunStore store(p, true);
  }
  {
    Db db(p);  // as made before device_util_pct was declared
    db.exec("ALTER TABLE devices DROP COLUMN device_util_pct");
    EXPECT_EQ(db.integer("SELECT count(*) FROM pragma_table_info('devices') WHERE name = 'device_util_pct'"), 0);
  }
  {
    RunStore store(p, false);
  }
  Db db(p);
  EXPECT_EQ(db.integer("SELECT count(*) FROM pragma_table_info('devices') WHERE name = 'device_util_pct'"), 1);
  EXPECT_EQ(db.integer("PRAGMA user_version"), 2);
  fs::remove_all(dir);
}

TEST(StoreFilter, DeviceIsAKeyOfWhere) {
  const RunFilter f = parse_run_filter("device=nvme0n1p2");
  EXPECT_EQ(f.key, "device");
  EXPECT_EQ(f.value, "nvme0n1p2");
}

// A date of the right shape that the calendar lacks is refused for what it is, not for its format.
TEST(StoreFilter, ADateTheCalendarLacksIsSaidSo) {
  const auto error_of = [](const std::string& text) {
    try {
      parse_run_filter(text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(error_of("since=2026-02-30"),
            "--where 'since=2026-02-30': 2026-02-30 is not a day of the calendar: 2026-02 has 28 days");
  EXPECT_EQ(error_of("since=2028-02-30"),
            "--where 'since=2028-02-30': 2028-02-30 is not a day of the calendar: 2028-02 has 29 days");
  EXPECT_EQ(error_of("since=2026-13-45"),
            "--where 'since=2026-13-45': 2026-13-45 is not a day of the calendar: there is no month 13");
  EXPECT_EQ(error_of("until=2026-12-06T25:61:00"),
            "--where 'until=2026-12-06T25:61:00': hour 25 is not a time of day (00-23)");
  EXPECT_EQ(error_of("until=2026-12-06T23:61"),
            "--where 'until=2026-12-06T23:61': minute 61 is not a time of day (00-59)");
  // The wrong shape is still a format error.
  EXPECT_EQ(error_of("since=yesterday"),
            "--where 'since=yesterday': since must be a UTC date YYYY-MM-DD or time YYYY-MM-DDTHH:MM:SS");
  EXPECT_EQ(error_of("since=2024-02-29"), "(accepted)");
}

}  // namespace
}  // namespace drivelab::results
