// `drivelab report` on merged multi-host records (issue 16 part 7, docs/reporter.md "Multi-host
// records"): the records are written by the test as JSON files, following the merged record of
// the multi-host spec exactly (cohort, target kind "hosts", hosts[] with each host's tests,
// metrics and intervals, the group lab_conventions), and read back through add_file as a user's
// `drivelab report FILE...` does.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/report/report.hpp"
#include "multihost_records.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using results::Json;
using testing::FixtureHost;
using testing::four_hosts;
using testing::merged_record;
using testing::rank_record;
using testing::read_text;
using testing::single_host_record;
using testing::table_of;
using testing::TempDir;

std::vector<std::string> csv_lines_with(const std::string& csv, const std::string& part) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < csv.size()) {
    const std::size_t end = csv.find('\n', start);
    const std::string line = csv.substr(start, end - start);
    if (line.find(part) != std::string::npos) out.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

TEST(ReportMultiHost, SystemRowWithPerHostRowsInMarkdownCsvAndHtml) {
  TempDir dir;
  const auto file = dir.write("merged.json", merged_record("20261202T100000Z-aaaaaa", four_hosts(), 4.9).dump(2));
  Dataset d;
  add_file(d, file, "Lab");
  ASSERT_EQ(d.results.size(), 1u);
  EXPECT_EQ(d.results[0].drive, "Lab (4 hosts)");
  EXPECT_EQ(d.results[0].hosts, 4u);
  ASSERT_EQ(d.results[0].per_host.size(), 4u);
  const Report r = build_report(std::move(d));

  const MetricTable* tps = table_of(r, "sqlserver_oltp_4vms", "tps");
  ASSERT_NE(tps, nullptr);
  ASSERT_EQ(tps->cells.size(), 1u);
  EXPECT_EQ(tps->cells[0].drive, "Lab (4 hosts)");
  EXPECT_EQ(tps->cells[0].median, 405);
  EXPECT_EQ(place(tps->cells[0]), "1st of 1");
  ASSERT_EQ(tps->host_cells.size(), 4u);
  const std::vector<std::string> names{"a", "b", "c", "d"};
  const std::vector<double> values{100, 110, 90, 105};
  for (std::size_t k = 0; k < 4; ++k) {
    const Cell& c = tps->host_cells[k];
    ASSERT_TRUE(c.host.has_value());
    EXPECT_EQ(c.host->name, names[k]);
    EXPECT_EQ(c.host->rank, static_cast<int>(k));
    EXPECT_EQ(c.host->status, "complete");
    EXPECT_EQ(c.drive, "Lab (4 hosts)");
    EXPECT_EQ(c.median, values[k]);
    EXPECT_EQ(c.rank, 0) << "per-host rows are never ranked";
    EXPECT_EQ(c.hosts, 4u);
  }
  const MetricTable* lat = table_of(r, "sqlserver_oltp_4vms", "latency_avg_ms");
  ASSERT_NE(lat, nullptr);
  EXPECT_EQ(lat->cells[0].median, 4.9);  // the exact (merged-histogram) figure, not the mean 4.95
  ASSERT_EQ(lat->host_cells.size(), 4u);
  EXPECT_EQ(lat->host_cells[1].median, 4.5);

  // The labs' conventions: their own unranked tables after the exact ones, never a headline.
  const MetricTable* sum = table_of(r, "sqlserver_oltp_4vms", "sum_of_hosts_tps");
  const MetricTable* mean = table_of(r, "sqlserver_oltp_4vms", "mean_of_hosts_latency_avg_ms");
  ASSERT_NE(sum, nullptr);
  ASSERT_NE(mean, nullptr);
  EXPECT_TRUE(sum->lab_convention);
  EXPECT_TRUE(mean->lab_convention);
  EXPECT_EQ(sum->cells.at(0).rank, 0);
  EXPECT_DOUBLE_EQ(mean->cells.at(0).median, 4.95);
  EXPECT_EQ(mean->cells.at(0).rank, 0);
  EXPECT_FALSE(tps->lab_convention);
  for (const auto& t : r.tables)
    if (t.lab_convention) {
      EXPECT_NE(&t, &r.tables.front());
    }
  for (const auto& c : r.comparisons) EXPECT_FALSE(c.metric.starts_with("sum_of_hosts")) << c.metric;

  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("## sqlserver_oltp_4vms\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| Lab (4 hosts) | measured | 405 TPS (1st of 1) | 4.90 ms (1st of 1) | 405 TPS | 4.95 ms |\n"
                    "| ↳ host a (rank 0) | host, complete | 100 TPS | 5.00 ms |  |  |\n"
                    "| ↳ host b (rank 1) | host, complete | 110 TPS | 4.50 ms |  |  |\n"
                    "| ↳ host c (rank 2) | host, complete | 90 TPS | 5.50 ms |  |  |\n"
                    "| ↳ host d (rank 3) | host, complete | 105 TPS | 4.80 ms |  |  |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("sum_of_hosts_tps (lab convention: not an exact figure, not ranked)"), std::string::npos) << md;
  EXPECT_NE(md.find("Columns marked \"lab convention\" are the review labs' way of adding hosts up"),
            std::string::npos);

  const std::string csv = to_csv(r);
  EXPECT_TRUE(csv.starts_with(
      "test,metric,unit,better,drive,origin,rank,of,place,median,min,max,n,status,sources,row,hosts,host,host_rank,"
      "mean,mean_ci_low,mean_ci_high,ranked_by\n"));
  const auto tps_rows = csv_lines_with(csv, "sqlserver_oltp_4vms,tps,");
  ASSERT_EQ(tps_rows.size(), 5u) << csv;
  EXPECT_EQ(tps_rows[0],
            fmt::format("sqlserver_oltp_4vms,tps,1/s,higher,Lab (4 hosts),measured,1,1,1st of 1,405,405,405,1,"
                        "complete,{},system,4,,,405,,,medians",  // one repetition: ranked, not tested
                        file.string()));
  EXPECT_EQ(tps_rows[2], fmt::format("sqlserver_oltp_4vms,tps,1/s,higher,Lab (4 hosts),measured,,,,110,110,110,1,"
                                     "complete,{},host,4,b,1,110,,,",
                                     file.string()));
  const auto sum_rows = csv_lines_with(csv, "sqlserver_oltp_4vms,sum_of_hosts_tps,");
  ASSERT_EQ(sum_rows.size(), 1u) << csv;
  EXPECT_NE(sum_rows[0].find(",,,,405,405,405,1,lab_convention,"), std::string::npos) << sum_rows[0];

  const std::string html = to_html(r, {}, "");
  EXPECT_NE(html.find("<tr class=\"measured\"><td>Lab (4 hosts)</td><td>measured</td>"), std::string::npos) << html;
  EXPECT_NE(
      html.find("<tr class=\"host\"><td>↳ host b (rank 1)</td><td>host, complete</td><td>110 TPS</td><td>4.50 ms</td>"),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("lab convention: not an exact figure, not ranked"), std::string::npos);
}

TEST(ReportMultiHost, NHostsRankOnlyAgainstNHosts) {
  TempDir dir;
  std::vector<FixtureHost> slower = four_hosts();
  for (auto& h : slower) h.tps -= 25;  // 305 in total
  std::vector<FixtureHost> one{{"solo", "complete", 160, 3.0, {160}}};
  const std::vector<std::filesystem::path> files{
      dir.write("a.json", merged_record("job-a", four_hosts(), 4.9).dump()),
      dir.write("b.json", merged_record("job-b", slower, 5.2).dump()),
      dir.write("single.json", single_host_record("run-single", 150, 2.5).dump()),
      dir.write("one.json", merged_record("job-one", one, 3.0).dump()),
      dir.write("published.csv",
                "drive,capacity,source,test,metric,value,unit,vms,note\n"
                "KIOXIA CD6,,004_0413b8abb055afcd.txt,sqlserver_oltp,tps,12633.7,tps,4,sum over 4 VMs\n"
                "KIOXIA XG8,2TB,000_948965f824cc5f36.txt,sqlserver_oltp,tps,3000,tps,1,\n"
                "Sabrent Rocket,2TB,002_44da36beee8a26fc.txt,sqlserver_oltp,tps,2900,tps,,\n")};
  const std::vector<std::string> labels{"Array A", "Array B", "Single", "One", ""};
  Dataset d;
  for (std::size_t i = 0; i < files.size(); ++i) add_file(d, files[i], labels[i]);
  const Report r = build_report(std::move(d));

  // 4 hosts: the two 4-host systems and the published 4-VM sum, ranked among themselves.
  const MetricTable* four = table_of(r, "sqlserver_oltp_4vms", "tps");
  ASSERT_NE(four, nullptr);
  ASSERT_EQ(four->cells.size(), 3u);
  EXPECT_EQ(four->cells[0].drive, "KIOXIA CD6");
  EXPECT_EQ(four->cells[0].hosts, 4u);
  EXPECT_EQ(four->cells[1].drive, "Array A (4 hosts)");
  EXPECT_EQ(four->cells[2].drive, "Array B (4 hosts)");
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(place(four->cells[i]), ordinal(static_cast<int>(i) + 1) + " of 3");
  EXPECT_EQ(four->cells[2].median, 305);
  ASSERT_EQ(four->host_cells.size(), 8u);  // 4 per measured system, none ranked
  for (const auto& c : four->host_cells) {
    EXPECT_EQ(c.rank, 0);
    EXPECT_EQ(c.of, 0);
  }
  EXPECT_EQ(four->host_cells[4].drive, "Array B (4 hosts)");
  EXPECT_EQ(four->host_cells[4].median, 75);

  // One host: the single-host record, the 1-host merged record and the vms=1 / empty published
  // rows, ranked together; no 4-host result among them.
  const MetricTable* single = table_of(r, "sqlserver_oltp", "tps");
  ASSERT_NE(single, nullptr);
  std::vector<std::string> drives;
  for (const auto& c : single->cells) {
    drives.push_back(c.drive);
    EXPECT_EQ(c.of, 4) << c.drive;
    EXPECT_EQ(c.hosts, 1u) << c.drive;
  }
  EXPECT_EQ(drives, (std::vector<std::string>{"KIOXIA XG8 2TB", "Sabrent Rocket 2TB", "One (1 host)", "Single"}));
  EXPECT_EQ(single->host_cells.size(), 1u);  // the 1-host record's host row, unranked
  EXPECT_EQ(single->host_cells.at(0).host->name, "solo");

  // Comparisons never pair a host row, or results of different host counts.
  for (const auto& c : r.comparisons) {
    EXPECT_EQ(c.other.find("host "), std::string::npos) << c.other;
    if (c.test == "sqlserver_oltp") {
      EXPECT_EQ(c.other.find("4 hosts"), std::string::npos) << c.other;
    }
  }
  const std::string csv = to_csv(r);
  EXPECT_NE(csv.find("sqlserver_oltp_4vms,tps,1/s,higher,KIOXIA CD6,published,1,3,1st of 3,12633.7"), std::string::npos)
      << csv;
  EXPECT_EQ(csv_lines_with(csv, ",host,4,").size(), 8u * 2u) << csv;  // tps and latency_avg_ms
  EXPECT_NE(to_markdown(r).find("published sqlserver_oltp_4vms is a sum over 4 VMs, ranked against the measured "
                                "4-host results: its rates are sums as ours are, but its latencies are the review's "
                                "per-VM figures averaged"),
            std::string::npos);
}

TEST(ReportMultiHost, APartialSystemShowsItsMissingAndInterruptedHostsUnderItsUnrankedRow) {
  TempDir dir;
  std::vector<FixtureHost> hosts = four_hosts();
  hosts[2].status = "interrupted";
  hosts[3].status = "missing";
  const auto file = dir.write("partial.json", merged_record("job-p", hosts, 4.8, "interrupted",
                                                            "rank 2 (host c) interrupted; no record of rank 3 (host d)")
                                                  .dump());
  Dataset d;
  add_file(d, file, "");
  const Report r = build_report(std::move(d));
  const MetricTable* tps = table_of(r, "sqlserver_oltp_4vms", "tps");
  ASSERT_NE(tps, nullptr);
  EXPECT_TRUE(tps->cells.empty());
  ASSERT_EQ(tps->left_out.size(), 1u);
  EXPECT_EQ(tps->left_out[0].drive, "4 hosts");
  ASSERT_EQ(tps->host_cells.size(), 4u);
  EXPECT_TRUE(tps->host_cells[3].host->left_out);
  EXPECT_EQ(tps->host_cells[3].host->status, "missing");
  EXPECT_EQ(tps->host_cells[3].n, 0u);
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("| 4 hosts (partial, not ranked) | measured | 300 TPS |"), std::string::npos) << md;
  EXPECT_NE(md.find("| ↳ host c (rank 2) | host, interrupted | 90 TPS |"), std::string::npos) << md;
  EXPECT_NE(md.find("| ↳ host d (rank 3) | host, missing | - |"), std::string::npos) << md;
  EXPECT_NE(to_csv(r).find(",missing,"), std::string::npos);
  EXPECT_NE(to_html(r, {}, "").find("<tr class=\"host partial\"><td>↳ host d (rank 3)</td><td>host, missing</td>"),
            std::string::npos);
}

TEST(ReportMultiHost, PerHostChartOfTheFirstIntervalValueBesideTheOthers) {
  if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox); CI installs it";
  TempDir dir;
  std::vector<FixtureHost> hosts = four_hosts();
  hosts[3].status = "missing";  // in the legend, without points
  Dataset d;
  add_file(d, dir.write("merged.json", merged_record("job-c", hosts, 4.9, "interrupted", "no record of rank 3").dump()),
           "Lab");
  // A single-host test whose key is the prefix of the 4-host one: its section must not show the
  // 4-host charts.
  add_file(d, dir.write("single.json", single_host_record("run-s", 150, 2.5).dump()), "Single");
  const Report r = build_report(std::move(d), ReportOptions{.include_partial = true});
  const auto charts = draw_charts(r, {.dir = dir / "charts"});
  const Chart* hosts_chart = nullptr;
  for (const auto& c : charts) {
    EXPECT_TRUE(c.name.starts_with(c.test + "_")) << c.name;
    if (c.name.find("_hosts_") != std::string::npos) {
      EXPECT_EQ(hosts_chart, nullptr) << "one per multi-host result";
      hosts_chart = &c;
    }
  }
  ASSERT_NE(hosts_chart, nullptr);
  EXPECT_EQ(hosts_chart->test, "sqlserver_oltp_4vms");
  EXPECT_EQ(hosts_chart->name, "sqlserver_oltp_4vms_hosts_Lab__4_hosts__1");
  EXPECT_EQ(hosts_chart->title, "sqlserver_oltp_4vms: tps per interval on each host of Lab (4 hosts) #1 (partial)");
  EXPECT_NE(hosts_chart->svg.find("<svg"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "charts" / (hosts_chart->name + ".png")));
  const std::string gp = read_text(dir / "charts" / (hosts_chart->name + ".gp"));
  EXPECT_NE(gp.find("$s0 << EOD\n1 98\n2 102\nEOD\n$s1 << EOD\n1 108\n2 112\nEOD\n$s2 << EOD\n1 91\n2 89\nEOD\n"
                    "$s3 << EOD\nEOD\n"),
            std::string::npos)
      << gp;
  EXPECT_NE(gp.find("title 'host a (rank 0)'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("title 'host d (rank 3) (missing)'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set ylabel 'tps'"), std::string::npos) << gp;
  // The system's own (merged) series is drawn as before, beside it.
  bool merged_series = false;
  for (const auto& c : charts) merged_series = merged_series || c.name == "sqlserver_oltp_4vms_tps_series";
  EXPECT_TRUE(merged_series);
  // Inlined once, in its own test's section only.
  const std::string html = to_html(r, charts, "");
  const std::string figure = "<figure class=\"chart\" id=\"chart-" + hosts_chart->name + "\">";
  const auto at = html.find(figure);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(html.find(figure, at + 1), std::string::npos);
  EXPECT_GT(at, html.find("<section id=\"sqlserver_oltp_4vms\">"));
  const std::string single_section = html.substr(html.find("<section id=\"sqlserver_oltp\">"),
                                                 html.find("</section>", html.find("<section id=\"sqlserver_oltp\">")) -
                                                     html.find("<section id=\"sqlserver_oltp\">"));
  EXPECT_EQ(single_section.find("sqlserver_oltp_4vms"), std::string::npos) << single_section;
}

TEST(ReportMultiHost, ARanksOwnRecordIsOneHostAndNeverCountedBesideItsMergedRecord) {
  TempDir dir;
  const std::vector<std::string> names{"a", "b", "c", "d"};
  const auto merged = dir.write("job.json", merged_record("job-m", four_hosts(), 4.9).dump());
  const auto r0 = dir.write("r0.json", rank_record("job-m", 0, names, 100).dump());
  const auto r1 = dir.write("r1.json", rank_record("job-m", 1, names, 110).dump());
  const auto has_note = [](const Dataset& d, const std::string& part) {
    return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return n.find(part) != n.npos; });
  };
  // Alone: one host's result, ranked with single hosts, with a note naming the job.
  {
    Dataset d;
    add_file(d, r0, "");
    ASSERT_EQ(d.results.size(), 1u);
    EXPECT_EQ(d.results[0].test, "sqlserver_oltp");
    EXPECT_EQ(d.results[0].hosts, 1u);
    EXPECT_TRUE(has_note(d, r0.string() + ": run job-m-r0 is one rank of the 4-host multi-host job job-m: reported as "
                                          "one host's result"));
  }
  // Ranks first, then the merged record: the ranks' results are removed, the host rows stay.
  {
    Dataset d;
    add_file(d, r0, "");
    add_file(d, r1, "");
    add_file(d, merged, "");
    ASSERT_EQ(d.results.size(), 1u);
    EXPECT_EQ(d.results[0].drive, "4 hosts");
    EXPECT_EQ(d.variants.size(), 1u);  // the ranks' single-host variant went with them
    EXPECT_TRUE(has_note(
        d, merged.string() + ": the merged record of job job-m has run job-m-r1 (" + r1.string() + ") as a host row"));
    const Report r = build_report(std::move(d));
    EXPECT_EQ(table_of(r, "sqlserver_oltp", "tps"), nullptr);
    EXPECT_EQ(table_of(r, "sqlserver_oltp_4vms", "tps")->host_cells.size(), 4u);
  }
  // The merged record first, then a rank: the rank is left out.
  {
    Dataset d;
    add_file(d, merged, "");
    add_file(d, r1, "");
    ASSERT_EQ(d.results.size(), 1u);
    EXPECT_TRUE(has_note(d, r1.string() + ": run job-m-r1 is a rank of job job-m, whose merged record " +
                                merged.string() + " is also given"));
  }
  // The same for a job of one rank (its merged record is a 1-host system).
  {
    Dataset d;
    add_file(d, dir.write("one.json", merged_record("job-1", {{"solo", "complete", 160, 3.0, {160}}}, 3.0).dump()), "");
    add_file(d, dir.write("one-r0.json", rank_record("job-1", 0, {"solo"}, 160).dump()), "");
    ASSERT_EQ(d.results.size(), 1u);
    EXPECT_EQ(d.results[0].drive, "1 host");
  }
}

