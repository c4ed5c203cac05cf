// Charts drawn by gnuplot (Debian gnuplot-nox), one process per chart: NAME.gp is written and
// kept (so an author can restyle it), gnuplot writes NAME.svg and NAME.png beside it.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/core/process.hpp"
#include "drivelab/report/report.hpp"
#include "drivelab/results/catalogue.hpp"
#include "drivelab/results/summary.hpp"

namespace drivelab::report {
namespace {

/// The name a series is drawn under: the catalogue's current name for an old one (an alias such
/// as lat_p99_us -> latency_p99_us), so old and new records of a test share one chart.
std::string series_name(std::string_view name) {
  if (const results::MetricDef* d = results::find_metric_def(name)) return std::string(d->name);
  return std::string(name);
}

/// An interval value drawn as a time series: a catalogued value with trait kCharted, or "eps",
/// sysbench's events per second of an imported sysbench output (not one of our metrics).
bool charted_series(std::string_view name) {
  if (const results::MetricDef* d = results::find_metric_def(name)) return d->has(results::kCharted);
  return name == "eps";
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A gnuplot single-quoted string ('' is a quote inside).
std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else if (c != '\n')
      out += c;
  }
  return out + "'";
}

/// A datablock field: double-quoted, without quotes inside.
std::string gp_field(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\n') ? '\'' : c;
  return out + "\"";
}

std::string gp_num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string("NaN"); }

/// File-name safe stem.
std::string stem(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') ? c : '_';
  return out;
}

/// Colours: measured drives blue, imports green, published grey (bars); lines use gnuplot's cycle.
int colour_index(Origin o) {
  switch (o) {
    case Origin::measured: return 1;
    case Origin::published: return 3;
    default: return 2;
  }
}

struct ChartScript {
  std::string test;  ///< the test key whose section shows it
  std::string name, title;
  std::string body;  ///< datablocks + settings + plot command (terminal and output set around it)
};

void run_gnuplot(const ChartOptions& opt, const std::string& program, const ChartScript& c) {
  const std::filesystem::path gp = opt.dir / (c.name + ".gp");
  {
    std::ofstream out(gp);
    out << "# drivelab report chart: " << c.title << "\n"
        << "# gnuplot " << c.name << ".gp writes " << c.name << ".svg and " << c.name << ".png\n"
        << "set terminal svg size 760,360 fixed noenhanced font 'sans,11' background rgb 'white'\n"
        << "set output '" << c.name << ".svg'\n"
        << c.body << "\n"
        << "set terminal pngcairo size 1520,720 noenhanced font 'sans,20' background rgb 'white'\n"
        << "set output '" << c.name << ".png'\n"
        << "replot\n"
        << "unset output\n";
    if (!out) throw EnvironmentError(fmt::format("cannot write {}", gp.string()));
  }
  // gnuplot writes its messages to stderr (stdout too, with `print`): captured for the error.
  SpawnOptions options;
  options.cwd = opt.dir;
  options.start_error = fmt::format("cannot start gnuplot ({})", program);
  const CommandResult r = run_command({program, c.name + ".gp"}, std::chrono::hours(24), options);
  if (r.exit_code != 0) throw EnvironmentError(fmt::format("gnuplot failed on {}: {}", gp.string(), r.output));
}

std::string strip_prolog(std::string svg) {
  const auto pos = svg.find("<svg");
  if (pos != std::string::npos) svg.erase(0, pos);
  return svg;
}

