// The device's demand per unit of the application's work (device_demand.hpp).
#include "drivelab/results/device_demand.hpp"

#include <array>
#include <string_view>

#include "json_read.hpp"

namespace drivelab::results {

namespace cat = catalogue;

namespace {

/// The device's five totals per unit of a database test's work (`work`, a headline count), in the
/// order read bytes, read I/Os, write bytes, write I/Os, flush I/Os.
struct PerWork {
  const MetricDef* work;
  std::array<const MetricDef*, 5> demand;
};
constexpr std::array<PerWork, 2> kPerWork{{
    {&cat::transactions,
     {&cat::device_read_bytes_per_txn, &cat::device_read_ios_per_txn, &cat::device_write_bytes_per_txn,
      &cat::device_write_ios_per_txn, &cat::device_flush_ios_per_txn}},
    {&cat::new_orders,
     {&cat::device_read_bytes_per_new_order, &cat::device_read_ios_per_new_order,
      &cat::device_write_bytes_per_new_order, &cat::device_write_ios_per_new_order,
      &cat::device_flush_ios_per_new_order}},
}};

}  // namespace

std::optional<double> positive_metric(const TestRecord& test, const MetricDef& def) {
  const Metric* m = test.find_metric(def.name);
  if (m == nullptr || !(m->value > 0) || m->value - m->value != 0) return std::nullopt;
  return m->value;
}

std::optional<double> application_bytes(const TestRecord& test, double seconds) {
  if (const auto b = positive_metric(test, cat::bytes)) return b;
  if (!(seconds > 0)) return std::nullopt;
  for (const MetricDef* def : {&cat::mb_s, &cat::throughput_mb_s})
    if (const auto mb_s = positive_metric(test, *def)) return *mb_s * 1e6 * seconds;
  return std::nullopt;
}

bool is_curve(const TestRecord& test) {
  const auto points = test.details.find("points");
  return points != test.details.end() && points->is_array() && points->size() > 1;
}

std::vector<std::pair<const MetricDef*, double>> demand_metrics(const TestRecord& test, const DeviceTotals& device,
                                                                double seconds) {
  std::vector<std::pair<const MetricDef*, double>> out;
  const auto rb = static_cast<double>(device.read_bytes), wb = static_cast<double>(device.write_bytes);
  const auto ri = static_cast<double>(device.read_ios), wi = static_cast<double>(device.write_ios);
  const std::array<double, 5> totals{rb, ri, wb, wi, static_cast<double>(device.flush_ios)};
  for (const PerWork& p : kPerWork)
    if (const auto work = positive_metric(test, *p.work))
      for (std::size_t k = 0; k < totals.size(); ++k) out.emplace_back(p.demand[k], totals[k] / *work);
  if (const auto ios = positive_metric(test, cat::ios)) {
    out.insert(out.end(), {{&cat::device_read_ios_per_io, ri / *ios}, {&cat::device_write_ios_per_io, wi / *ios}});
  }
  if (const std::optional<double> app_bytes = application_bytes(test, seconds)) {
    out.insert(out.end(), {{&cat::device_read_bytes_per_byte, rb / *app_bytes},
                           {&cat::device_write_bytes_per_byte, wb / *app_bytes}});
  }
  if (test.kind == "video") {
    // The frames the measured phase moved (details.frames), not write_fps/read_fps x the window:
    // those rates are per second of write-pass or read-pass time, which made the figure about
    // half of what a frame costs (a fresh review: 4.9 MB written per 22.1 MB frame).
    const Json* moved = detail::member(test.details, "frames");
    const auto frames = [&](std::string_view key) {
      const Json* n = moved != nullptr && moved->is_object() ? detail::member(*moved, key) : nullptr;
      return n != nullptr && n->is_number() ? n->get<double>() : 0.0;
    };
    if (const double read = frames("read"); read > 0) out.emplace_back(&cat::device_read_bytes_per_frame, rb / read);
    if (const double written = frames("written"); written > 0)
      out.emplace_back(&cat::device_write_bytes_per_frame, wb / written);
  }
  return out;
}

}  // namespace drivelab::results
