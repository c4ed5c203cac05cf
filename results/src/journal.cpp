// The append-only journal and the recovery of a record from it (rules in journal.hpp).
#include "drivelab/results/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/units.hpp"
#include "drivelab/results/record_stats.hpp"
#include "file_io.hpp"
#include "json_read.hpp"

namespace drivelab::results {
namespace fs = std::filesystem;

Journal::Journal(const fs::path& path, std::uint64_t reserve_bytes) : path_(path) {
  fd_.reset(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd_) throw_errno("cannot create journal '" + path.string() + "'", errno);
  if (reserve_bytes > 0) {
    const fs::path reserve = reserve_path();
    reserve_fd_.reset(::open(reserve.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!reserve_fd_) throw_errno("cannot create the results reserve '" + reserve.string() + "'", errno);
    reserved_ = true;
    // Held while the run lives: a reserve nobody holds is a dead run's (remove_stale_reserves).
    (void)::flock(reserve_fd_.get(), LOCK_EX | LOCK_NB);
    if (const int err = ::posix_fallocate(reserve_fd_.get(), 0, static_cast<off_t>(reserve_bytes)); err != 0) {
      release_reserve_locked();
      std::error_code ec;
      fs::remove(path, ec);  // the run is refused: no empty journal is left to look like one
      throw EnvironmentError(fmt::format("cannot reserve {} for the results beside journal '{}': {}",
                                         format_size(reserve_bytes), path.string(), errno_text(err)));
    }
  }
  // Make the new directory entry durable too, or a power loss could lose the whole file.
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd && ::fsync(dir_fd.get()) != 0 && errno != EINVAL) {
    throw_errno("cannot fsync the directory of journal '" + path.string() + "'", errno);
  }
}

Journal::~Journal() {
  if (mu_) release_reserve_locked();
}

fs::path Journal::reserve_path() const { return path_.empty() ? fs::path() : fs::path(path_.string() + ".reserve"); }

void Journal::release_reserve() noexcept {
  if (!mu_) return;
  std::lock_guard lock(*mu_);
  release_reserve_locked();
}

void Journal::release_reserve_locked() noexcept {
  if (!reserved_) return;
  reserved_ = false;
  std::error_code ec;
  fs::remove(reserve_path(), ec);  // unlink first, then close (releases the lock)
  reserve_fd_.reset();
}

namespace {

/// Removes reserve file `p` unless a live run holds its lock.
bool remove_if_unheld(const fs::path& p) {
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return false;  // gone already, or its run is alive
  std::error_code rm;
  return fs::remove(p, rm);
}

}  // namespace

std::vector<fs::path> remove_stale_reserves(const fs::path& dir) {
  std::vector<fs::path> removed;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (!p.string().ends_with(".journal.jsonl.reserve") || !it->is_regular_file(ec)) continue;
    if (remove_if_unheld(p)) removed.push_back(p);
  }
  return removed;
}

void refuse_journal_as_record(std::string_view source, std::string_view text) {
  constexpr std::string_view kJournalSuffix = ".journal.jsonl";
  if (!source.ends_with(kJournalSuffix) && !text.starts_with("{\"event\":\"run_start\"")) return;
  const std::string record = source.ends_with(kJournalSuffix)
                                 ? std::string(source.substr(0, source.size() - kJournalSuffix.size())) + ".json"
                                 : std::string("the run's .json");
  throw ConfigError(fmt::format(
      "{}: a run's journal, not a result record: use the record beside it ({}) when the run ended, or, for a "
      "run that was killed (its record still says \"run in progress\"), `drivelab results recover {}`, which "
      "writes <run_id>.recovered.json from the journal",
      source, record, source));
}

bool journal_run_alive(const fs::path& journal) {
  const fs::path p = journal.string() + ".reserve";
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return false;  // no reserve: the run ended (or released it when its disk filled)
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return false;  // nobody holds it: a killed run's
  return errno == EWOULDBLOCK;
}

bool remove_stale_reserve(const fs::path& journal) {
  const fs::path p = journal.string() + ".reserve";
  std::error_code ec;
  return fs::is_regular_file(p, ec) && remove_if_unheld(p);
}