/// Bars: one per drive, best first (the table's ranking), colour by origin; the bar is the mean of
/// the drive's repetitions, the error bar its 95% interval (Student t; none with one repetition).
ChartScript bars(const MetricTable& t) {
  ChartScript c;
  c.test = t.test;
  c.name = stem(t.test + "_" + t.metric + "_bars");
  c.title = fmt::format("{}: {} ({}, {} is better; mean, 95% interval)", t.test, t.metric,
                        results::unit_label(t.unit, t.metric), to_string(t.better));
  std::string data = "$bars << EOD\n";
  int i = 0;
  for (const auto& cell : t.cells) {
    if (cell.n == 0) continue;
    data += fmt::format("{} {} {} {} {} {}\n", i++, gp_num(cell.mean), gp_num(cell.mean_ci.low),
                        gp_num(cell.mean_ci.high), colour_index(cell.origin), gp_field(cell.drive));
  }
  data += "EOD\n";
  c.body =
      data + fmt::format(
                 "set title {}\nset style fill solid 0.85 border -1\nset boxwidth 0.6\nset yrange [0:*]\n"
                 "set xrange [-0.5:{}]\nset xtics rotate by -20 nomirror\nset grid ytics\nset ylabel {}\n"
                 "set linetype 1 lc rgb '#1f77b4'\nset linetype 2 lc rgb '#2ca02c'\nset linetype 3 lc rgb '#9a9a9a'\n"
                 "set key off\nset bmargin 7\nset errorbars 8\n"
                 "plot $bars using 1:2:5:xtic(6) with boxes lc variable notitle, "
                 "$bars using 1:2:3:4 with yerrorbars lc rgb 'black' lw 1.5 pt -1 notitle",
                 gp_quote(c.title), i - 0.5, gp_quote(results::unit_label(t.unit, t.metric)));
  return c;
}

/// A time-series chart: one line per interval list, value `name` against t_s.
struct Series {
  std::string data, plot;
  int k = 0;

  /// `scale`: what each value is multiplied by (a unit of the chart's other series).
  void add(const std::vector<results::Interval>& intervals, const std::string& name, const std::string& label,
           double scale = 1) {
    data += fmt::format("$s{} << EOD\n", k);
    for (const auto& iv : intervals)
      for (const auto& [n, v] : iv.values)
        if (series_name(n) == name) data += fmt::format("{} {}\n", gp_num(iv.t_s), gp_num(v * scale));
    data += "EOD\n";
    plot += fmt::format("{}$s{} using 1:2 with linespoints pt 7 ps 0.5 title {}", plot.empty() ? "plot " : ", ", k,
                        gp_quote(label));
    ++k;
  }
  std::string body(const std::string& title, const std::string& ylabel) const {
    return data + fmt::format(
                      "set title {}\nset xlabel 'seconds into the measured phase'\nset ylabel {}\nset grid\n"
                      "set key outside right top\nset yrange [0:*]\n{}",
                      gp_quote(title), gp_quote(ylabel), plot);
  }
};

/// The device's latency against the application's over time (docs/reporter.md "Device columns"):
/// per result with device figures in its intervals, the device's r_await and w_await (iostat -x,
/// ms) and the application's mean latency of the same interval (the catalogue's figure `avg` of
/// the interval's latency histogram, in ms). The gap is the time spent above the device: the
/// filesystem, the page cache, the database, the harness. Nullopt when no result has them.
std::optional<ChartScript> device_latency_chart(const std::string& test, const std::vector<const Result*>& results) {
  namespace cat = results::catalogue;
  Series s;
  std::map<std::string, int> reps;
  for (const Result* res : results) {
    if (res->intervals.empty()) continue;
    const std::string label =
        fmt::format("{} #{}{}", res->drive, ++reps[res->drive], res->partial() ? " (partial)" : "");
    std::set<std::string> device;
    const results::MetricDef* app = nullptr;
    for (const auto& iv : res->intervals)
      for (const auto& [n, v] : iv.values) {
        if (n == cat::device_r_await_ms.name || n == cat::device_w_await_ms.name) device.insert(n);
        const results::MetricDef* d = results::find_metric_def(n);
        if (app == nullptr && d != nullptr && d->of_interval_latency && d->figure == "avg") app = d;
      }
    if (device.empty()) continue;
    if (app != nullptr)
      s.add(res->intervals, std::string(app->name), label + " application mean",
            results::seconds_per(app->unit) / 1e-3);
    for (const std::string& n : device) s.add(res->intervals, n, label + " device " + n.substr(7, 7));
  }
  if (s.k == 0) return std::nullopt;
  ChartScript c;
  c.test = test;
  c.name = stem(test + "_device_latency");
  c.title = fmt::format("{}: device await vs application mean latency", test);
  c.body = s.body(c.title, "ms");
  return c;
}

