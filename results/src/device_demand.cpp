// The device's demand per unit of the application's work (device_demand.hpp).
#include "drivelab/results/device_demand.hpp"

namespace drivelab::results {

namespace cat = catalogue;

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
  const auto fi = static_cast<double>(device.flush_ios);
  if (const auto txn = positive_metric(test, cat::transactions)) {
    out.insert(out.end(), {{&cat::device_read_bytes_per_txn, rb / *txn},
                           {&cat::device_read_ios_per_txn, ri / *txn},
                           {&cat::device_write_bytes_per_txn, wb / *txn},
                           {&cat::device_write_ios_per_txn, wi / *txn},
                           {&cat::device_flush_ios_per_txn, fi / *txn}});
  }
  if (const auto no = positive_metric(test, cat::new_orders)) {
    out.insert(out.end(), {{&cat::device_read_bytes_per_new_order, rb / *no},
                           {&cat::device_read_ios_per_new_order, ri / *no},
                           {&cat::device_write_bytes_per_new_order, wb / *no},
                           {&cat::device_write_ios_per_new_order, wi / *no},
                           {&cat::device_flush_ios_per_new_order, fi / *no}});
  }
  if (const auto ios = positive_metric(test, cat::ios)) {
    out.insert(out.end(), {{&cat::device_read_ios_per_io, ri / *ios}, {&cat::device_write_ios_per_io, wi / *ios}});
  }
  if (const std::optional<double> app_bytes = application_bytes(test, seconds)) {
    out.insert(out.end(), {{&cat::device_read_bytes_per_byte, rb / *app_bytes},
                           {&cat::device_write_bytes_per_byte, wb / *app_bytes}});
  }
  if (seconds > 0 && test.kind == "video") {
    const double fps =
        positive_metric(test, cat::write_fps).value_or(0) + positive_metric(test, cat::read_fps).value_or(0);
    if (fps > 0) {
      const double frames = fps * seconds;
      out.insert(out.end(),
                 {{&cat::device_read_bytes_per_frame, rb / frames}, {&cat::device_write_bytes_per_frame, wb / frames}});
    }
  }
  return out;
}

}  // namespace drivelab::results