std::string Journal::failure() const {
  if (!mu_) return {};
  std::lock_guard lock(*mu_);
  return failure_;
}

bool Journal::kept_after_failure() const {
  if (!mu_) return false;
  std::lock_guard lock(*mu_);
  return kept_after_failure_;
}

int Journal::write_line(const std::string& line) noexcept {
  std::size_t written = 0;
  const int err = detail::write_fully(fd_.get(), torn_ ? "\n" + line : line, written);
  if (err != 0) {
    if (written > 0) torn_ = true;
    return err;
  }
  torn_ = false;
  return ::fdatasync(fd_.get()) != 0 ? errno : 0;
}

void Journal::append(const Json& event) {
  // Compact dump: strings escape their newlines, so one event is exactly one line.
  std::string line = detail::dump_json(event, -1);
  line.push_back('\n');
  if (!mu_) throw EnvironmentError("journal: append on a moved-from Journal");
  std::lock_guard lock(*mu_);
  if (!fd_) throw EnvironmentError("journal '" + path_.string() + "' is not open");
  const int err = write_line(line);
  if (err == 0) return;
  const std::string what = fmt::format("cannot append to journal '{}': {}", path_.string(), errno_text(err));
  if (failure_.empty()) {
    failure_ = what;
    if (reserved_) {
      release_reserve_locked();
      kept_after_failure_ = write_line(line) == 0;
    }
  }
  throw EnvironmentError(what);
}

// ---- events ----------------------------------------------------------------------------------

Json journal_run_start(const RunRecord& header) {
  Json record = to_json(header);
  record["tests"] = Json::array();
  return Json{{"event", "run_start"}, {"record", std::move(record)}};
}

Json journal_test_start(const TestRecord& test) {
  Json out{{"event", "test_start"}, {"test", test.name}, {"kind", test.kind}};
  if (test.repetition > 0) {
    out["repetition"] = test.repetition;
    out["seed"] = test.seed;
  }
  if (test.discarded) out["discarded"] = true;
  out["config"] = test.config;
  out["at"] = test.started_at;
  return out;
}

Json journal_interval(std::string_view test, const Interval& interval) {
  return Json{{"event", "interval"}, {"test", test}, {"interval", to_json(interval)}};
}

Json journal_groups(std::string_view test, const std::vector<MetricGroup>& groups) {
  TestRecord t;
  t.groups = groups;
  return Json{{"event", "groups"}, {"test", test}, {"groups", std::move(to_json(t)["groups"])}};
}

Json journal_test_end(const TestRecord& test) {
  return Json{{"event", "test_end"}, {"test", test.name}, {"record", to_json(test)}};
}

Json journal_run_end(Status status, std::string_view reason, std::string_view at) {
  return Json{{"event", "run_end"}, {"status", to_string(status)}, {"reason", reason}, {"at", at}};
}

// ---- recovery --------------------------------------------------------------------------------

namespace {

using namespace detail;  // NOLINT(google-build-using-namespace)

struct Line {
  std::size_t number;  // 1-based
  std::string_view text;
  bool terminated;  // followed by '\n' (a line cut by a crash is not)
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t number = 1;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back({number, text, false});
      break;
    }
    lines.push_back({number++, text.substr(0, nl), true});
    text.remove_prefix(nl + 1);
  }
  return lines;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

/// Whether `j` is a result record (what the runner writes as <run_id>.json), not a journal event.
bool is_record(const Json& j) { return j.is_object() && j.contains("schema") && j.contains("tests"); }

/// Whether a record is one a killed run left: written before the run knew its end, the run or a
/// test still `running` (the runner writes the run as it would stand if it ended there, so the run
/// may say `interrupted` while its test says `running`).
bool unfinished(const Json& record) {
  if (!record.is_object()) return false;
  if (record.value("status", "") == "running") return true;
  const auto tests = record.find("tests");
  if (tests == record.end() || !tests->is_array()) return false;
  return std::any_of(tests->begin(), tests->end(),
                     [](const Json& t) { return t.is_object() && t.value("status", "") == "running"; });
}