/// A result's sizing answers on its curve chart ($c<k>): its p99 points dashed when recorded
/// ($p<k>), each bound a dotted horizontal line, each answer a marker on its bound ($s<k>) titled
/// with the answer (details `slo`, runner/curve.hpp).
void sizing_marks(const Result& res, int k, const std::string& label, double per_unit_us, std::string& data,
                  std::string& plot, std::string& sizing, bool& p99_drawn) {
  if (std::any_of(res.curve.begin(), res.curve.end(), [](const CurvePoint& p) { return p.latency_p99_us > 0; })) {
    data += fmt::format("$p{} << EOD\n", k);
    for (const auto& p : res.curve)
      if (p.latency_p99_us > 0) data += fmt::format("{} {}\n", gp_num(p.iops), gp_num(p.latency_p99_us / per_unit_us));
    data += "EOD\n";
    plot += fmt::format(", $p{} using 1:2 with linespoints dt 2 pt 6 ps 0.6 title {}", k, gp_quote(label + " p99"));
    p99_drawn = true;
  }
  std::string points, title;
  for (const SizingAnswer& a : res.sizing) {
    const double y = a.bound_ms * 1e3 / per_unit_us;
    sizing += fmt::format("set arrow from graph 0, first {0} to graph 1, first {0} nohead dashtype 3\n", gp_num(y));
    if (a.rate > 0) points += fmt::format("{} {}\n", gp_num(a.rate), gp_num(y));
    title += fmt::format("{}{} <= {:g} ms: {}{}", title.empty() ? "" : "; ", a.figure, a.bound_ms,
                         a.rate <= 0                     ? std::string("none")
                         : res.curve_rate_word == "IOPS" ? results::format_iops(a.rate)
                                                         : results::format_rate(a.rate, res.curve_rate_word),
                         a.outcome == "bound_not_reached"         ? " (bound not reached)"
                         : a.outcome == "interrupted_lower_bound" ? " (at least: curve interrupted)"
                                                                  : "");
  }
  if (points.empty()) return;
  data += fmt::format("$s{} << EOD\n{}EOD\n", k, points);
  plot += fmt::format(", $s{} using 1:2 with points pt 9 ps 2 title {}", k, gp_quote(label + ": " + title));
}

