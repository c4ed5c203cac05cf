// The inputs of a merge of hosts' records: which input is which rank (merge_inputs.hpp).
#include "merge_inputs.hpp"

#include <algorithm>

#include "drivelab/core/errors.hpp"
#include "drivelab/results/journal.hpp"
#include "drivelab/results/record_stats.hpp"
#include "json_read.hpp"

namespace drivelab::results::detail {
namespace {

std::string cohort_string(const Json& cohort, const char* key, const std::string& source) {
  const Json* v = member(cohort, key);
  if (v == nullptr || !v->is_string()) throw ConfigError(fmt::format("{}: cohort.{}: expected a string", source, key));
  return v->get<std::string>();
}

int cohort_int(const Json& cohort, const char* key, const std::string& source) {
  const Json* v = member(cohort, key);
  if (v == nullptr || !v->is_number_integer())
    throw ConfigError(fmt::format("{}: cohort.{}: expected an integer", source, key));
  return v->get<int>();
}

/// The same test of the protocol: its name and, in a repeated run, its repetition.
bool same_test(const TestRecord& a, const TestRecord& b) { return a.name == b.name && a.repetition == b.repetition; }
/// The key of two tests that are not the same: their name, else their repetition.
const char* differing_key(const TestRecord& a, const TestRecord& b) { return a.name != b.name ? "name" : "repetition"; }

/// Inputs without a cohort: every test that two or more of them ran overlaps in time on all of
/// them (its latest start before its earliest end), else they are different runs of one protocol
/// (started minutes apart, one after the other) whose sum no host delivered at any time.
void check_ran_together(const std::vector<Host>& hosts, std::size_t test_count) {
  for (std::size_t i = 0; i < test_count; ++i) {
    const Host* first_end = nullptr;
    const Host* last_start = nullptr;
    std::size_t timed = 0;
    for (const Host& h : hosts) {
      if (i >= h.record().tests.size()) continue;
      const TestRecord& t = h.record().tests[i];
      if (t.status == Status::skipped || t.started_at.empty() || t.finished_at.empty()) continue;
      ++timed;
      if (first_end == nullptr || t.finished_at < first_end->record().tests[i].finished_at) first_end = &h;
      if (last_start == nullptr || t.started_at > last_start->record().tests[i].started_at) last_start = &h;
    }
    if (timed < 2 || last_start->record().tests[i].started_at < first_end->record().tests[i].finished_at) continue;
    const TestRecord& late = last_start->record().tests[i];
    throw ConfigError(fmt::format(
        "{}: tests[{}].started_at {}: test '{}' started after it had ended in {} (finished_at {}): these are "
        "records of different runs, not the hosts of one run. Records without a cohort (runs started without "
        "MPI) merge as the hosts of one run only when their tests ran at the same time (the same protocol "
        "started together, e.g. with --start-at); to compare separate runs, use drivelab compare",
        last_start->input->source, i, late.started_at, test_label(late), first_end->input->source,
        first_end->record().tests[i].finished_at));
  }
}

}  // namespace

Hosts collect_hosts(const std::vector<MergeInput>& inputs) {
  const bool with_cohort = !inputs.front().record.cohort.is_null();
  Hosts out;
  std::vector<Host>& hosts = out.hosts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const MergeInput& in = inputs[i];
    const Json& c = in.record.cohort;
    if (c.is_null() == with_cohort) {
      throw ConfigError(fmt::format("{}: cohort: {} while {} {}", in.source, with_cohort ? "missing" : "present",
                                    inputs.front().source, with_cohort ? "has one" : "has none"));
    }
    // The same record twice (a file and its copy, a record and its own journal) is one host,
    // not two: summing it twice would double every rate.
    for (std::size_t j = 0; j < i; ++j)
      if (inputs[j].record.run_id == in.record.run_id)
        throw ConfigError(fmt::format("{}: run_id '{}' is also the run of {}: the same run given twice", in.source,
                                      in.record.run_id, inputs[j].source));
    if (!c.is_null() && member(c, "rank") == nullptr && member(c, "ranks") != nullptr)
      throw ConfigError(
          fmt::format("{}: a merged record (its cohort lists ranks): give the per-rank records "
                      "<job_id>-r<k>.json or their journals",
                      in.source));
    Host h;
    h.input = &in;
    const Json* hn = in.record.host.is_object() ? member(in.record.host, "hostname") : nullptr;
    h.name = hn != nullptr && hn->is_string() ? hn->get<std::string>() : "";
    if (with_cohort) {
      const std::string job = cohort_string(c, "job_id", in.source);
      const int n = cohort_int(c, "size", in.source);
      h.rank = cohort_int(c, "rank", in.source);
      if (const Json* off = member(c, "clock_offset_ns"); off != nullptr && off->is_number_integer())
        h.clock_offset_ns = off->get<std::int64_t>();
      if (const Json* u = member(c, "clock_offset_uncertainty_ns"); u != nullptr && u->is_number_integer())
        h.clock_offset_uncertainty_ns = u->get<std::int64_t>();
      if (i == 0) {
        out.job_id = job;
        out.size = n;
        if (const Json* names = member(c, "hosts"); names != nullptr && names->is_array())
          for (const Json& x : *names) out.names.push_back(x.is_string() ? x.get<std::string>() : "");
      } else if (job != out.job_id) {
        throw ConfigError(fmt::format("{}: cohort.job_id '{}' differs from '{}' of {}", in.source, job, out.job_id,
                                      inputs.front().source));
      } else if (n != out.size) {
        throw ConfigError(
            fmt::format("{}: cohort.size {} differs from {} of {}", in.source, n, out.size, inputs.front().source));
      }
      if (h.rank < 0 || h.rank >= out.size)
        throw ConfigError(fmt::format("{}: cohort.rank {} is outside 0..{}", in.source, h.rank, out.size - 1));
      for (const Host& o : hosts)
        if (o.rank == h.rank)
          throw ConfigError(
              fmt::format("{}: cohort.rank {} is also the rank of {}", in.source, h.rank, o.input->source));
    } else {
      h.rank = static_cast<int>(i);
    }
    hosts.push_back(h);
  }
  if (!with_cohort) {
    out.size = static_cast<int>(inputs.size());
    out.job_id = "merged-" + inputs.front().record.run_id;
  }
  std::sort(hosts.begin(), hosts.end(), [](const Host& a, const Host& b) { return a.rank < b.rank; });
  out.names.resize(static_cast<std::size_t>(out.size));
  for (Host& h : hosts) {
    std::string& known = out.names[static_cast<std::size_t>(h.rank)];
    if (known.empty()) known = h.name;
    h.name = known;
  }
  return out;
}

