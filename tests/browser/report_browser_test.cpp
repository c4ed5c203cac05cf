// Opens the report's HTML in headless Chromium (Debian's chromium), takes a screenshot, and checks
// that every chart drew (its box in the screenshot holds axes/text and coloured data pixels) and
// that the console shows no errors. Skipped, loudly, only when chromium is not installed; CI
// installs it (scripts/install-deps.sh). The page: the golden records, the published CSV and a merged
// 4-host record (multihost_records.hpp: its system and host rows, its per-host chart).
//
// How the charts are found: the page records each chart's box (page pixels) and any uncaught
// error or console.error in <body data-chart-boxes data-errors> (report/src/html.cpp); a first
// Chromium run with --dump-dom reads them, a second one takes a full-height screenshot.
#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "drivelab/report/report.hpp"
#include "multihost_records.hpp"
#include "report_test_util.hpp"

namespace drivelab::report {
namespace {

using testing::read_text;
using testing::run_command;
using testing::TempDir;

struct Box {
  int x, y, w, h;
};

std::string attribute(const std::string& dom, const std::string& name) {
  const std::regex re(name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(dom, m, re) ? m[1].str() : std::string("<missing>");
}

struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgba;
  const unsigned char* px(int x, int y) const { return &rgba[(static_cast<std::size_t>(y) * width + x) * 4]; }
};

Image read_png(const std::filesystem::path& p) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  Image out;
  if (png_image_begin_read_from_file(&img, p.c_str()) == 0) return out;
  img.format = PNG_FORMAT_RGBA;
  out.rgba.resize(PNG_IMAGE_SIZE(img));
  if (png_image_finish_read(&img, nullptr, out.rgba.data(), 0, nullptr) == 0) return {};
  out.width = static_cast<int>(img.width);
  out.height = static_cast<int>(img.height);
  return out;
}

TEST(ReportBrowser, ChartsDrawAndConsoleHasNoErrors) {
  const auto chromium = find_program("chromium");
  if (!chromium) {
    std::fprintf(stderr,
                 "\n*** SKIPPED: chromium is not installed: the HTML report was NOT checked in a browser. "
                 "Install Debian's chromium (scripts/install-deps.sh does). ***\n\n");
    GTEST_SKIP() << "chromium is not installed (Debian package chromium)";
  }
  if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian package gnuplot-nox)";
  TempDir dir;
  // The page `drivelab report RECORDS... --published CSV --html` writes (apps/commands.cpp).
  Dataset data;
  for (const auto& i : testing::golden_records()) add_file(data, i, {});
  // A merged 4-host record: its system row, per-host rows and per-host chart on the same page.
  const auto merged = dir / "merged.json";
  std::ofstream(merged, std::ios::binary) << testing::merged_record("job-browser", testing::four_hosts(), 4.9).dump();
  add_file(data, merged, "Lab");
  const auto published = std::filesystem::path(DRIVELAB_SOURCE_DIR) / "../shared/data/published_results.csv";
  if (std::filesystem::exists(published)) add_file(data, published, {});
  const Report rep = build_report(std::move(data));
  const auto charts = draw_charts(rep, {.dir = dir / "report_charts"});
  std::ofstream(dir / "report.html", std::ios::binary) << to_html(rep, charts, "");
  const std::string url = "file://" + (dir / "report.html").string();
  const std::vector<std::string> common{"timeout",
                                        "-k",
                                        "5",
                                        "90",
                                        chromium->string(),
                                        "--headless=new",
                                        "--no-sandbox",
                                        "--disable-gpu",
                                        "--hide-scrollbars",
                                        "--force-device-scale-factor=1",
                                        "--user-data-dir=" + (dir / "profile").string(),
                                        "--enable-logging=stderr",
                                        "--v=0"};

  // 1. Layout: chart boxes, page height, errors seen by the page.
  auto dump = common;
  dump.insert(dump.end(), {"--window-size=1280,1000", "--dump-dom", url});
  ASSERT_EQ(run_command(dump, dir / "dom.html", dir / "dump.err"), 0) << read_text(dir / "dump.err");
  const std::string dom = read_text(dir / "dom.html");
  EXPECT_EQ(attribute(dom, "data-errors"), "");
  const int page_h = std::stoi(attribute(dom, "data-page-height"));
  std::vector<Box> boxes;
  {
    std::stringstream ss(attribute(dom, "data-chart-boxes"));
    std::string item;
    while (std::getline(ss, item, ';')) {
      Box b{};
      ASSERT_EQ(std::sscanf(item.c_str(), "%d,%d,%d,%d", &b.x, &b.y, &b.w, &b.h), 4) << item;
      boxes.push_back(b);
    }
  }
  ASSERT_EQ(boxes.size(), charts.size());
  ASSERT_GE(boxes.size(), 8u);
  EXPECT_TRUE(std::any_of(charts.begin(), charts.end(),
                          [](const Chart& c) { return c.name == "sqlserver_oltp_4vms_hosts_Lab__4_hosts__1"; }));
  EXPECT_NE(dom.find("host b (rank 1)"), std::string::npos);

  // 2. Screenshot of the whole page.
  auto shot = common;
  const auto png = dir / "shot.png";
  shot.insert(shot.end(), {"--window-size=1280," + std::to_string(page_h), "--screenshot=" + png.string(), url});
  ASSERT_EQ(run_command(shot, dir / "shot.out", dir / "shot.err"), 0) << read_text(dir / "shot.err");
  const std::string log = read_text(dir / "shot.err") + read_text(dir / "dump.err");
  EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
  // The page logs nothing itself: any console message (Chromium logs them as "...:CONSOLE...")
  // is an error or warning of the page.
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;

  const Image img = read_png(png);
  ASSERT_EQ(img.width, 1280);
  ASSERT_GE(img.height, page_h - 1);
  int index = 0;
  for (const Box& b : boxes) {
    ++index;
    ASSERT_GT(b.w, 300) << "chart " << index;
    ASSERT_GT(b.h, 100) << "chart " << index;
    ASSERT_LE(b.x + b.w, img.width) << "chart " << index;
    ASSERT_LE(b.y + b.h, img.height) << "chart " << index;
    long dark = 0, coloured = 0, total = 0;
    for (int y = b.y; y < b.y + b.h; ++y)
      for (int x = b.x; x < b.x + b.w; ++x) {
        const unsigned char* p = img.px(x, y);
        const int mx = std::max({p[0], p[1], p[2]}), mn = std::min({p[0], p[1], p[2]});
        ++total;
        if (mx < 200) ++dark;          // axes, tick labels, title
        if (mx - mn > 60) ++coloured;  // data: bars, curves, series (not grey)
      }
    // Non-blank: text and axes drawn, and data drawn in colour.
    EXPECT_GT(dark, total / 500) << "chart " << index << " looks blank (no axes or text)";
    EXPECT_GT(coloured, 40) << "chart " << index << " has no coloured data pixels";
  }
  std::cout << "charts checked in the screenshot: " << boxes.size() << " (page " << img.width << "x" << img.height
            << ")\n";
}

}  // namespace
}  // namespace drivelab::report