/// Latency vs IOPS (or TPS: a tpcc rate curve) of a test: a line per curve, a point per published
/// peak, measured results without a curve as one point (their IOPS and average latency), and the
/// sizing answers' marks; nullopt when nothing has both.
std::optional<ChartScript> curve_chart(const std::string& test, const std::vector<const Result*>& results) {
  ChartScript c;
  c.test = test;
  c.name = stem(test + "_curve");
  std::string word = "IOPS";
  for (const Result* res : results)
    if (!res->curve.empty()) word = res->curve_rate_word;
  // Milliseconds when a latency reaches 10 ms (a database's curve: "2e+06" µs reads badly), else µs.
  double top_us = 0;
  for (const Result* res : results) {
    for (const CurvePoint& p : res->curve) top_us = std::max({top_us, p.latency_avg_us, p.latency_p99_us});
    for (const SizingAnswer& a : res->sizing) top_us = std::max(top_us, a.bound_ms * 1e3);
    if (const auto* lat = res->find_metric("latency_avg_us"); lat != nullptr && res->curve.empty())
      top_us = std::max(top_us, lat->value);
  }
  const bool in_ms = top_us >= 1e4;
  const double per_unit_us = in_ms ? 1e3 : 1.0;
  const char* unit = in_ms ? "ms" : "µs";
  std::string data, plot, sizing;
  int k = 0;
  double lo_iops = 0, hi_iops = 0;
  bool p99_drawn = false;
  for (const Result* res : results) {
    std::vector<CurvePoint> pts = res->curve;
    if (pts.empty()) {
      const auto* iops = res->find_metric("iops");
      const auto* lat = res->find_metric("latency_avg_us");
      if (iops == nullptr || lat == nullptr) continue;
      pts.push_back({iops->value, lat->value});
    }
    data += fmt::format("$c{} << EOD\n", k);
    for (const auto& p : pts) {
      data += fmt::format("{} {}\n", gp_num(p.iops), gp_num(p.latency_avg_us / per_unit_us));
      if (p.iops > 0) {
        lo_iops = lo_iops == 0 ? p.iops : std::min(lo_iops, p.iops);
        hi_iops = std::max(hi_iops, p.iops);
      }
    }
    data += "EOD\n";
    const std::string style = pts.size() > 1
                                  ? "linespoints pt 7 ps 0.6"
                                  : (res->origin == Origin::published ? "points pt 5 ps 1.2" : "points pt 7 ps 1.4");
    const std::string label =
        res->drive + (res->origin == Origin::published ? " (published)" : "") + (res->partial() ? " (partial)" : "");
    plot += fmt::format("{}$c{} using 1:2 with {} title {}", plot.empty() ? "plot " : ", ", k, style, gp_quote(label));
    if (!res->sizing.empty()) sizing_marks(*res, k, label, per_unit_us, data, plot, sizing, p99_drawn);
    ++k;
  }
  if (k == 0) return std::nullopt;
  // The title names what is drawn: the average, and the p99 too when a sizing answer drew it.
  c.title = fmt::format("{}: {} vs {}", test, p99_drawn ? "latency (average and p99)" : "average latency", word);
  // Tick labels with SI suffixes (100k, 1.5M) so they never run together; the legend below
  // the plot, not beside it; a logarithmic IOPS axis when the drives span more than 20x
  // (a published NVMe peak beside a measured VM disk would squash the measured curve
  // against the y axis on a linear one).
  const bool log_x = lo_iops > 0 && hi_iops / lo_iops > 20;
  c.body = data + fmt::format(
                      "set title {}\nset xlabel {}\nset ylabel {}\nset grid\n"
                      "set key below horizontal\nset format x '%.1s%c'\nset xtics nomirror\n{}set yrange [0:*]\n{}{}",
                      gp_quote(c.title), gp_quote(log_x ? word + " (log scale)" : word),
                      gp_quote(p99_drawn ? fmt::format("latency ({}): average, p99 dashed", unit)
                                         : fmt::format("average latency ({})", unit)),
                      log_x ? "set logscale x 10\n" : "set xrange [0:*]\n", sizing, plot);
  return c;
}

}  // namespace