std::size_t common_test_count(const std::vector<Host>& hosts) {
  const Host& base = hosts.front();
  const RunRecord& b = base.record();
  for (const Host& h : hosts) {
    const RunRecord& r = h.record();
    const std::string& src = h.input->source;
    if (r.protocol != b.protocol)
      throw ConfigError(
          fmt::format("{}: protocol '{}' differs from '{}' of {}", src, r.protocol, b.protocol, base.input->source));
    const std::size_t common = std::min(r.tests.size(), b.tests.size());
    for (std::size_t i = 0; i < common; ++i)
      if (!same_test(r.tests[i], b.tests[i]))
        throw ConfigError(fmt::format("{}: tests[{}].{} '{}' differs from '{}' of {}", src, i,
                                      differing_key(r.tests[i], b.tests[i]), test_label(r.tests[i]),
                                      test_label(b.tests[i]), base.input->source));
  }
  std::size_t test_count = 0;
  for (const Host& h : hosts) test_count = std::max(test_count, h.record().tests.size());
  for (const Host& h : hosts) {
    const RunRecord& r = h.record();
    if (r.status == Status::complete && r.tests.size() != test_count) {
      const Host& longest = *std::find_if(hosts.begin(), hosts.end(),
                                          [&](const Host& o) { return o.record().tests.size() == test_count; });
      throw ConfigError(fmt::format("{}: tests: {} tests in a complete record, {} in {}", h.input->source,
                                    r.tests.size(), test_count, longest.input->source));
    }
  }
  if (base.record().cohort.is_null()) check_ran_together(hosts, test_count);
  for (std::size_t i = 0; i < test_count; ++i) {  // tests beyond the base's record
    const TestRecord* first = nullptr;
    for (const Host& h : hosts) {
      if (i >= h.record().tests.size()) continue;
      if (first == nullptr) {
        first = &h.record().tests[i];
      } else if (!same_test(h.record().tests[i], *first)) {
        throw ConfigError(fmt::format("{}: tests[{}].{} '{}' differs from '{}'", h.input->source, i,
                                      differing_key(h.record().tests[i], *first), test_label(h.record().tests[i]),
                                      test_label(*first)));
      }
    }
  }
  return test_count;
}

}  // namespace drivelab::results::detail

namespace drivelab::results {
namespace {

bool is_journal(const std::filesystem::path& p) { return p.extension() == ".jsonl"; }

}  // namespace

std::filesystem::path journal_of_input(const std::filesystem::path& path, const RunRecord& record) {
  if (is_journal(path)) return path;
  return path.parent_path() / (record.run_id + ".journal.jsonl");
}

LoadedInput read_merge_input(const std::filesystem::path& path) {
  if (is_journal(path)) return {{recover_from_journal(path), path.string()}, ""};
  LoadedInput out{{read_record(path), path.string()}, ""};
  const RunRecord& rec = out.input.record;
  if (!is_live(rec) || rec.run_id.empty()) return out;
  const std::filesystem::path journal = journal_of_input(path, rec);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(journal, ec)) return out;
  RunRecord recovered;
  try {
    recovered = recover_from_journal(journal);
  } catch (const std::exception& e) {
    out.note = fmt::format("{} is stale (a live record) and its journal {} does not read ({}): merged from the record",
                           path.string(), journal.string(), e.what());
    return out;
  }
  if (recovered.run_id != rec.run_id || !holds_at_least(recovered, rec)) return out;
  out.note = fmt::format("{} is stale (a live record, {} intervals): its journal {} holds {}; merged from the journal",
                         path.string(), interval_count(rec), journal.string(), interval_count(recovered));
  out.input.record = std::move(recovered);
  return out;
}

}  // namespace drivelab::results