/// The error of `results recover` given a record instead of a journal. A record a killed run left
/// (unfinished) holds less than its journal: the journal is named.
ConfigError record_not_journal(const fs::path& path, const Json& record) {
  std::string journal = path.string();
  if (journal.ends_with(".json")) journal.resize(journal.size() - 5);
  journal += ".journal.jsonl";
  if (unfinished(record))
    return ConfigError(fmt::format(
        "'{}' is the record of a run that never ended (a test still running: it was killed, or is still running) "
        "and holds only what was written before: recover its journal instead, `drivelab results recover {}`",
        path.string(), journal));
  return ConfigError(
      fmt::format("'{}' is a result record, not a journal: a record needs no recovery (drivelab report and results "
                  "validate read it as it is); to rebuild the record of a run that was killed, give its journal "
                  "<run_id>.journal.jsonl, written beside the record",
                  path.string()));
}

class Recovery {
 public:
  explicit Recovery(const fs::path& path) : path_(path) {}

  RunRecord run(std::string_view text) {
    text_ = text;
    const std::vector<Line> lines = split_lines(text);
    for (const Line& line : lines) {
      if (blank(line.text)) continue;
      std::optional<Json> event = parse(line, &line == &lines.back());
      if (!event) continue;
      if (!record_) {
        start(*event, line.number);
        continue;
      }
      try {
        apply(*event);
      } catch (const ConfigError& e) {
        const Json* name = event->is_object() ? member(*event, "event") : nullptr;
        const std::string kind = name != nullptr && name->is_string() ? name->get<std::string>() : "?";
        warn("line " + std::to_string(line.number) + ": " + kind + " event: " + e.what() + "; skipped");
      }
    }
    if (!record_) {
      throw ConfigError("journal '" + path_.string() +
                        "' has no complete run_start event (empty, or cut in its first line)");
    }
    finish();
    return std::move(*record_);
  }

 private:
  std::optional<Json> parse(const Line& line, bool last) {
    try {
      return Json::parse(line.text);
    } catch (const Json::parse_error&) {
      if (last && !line.terminated) {
        warn("dropped the incomplete last line " + std::to_string(line.number) + " (" +
             std::to_string(line.text.size()) + " bytes, cut off when the run stopped)");
      } else if (!record_) {
        // A pretty-printed record's first line is "{": say what the file is.
        if (Json whole = Json::parse(text_, nullptr, /*allow_exceptions=*/false); is_record(whole))
          throw record_not_journal(path_, whole);
        throw ConfigError("journal '" + path_.string() + "': line " + std::to_string(line.number) +
                          " is not valid JSON (expected the run_start event)");
      } else {
        warn("line " + std::to_string(line.number) + " is not valid JSON; skipped");
      }
      return std::nullopt;
    }
  }

  void start(const Json& event, std::size_t line_number) {
    const std::string where = "journal '" + path_.string() + "': line " + std::to_string(line_number);
    if (is_record(event)) throw record_not_journal(path_, event);  // a record written on one line
    const Json* name = event.is_object() ? member(event, "event") : nullptr;
    if (name == nullptr || *name != "run_start" || member(event, "record") == nullptr) {
      throw ConfigError(where + ": expected a run_start event first");
    }
    try {
      record_ = run_record_from_json(event["record"]);
    } catch (const ConfigError& e) {
      throw ConfigError(where + ": run_start record: " + e.what());
    }
    record_->tests.clear();
    record_->warnings.insert(record_->warnings.begin(), pending_warnings_.begin(), pending_warnings_.end());
  }

