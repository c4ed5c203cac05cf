// The self-contained HTML page: inline CSS, inline SVG charts, no external resources.
#include <fmt/format.h>

#include "drivelab/core/escape.hpp"
#include "drivelab/report/report.hpp"
#include "drivelab/results/summary.hpp"
#include "table_view.hpp"

namespace drivelab::report {
namespace {

/// HTML text and attribute values (double-quoted): the characters that would start markup.
constexpr Escape kHtmlEscapes[] = {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}};

std::string esc(const std::string& s) { return escaped(s, kHtmlEscapes); }

constexpr const char* kStyle =
    R"(body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}
table{border-collapse:collapse;margin:0.5em 0 1em;font-size:0.92em}
th,td{border:1px solid #ccc;padding:0.3em 0.6em;text-align:left;vertical-align:top}
th{background:#f0f3f7}
tr.published td{color:#555}
tr.partial td{background:#fff4e0}
tr.host td{font-size:0.95em;color:#444}
tr.host td:first-child{padding-left:1.8em}
td.rank1{font-weight:bold}
figure.chart{margin:0.5em 0 1.5em;display:inline-block;max-width:100%}
figure.chart svg{max-width:100%;height:auto;display:block;border:1px solid #ddd}
figcaption{font-size:0.85em;color:#555}
.note{color:#8a5a00})";

// Records uncaught errors and console.error calls before anything else runs, and after the page
// is laid out writes the chart boxes (page pixels) and the errors into <body data-...>, so a
// headless browser test can find the charts in a screenshot (tests/browser/, docs/reporter.md).
constexpr const char* kHeadScript =
    "window.drivelabErrors=[];window.addEventListener('error',function(e){window.drivelabErrors.push(String(e.message))"
    ";});"
    "(function(){var "
    "o=console.error;console.error=function(){window.drivelabErrors.push(Array.prototype.join.call(arguments,' '));"
    "o.apply(console,arguments);};})();";
constexpr const char* kTailScript =
    "(function(){var b=[];document.querySelectorAll('figure.chart svg').forEach(function(s){var "
    "r=s.getBoundingClientRect();"
    "b.push([Math.round(r.left+window.scrollX),Math.round(r.top+window.scrollY),Math.round(r.width),Math.round(r."
    "height)].join(','));});"
    "document.body.setAttribute('data-chart-boxes',b.join(';'));"
    "document.body.setAttribute('data-page-height',String(document.documentElement.scrollHeight));"
    "document.body.setAttribute('data-errors',window.drivelabErrors.join(' | '));})();";

/// One table of test view `v`: a row per drive (and host) with a cell in `tables`.
void html_table(std::string& out, const TestView& v, const std::vector<const MetricTable*>& tables) {
  out += "<table>\n<tr><th>Drive</th><th>Source</th>";
  for (const auto* t : tables) out += fmt::format("<th>{}</th>", esc(header_text(*t)));
  out += "</tr>\n";
  for_each_row(v, tables, [&out, &v, &tables](const TableRow& row) {
    const Cell* any = row.first;
    const std::string_view origin = any != nullptr ? to_string(any->origin) : "";
    switch (row.kind) {
      case TableRow::Kind::host: {
        const Cell::HostOf& h = v.host_rows[row.host];
        out += fmt::format("<tr class=\"host{}\"><td>{}</td><td>{}</td>", h.status == "complete" ? "" : " partial",
                           esc(host_row_label(h)), esc(host_row_source(h)));
        break;
      }
      case TableRow::Kind::drive: {
        std::string cls = any != nullptr && any->origin == Origin::published ? "published" : "measured";
        if (any != nullptr && any->partial) cls += " partial";
        out += fmt::format("<tr class=\"{}\"><td>{}{}</td><td>{}</td>", cls, esc(*row.drive),
                           any != nullptr && any->partial ? " (partial)" : "", origin);
        break;
      }
      case TableRow::Kind::left_out:
        out += fmt::format("<tr class=\"measured partial not-ranked\"><td>{}{}</td><td>{}</td>", esc(*row.drive),
                           kLeftOutSuffix, origin);
        break;
    }
    for (std::size_t k = 0; k < tables.size(); ++k) {
      const Cell* c = row.cells[k];
      const bool rank1 = row.kind == TableRow::Kind::drive && c != nullptr && c->rank == 1;
      out += fmt::format("<td{}>{}</td>", rank1 ? " class=\"rank1\"" : "",
                         c != nullptr ? esc(cell_text(*tables[k], *c)) : "");
    }
    out += "</tr>\n";
  });
  out += "</table>\n";
}

}  // namespace

std::string to_html(const Report& r, const std::vector<Chart>& charts, const std::string& charts_note) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>drivelab report</title>\n";
  out += fmt::format("<script>{}</script>\n<style>\n{}\n</style>\n</head>\n<body>\n", kHeadScript, kStyle);
  out +=
      "<h1>drivelab report</h1>\n<p>Drives ranked per metric in its direction (rates: higher is better; times: lower "
      "is better). Each cell: median over repetitions, place among the drives with a value (drives the 95% "
      "intervals cannot tell apart share a place), and min/max and the mean with its 95% interval when there are "
      "repetitions. Published results are from the reviews listed in the published-results CSV; measured "
      "results are drivelab runs. Model and rules: docs/reporter.md.</p>\n";
  if (!charts_note.empty()) out += fmt::format("<p class=\"note\">{}</p>\n", esc(charts_note));
  for (const auto& v : test_views(r)) {
    out += fmt::format("<section id=\"{0}\"{1}>\n<h2>{0}</h2>\n", esc(v.test),
                       v.other_configuration.empty() ? "" : " class=\"other-configuration\"");
    if (!v.other_configuration.empty())
      out += fmt::format("<p class=\"note\">{}</p>\n", esc(other_configuration_text(v)));
    if (v.lab_conventions) out += fmt::format("<p class=\"note\">{}</p>\n", esc(kLabConventionsText));
    html_table(out, v, v.tables);
    if (!v.device_tables.empty()) {
      out += fmt::format("<h3>{}: device</h3>\n<p class=\"note\">{}</p>\n", esc(v.test), esc(kDeviceTableText));
      html_table(out, v, v.device_tables);
    }
    if (const std::vector<CheckLine> checks = check_lines(r, v.test); !checks.empty()) {
      out += fmt::format("<h3>{}: checks</h3>\n<p class=\"note\">{}</p>\n<ul class=\"checks\">\n", esc(v.test),
                         esc(kChecksText));
      for (const CheckLine& c : checks) out += fmt::format("<li>{}</li>\n", esc(check_line_text(c)));
      out += "</ul>\n";
    }
    for (const auto& c : charts) {
      if (c.test != v.test) continue;
      out += fmt::format(
          "<figure class=\"chart\" id=\"chart-{}\">\n{}\n<figcaption>{} (files: {}.svg, "
          "{}.png)</figcaption>\n</figure>\n",
          esc(c.name), c.svg, esc(c.title), esc(c.name), esc(c.name));
    }
    out += "</section>\n";
  }
  if (!r.comparisons.empty()) {
    out += fmt::format(
        "<section id=\"comparisons\">\n<h2>Comparisons</h2>\n<p>{}</p>\n<table>\n<tr><th>Test</th><th>Metric</th>"
        "<th>Drive</th><th>Against</th><th>Difference of medians</th><th>Change, 95% interval</th><th>Verdict</th>"
        "<th>Detectable</th></tr>\n",
        esc(kComparisonsText));
    for (const auto& c : r.comparisons)
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
          esc(c.test), esc(c.metric), esc(c.other), esc(c.leader), results::format_number(c.diff_pct),
          esc(comparison_change(c)), esc(comparison_verdict(c)), esc(comparison_detectable(c)));
    out += "</table>\n</section>\n";
  }
  if (!r.data.notes.empty()) {
    out += "<section id=\"notes\">\n<h2>Notes: partial runs, warnings, failed checks and configurations</h2>\n<ul>\n";
    for (const auto& n : r.data.notes) out += fmt::format("<li>{}</li>\n", esc(n));
    out += "</ul>\n</section>\n";
  }
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", kTailScript);
  return out;
}

}  // namespace drivelab::report
