// `drivelab report` through the real binary on the checked-in real records of two targets (an
// O_DIRECT file on the virtio disk, and a file on an ext4 loop device backed by tmpfs; two runs
// each): the HTML, Markdown and CSV are pinned in tests/golden/report_two_targets.* (the inline
// SVG of the charts is normalised away: it is gnuplot's drawing, checked by the browser test).
// Regenerate with DRIVELAB_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>

#include "drivelab/report/report.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using testing::golden_record_args;
using testing::read_text;
using testing::run_command;
using testing::TempDir;

const std::filesystem::path kSource = DRIVELAB_SOURCE_DIR;

/// Replaces every inline <svg ...>...</svg> by <svg/>.
std::string without_svg(const std::string& html) {
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    const auto a = html.find("<svg", pos);
    if (a == std::string::npos) break;
    const auto b = html.find("</svg>", a);
    if (b == std::string::npos) break;
    out += html.substr(pos, a - pos) + "<svg/>";
    pos = b + 6;
  }
  return out + html.substr(pos);
}

void check_golden(const std::string& name, const std::string& actual) {
  const auto golden = kSource / "tests/golden" / name;
  if (std::getenv("DRIVELAB_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(actual, read_text(golden)) << "differs from " << golden << " (DRIVELAB_UPDATE_GOLDEN=1 rewrites it)";
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == sep && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

TEST(ReportCli, TwoTargetsRankedInHtmlMarkdownAndCsv) {
  if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox); CI installs it";
  TempDir dir;
  std::vector<std::string> args{DRIVELAB_EXE, "report"};
  const auto inputs = golden_record_args();
  ASSERT_EQ(inputs.size(), 4u);
  for (const auto& i : inputs) args.push_back(i);
  for (const std::string o : {"--html", "--md", "--csv"})
    args.insert(args.end(), {o, (dir / ("out." + o.substr(2))).string()});
  // Run from the source root so the sources read as the relative paths users type.
  ASSERT_EQ(run_command(args, dir / "stdout", dir / "stderr", kSource), 0) << read_text(dir / "stderr");

  const std::string csv = read_text(dir / "out.csv");
  const std::string md = read_text(dir / "out.md");
  const std::string html = read_text(dir / "out.html");
  check_golden("report_two_targets.csv", csv);
  check_golden("report_two_targets.md", md);
  check_golden("report_two_targets.html", without_svg(html));

  // The ranking is right whatever the numbers: per test and metric, rank 1 has the best median in
  // the metric's direction, and the place text matches.
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  ASSERT_EQ(line, "test,metric,unit,better,drive,origin,rank,of,place,median,min,max,n,status,sources");
  std::map<std::string, std::vector<std::vector<std::string>>> tables;
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    ASSERT_EQ(f.size(), 15u) << line;
    tables[f[0] + "/" + f[1]].push_back(f);
  }
  ASSERT_GE(tables.size(), 8u);
  std::set<std::string> drives;
  for (const auto& [key, rows] : tables) {
    ASSERT_EQ(rows.size(), 2u) << key;  // two targets
    const bool higher = rows[0][3] == "higher";
    const double best = std::stod(rows[0][9]), other = std::stod(rows[1][9]);
    EXPECT_TRUE(higher ? best >= other : best <= other) << key;
    EXPECT_EQ(rows[0][6], "1");
    EXPECT_EQ(rows[0][8], "1st of 2");
    EXPECT_EQ(rows[1][8], best == other ? "1st of 2" : "2nd of 2");
    EXPECT_EQ(rows[0][12], "2");  // two repetitions each
    drives.insert(rows[0][4]);
    drives.insert(rows[1][4]);
  }
  EXPECT_EQ(drives.size(), 2u);
  // Every chart exists as SVG and PNG beside the HTML, and is inlined.
  int charts = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "out_charts"))
    if (e.path().extension() == ".svg") {
      ++charts;
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(e.path()).replace_extension(".png"))) << e.path();
      EXPECT_GT(std::filesystem::file_size(std::filesystem::path(e.path()).replace_extension(".png")), 1000u);
    }
  EXPECT_GE(charts, 8);
  std::size_t inline_svgs = 0;
  for (std::size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++inline_svgs;
  EXPECT_EQ(inline_svgs, static_cast<std::size_t>(charts));
  EXPECT_EQ(html.find("http://www.w3.org/1999/xhtml\" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);  // nothing loaded from elsewhere
  std::cout << "charts drawn: " << charts << ", HTML " << html.size() << " bytes\n";
}

TEST(ReportCli, UnknownSchemaExitsWithBadInput) {
  TempDir dir;
  const auto p = dir / "future.json";
  std::ofstream(p) << R"({"schema": "drivelab.run/2", "run_id": "x", "status": "complete", "tests": []})";
  const int rc = run_command({DRIVELAB_EXE, "report", p.string(), "--md", (dir / "o.md").string()}, dir / "out", dir / "err");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(read_text(dir / "err").find("unsupported result schema 'drivelab.run/2'"), std::string::npos)
      << read_text(dir / "err");
}

TEST(ReportCli, MissingGnuplotIsAClearErrorAndNoChartsWorksWithout) {
  TempDir dir;
  std::vector<std::string> args{DRIVELAB_EXE, "report"};
  for (const auto& i : testing::golden_records()) args.push_back(i.string());
  args.insert(args.end(), {"--html", (dir / "r.html").string()});
  // env -i PATH=<empty dir>: no gnuplot anywhere.
  std::vector<std::string> env_args{"env", "-i", "PATH=" + dir.path().string()};
  env_args.insert(env_args.end(), args.begin(), args.end());
  EXPECT_EQ(run_command(env_args, dir / "out", dir / "err"), 3);
  EXPECT_NE(read_text(dir / "err").find("gnuplot not found"), std::string::npos) << read_text(dir / "err");
  env_args.push_back("--no-charts");
  EXPECT_EQ(run_command(env_args, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  const std::string html = read_text(dir / "r.html");
  EXPECT_NE(html.find("Charts not drawn (--no-charts)."), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
}

TEST(ReportCli, PublishedDrivesBesideMeasuredAndLabels) {
  const auto csv = kSource / "../shared/data/published_results.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "no " << csv;
  TempDir dir;
  std::vector<std::string> args{DRIVELAB_EXE, "report"};
  for (const auto& i : testing::golden_records()) args.push_back(i.string());
  args.insert(args.end(), {"--label", "Disk A", "--label", "Disk A", "--label", "Loop B", "--label", "Loop B",
                           "--published", csv.string(), "--md", (dir / "r.md").string(), "--csv", (dir / "r.csv").string()});
  ASSERT_EQ(run_command(args, dir / "out", dir / "err"), 0) << read_text(dir / "err");
  const std::string md = read_text(dir / "r.md");
  const auto sec = md.find("\n## 4k_random_read\n");
  ASSERT_NE(sec, std::string::npos);
  const std::string table = md.substr(sec, md.find("\n## ", sec + 5) - sec);
  for (const std::string d : {"| Disk A |", "| Loop B |", "| Toshiba XG6 1TB |", "| Sabrent Rocket NVMe 4.0 2TB |",
                              "| KIOXIA XG8 2TB |"})
    EXPECT_NE(table.find(d), std::string::npos) << d << "\n" << table;
  EXPECT_NE(table.find(" of 6)"), std::string::npos) << table;
  EXPECT_NE(read_text(dir / "r.csv").find("4k_random_read,iops,1/s,higher,Toshiba XG6 1TB,published,"), std::string::npos);
}

}  // namespace
}  // namespace drivelab::report