TEST(ReportMultiHost, PublishedVmsMustBeACount) {
  TempDir dir;
  Dataset d;
  const auto csv = dir.write("p.csv",
                             "drive,capacity,source,test,metric,value,unit,vms,note\n"
                             "KIOXIA CD6,,004_0413b8abb055afcd.txt,sqlserver_oltp,tps,12633.7,tps,four,\n");
  try {
    add_file(d, csv, "");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              csv.string() + ":2: vms 'four' is not a count of VMs (empty, or a whole number >= 1)");
  }
}

TEST(ReportMultiHost, AMalformedHostsEntryNamesItsKeyPath) {
  TempDir dir;
  Json rec = merged_record("job-x", four_hosts(), 4.9);
  rec["hosts"][2]["tests"][0]["metrics"]["tps"] = "fast";
  Dataset d;
  const auto file = dir.write("bad.json", rec.dump());
  try {
    add_file(d, file, "");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), file.string() + ": hosts[2].tests[0].metrics.tps: expected a number, got string");
  }
}

// Issue 31's catalogue renamed the interval values lat_* to latency_*: a record written before
// (lat_p99_ms) and one written after (latency_p99_ms) of the same test share ONE p99 chart, each
// drive's points in it (found by the fresh review: two charts, each half empty).
TEST(ReportCharts, AnOldAndANewRecordShareOneSeriesChartUnderTheCurrentName) {
  TempDir dir;
  Json old_rec = single_host_record("run-old", 100, 5.0);
  old_rec["tests"][0]["intervals"] =
      Json::array({Json{{"t_s", 1}, {"duration_s", 1}, {"values", {{"tps", 100}, {"lat_p99_ms", 7.5}}}}});
  Json new_rec = single_host_record("run-new", 120, 4.0);
  new_rec["tests"][0]["intervals"] =
      Json::array({Json{{"t_s", 1}, {"duration_s", 1}, {"values", {{"tps", 120}, {"latency_p99_ms", 6.25}}}}});
  Dataset d;
  add_file(d, dir.write("old.json", old_rec.dump()), "Old");
  add_file(d, dir.write("new.json", new_rec.dump()), "New");
  const Report r = build_report(std::move(d));
  const auto charts = draw_charts(r, {.dir = dir / "charts"});
  int p99_charts = 0;
  for (const auto& c : charts) {
    EXPECT_EQ(c.name.find("_lat_p99"), std::string::npos) << c.name;
    if (c.name.find("latency_p99_ms_series") == std::string::npos) continue;
    ++p99_charts;
    const std::string gp = read_text(dir / "charts" / (c.name + ".gp"));
    EXPECT_NE(gp.find("1 7.5\n"), std::string::npos) << gp;
    EXPECT_NE(gp.find("1 6.25\n"), std::string::npos) << gp;
  }
  EXPECT_EQ(p99_charts, 1);
}

}  // namespace
}  // namespace drivelab::report