std::vector<Chart> draw_charts(const Report& r, const ChartOptions& opt) {
  const auto program = find_program(opt.gnuplot);
  if (!program)
    throw EnvironmentError(fmt::format("gnuplot not found ('{}' on PATH); install gnuplot-nox", opt.gnuplot));
  std::error_code ec;
  std::filesystem::create_directories(opt.dir, ec);
  if (ec)
    throw EnvironmentError(fmt::format("cannot create the charts directory '{}': {}", opt.dir.string(), ec.message()));
  // gnuplot runs in the charts directory; every path handed to it must not depend on our cwd.
  ChartOptions abs_opt = opt;
  abs_opt.dir = std::filesystem::absolute(opt.dir);
  std::vector<ChartScript> scripts;

  for (const std::string& test : r.tests) {
    std::vector<const Result*> results;
    bool charted = false, has_curve = false;
    for (const auto& res : r.data.results) {
      if (res.test != test) continue;
      results.push_back(&res);
      charted = charted || res.origin != Origin::published;
      has_curve = has_curve || !res.curve.empty();
    }
    if (!charted) continue;  // published-only tests are in the tables, not charted

    // 1. Latency vs IOPS: curves, published peaks and measured single points.
    if (has_curve)
      if (auto c = curve_chart(test, results)) scripts.push_back(std::move(*c));
    // 2. Bars: the first ranked metric; OLTP also average latency.
    bool first = true;
    for (const auto& t : r.tables) {
      if (t.test != test || t.lab_convention || t.device) continue;
      const bool wanted =
          first || t.metric == results::catalogue::latency_avg_ms.name || t.metric == results::catalogue::seconds.name;
      first = false;
      // Only ranked cells are drawn: a table of partial results only (left out) has no bar.
      const bool any_bar = std::any_of(t.cells.begin(), t.cells.end(), [](const Cell& c) { return c.n > 0; });
      if (wanted && any_bar) scripts.push_back(bars(t));
    }
    // 3. Time series per interval: throughput and p99.
    std::vector<std::string> series;
    for (const Result* res : results)
      for (const auto& iv : res->intervals)
        for (const auto& [name, v] : iv.values)
          // The catalogue's charted values (tps, iops, the p99 latency; results/catalogue.hpp
          // kCharted, old names included), and sysbench's own "eps" of an imported sysbench
          // output (report/import.cpp: not one of our metrics).
          if (charted_series(name) && std::find(series.begin(), series.end(), series_name(name)) == series.end())
            series.push_back(series_name(name));
    for (const std::string& name : series) {
      ChartScript c;
      c.test = test;
      c.name = stem(test + "_" + name + "_series");
      c.title = fmt::format("{}: {} per interval", test, name);
      Series s;
      std::map<std::string, int> reps;
      for (const Result* res : results) {
        if (res->intervals.empty()) continue;
        const int rep = ++reps[res->drive];
        s.add(res->intervals, name, fmt::format("{} #{}{}", res->drive, rep, res->partial() ? " (partial)" : ""));
      }
      c.body = s.body(c.title, name);
      scripts.push_back(std::move(c));
    }
    // 4. The device's latency against the application's.
    if (auto c = device_latency_chart(test, results)) scripts.push_back(std::move(*c));
    // 5. Per host of a multi-host result: the first value of each host's intervals (tps, iops,
    // eps: what the progress line shows first) over time, one line per host.
    std::map<std::string, int> host_reps;
    for (const Result* res : results) {
      if (res->per_host.empty()) continue;
      const int rep = ++host_reps[res->drive];
      std::string name;
      for (const HostResult& h : res->per_host)
        if (name.empty() && !h.intervals.empty() && !h.intervals.front().values.empty())
          name = h.intervals.front().values.front().first;
      if (name.empty()) continue;  // no host has an interval
      ChartScript c;
      c.test = test;
      c.name = stem(fmt::format("{}_hosts_{}_{}", test, res->drive, rep));
      c.title = fmt::format("{}: {} per interval on each host of {} #{}{}", test, name, res->drive, rep,
                            res->partial() ? " (partial)" : "");
      Series s;
      // A host without intervals (missing, or failed before its measured phase) keeps its entry
      // in the legend, so the chart says which host is not there.
      for (const HostResult& h : res->per_host)
        s.add(h.intervals, name,
              fmt::format("host {} (rank {}){}", h.name, h.rank, h.status == "complete" ? "" : " (" + h.status + ")"));
      c.body = s.body(c.title, name);
      scripts.push_back(std::move(c));
    }
  }

  std::vector<Chart> charts;
  std::set<std::string> used;
  for (auto& s : scripts) {
    std::string name = s.name;
    for (int i = 2; !used.insert(name).second; ++i) name = fmt::format("{}_{}", s.name, i);
    s.name = name;
    run_gnuplot(abs_opt, program->string(), s);
    charts.push_back({s.test, s.name, s.title, strip_prolog(read_all(opt.dir / (s.name + ".svg")))});
  }
  return charts;
}

}  // namespace drivelab::report