  void apply(const Json& event) {
    object_at(event, "event");
    const std::string kind = as_string(required(event, "event", ""), "event");
    if (kind == "test_start") {
      TestRecord t;
      t.name = as_string(required(event, "test", ""), "test");
      read_opt(event, "kind", "", t.kind);
      read_opt(event, "at", "", t.started_at);
      if (const Json* rep = member(event, "repetition")) t.repetition = static_cast<int>(as_int64(*rep, "repetition"));
      if (const Json* seed = member(event, "seed")) t.seed = as_uint64(*seed, "seed");
      if (const Json* d = member(event, "discarded")) t.discarded = as_bool(*d, "discarded");
      if (const Json* c = member(event, "config")) t.config = *c;
      t.status = Status::running;
      last_ended_.reset();
      open_[t.name] = record_->tests.size();
      record_->tests.push_back(std::move(t));
    } else if (kind == "interval") {
      const std::string test = as_string(required(event, "test", ""), "test");
      const auto it = open_.find(test);
      if (it == open_.end()) {
        warn("interval for test '" + test + "' that was not started; skipped");
        return;
      }
      record_->tests[it->second].intervals.push_back(interval_from_json(required(event, "interval", "")));
    } else if (kind == "groups") {
      put_groups(event);
    } else if (kind == "test_end") {
      const std::string test = as_string(required(event, "test", ""), "test");
      TestRecord t = test_record_from_json(required(event, "record", ""));
      if (const auto it = open_.find(test); it != open_.end()) {
        record_->tests[it->second] = std::move(t);
        last_ended_ = {test, it->second};
        open_.erase(it);
      } else if (last_ended_ && last_ended_->first == test &&
                 record_->tests[last_ended_->second].repetition == t.repetition) {
        // The same test ended again with no test_start between: the runner rewrites a test's end
        // when the journal failed while writing it (its status becomes failed); the later wins.
        // (Skipped repetitions of one test end one after the other: each its own.)
        record_->tests[last_ended_->second] = std::move(t);
      } else {
        last_ended_ = {test, record_->tests.size()};
        record_->tests.push_back(std::move(t));
      }
    } else if (kind == "run_end") {
      record_->status = as_status(required(event, "status", ""), "status");
      read_opt(event, "reason", "", record_->reason);
      read_opt(event, "at", "", record_->finished_at);
      saw_run_end_ = true;
    }
    // Other event names come from newer writers; they carry nothing this reader can place.
  }

  /// A `groups` event: each group into the open test, replacing one of the same name.
  void put_groups(const Json& event) {
    const std::string test = as_string(required(event, "test", ""), "test");
    const auto it = open_.find(test);
    if (it == open_.end()) {
      warn("groups for test '" + test + "' that was not started; skipped");
      return;
    }
    const TestRecord read =
        test_record_from_json(Json{{"name", test}, {"status", "running"}, {"groups", required(event, "groups", "")}});
    std::vector<MetricGroup>& groups = record_->tests[it->second].groups;
    for (const MetricGroup& g : read.groups) {
      const auto same =
          std::find_if(groups.begin(), groups.end(), [&](const MetricGroup& x) { return x.name == g.name; });
      if (same != groups.end())
        *same = g;
      else
        groups.push_back(g);
    }
  }

  void finish() {
    for (const auto& [name, index] : open_) {
      TestRecord& t = record_->tests[index];
      t.status = Status::interrupted;
      t.reason = "journal ends before test_end";
      if (!t.intervals.empty()) t.measured_s = t.intervals.back().t_s;
      if (!t.groups.empty()) {
        std::string names;
        for (const MetricGroup& g : t.groups) names += (names.empty() ? "" : ", ") + g.name;
        t.warnings.push_back(fmt::format(
            "{}{}: each is a run that finished before the process died (a curve's max run and points); "
            "the runs after them and the test's headline metrics and histograms, written at its end, are missing",
            kRecoveredGroupsWarning, names));
      }
    }
    if (!saw_run_end_) {
      record_->status = Status::interrupted;
      record_->reason = "journal ends before run_end";
    }
    record_->repetitions = summarize_repetitions(*record_);
  }

  void warn(const std::string& text) {
    std::string w = "journal recovery: " + text;
    if (record_) {
      record_->warnings.push_back(std::move(w));
    } else {
      pending_warnings_.push_back(std::move(w));
    }
  }

  fs::path path_;
  std::string_view text_;  // the whole journal (run)
  std::optional<RunRecord> record_;
  std::map<std::string, std::size_t> open_;                        // test name -> index in record_->tests
  std::optional<std::pair<std::string, std::size_t>> last_ended_;  // the test the last test_end ended
  std::vector<std::string> pending_warnings_;
  bool saw_run_end_ = false;
};

}  // namespace

RunRecord recover_from_journal(const fs::path& path) { return Recovery(path).run(detail::read_file(path, "journal")); }

}  // namespace drivelab::results
