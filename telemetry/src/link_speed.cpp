#include "drivelab/telemetry/link_speed.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

namespace drivelab::telemetry {
namespace fs = std::filesystem;

namespace {

/// The leading decimal number of `s` ("8.0 GT/s PCIe" -> 8.0), and the rest.
std::optional<double> leading_number(std::string_view s, std::string_view& rest) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return std::nullopt;
  rest = s.substr(static_cast<std::size_t>(ptr - s.data()));
  return v;
}

bool starts_with_digits(std::string_view s, std::string_view prefix) {
  if (s.rfind(prefix, 0) != 0 || s.size() == prefix.size()) return false;
  for (char c : s.substr(prefix.size()))
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

double pcie_lane_bytes_per_s(double gt) noexcept {
  const double encoding = gt <= 5.0 ? 8.0 / 10.0 : gt <= 32.0 ? 128.0 / 130.0 : 1.0;
  return gt * 1e9 * encoding / 8.0;
}

double sata_bytes_per_s(double gbit) noexcept { return gbit * 1e9 * 8.0 / 10.0 / 8.0; }

double sas_phy_bytes_per_s(double gbit) noexcept {
  const double encoding = gbit <= 12.0 ? 8.0 / 10.0 : 128.0 / 150.0;
  return gbit * 1e9 * encoding / 8.0;
}

std::optional<LinkSpeed> parse_pcie_link(std::string_view speed, std::string_view width) {
  std::string_view rest;
  const auto gt = leading_number(speed, rest);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (!gt || *gt <= 0 || rest.rfind("GT/s", 0) != 0) return std::nullopt;
  while (!width.empty() && (width.front() == ' ' || width.front() == 'x')) width.remove_prefix(1);
  while (!width.empty() && (width.back() == ' ' || width.back() == '\n')) width.remove_suffix(1);
  int lanes = 0;
  const auto [ptr, ec] = std::from_chars(width.data(), width.data() + width.size(), lanes);
  if (ec != std::errc() || ptr != width.data() + width.size() || lanes <= 0) return std::nullopt;
  LinkSpeed l;
  l.kind = "PCIe";
  l.gigatransfers = *gt;
  l.lanes = lanes;
  l.max_bytes_per_s = pcie_lane_bytes_per_s(*gt) * lanes;
  l.text = fmt::format("PCIe {:.1f} GT/s x{} ({:.0f} MB/s)", *gt, lanes, l.max_bytes_per_s / 1e6);
  return l;
}

std::optional<LinkSpeed> parse_sata_link(std::string_view spd) {
  std::string_view rest;
  const auto gbit = leading_number(spd, rest);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (!gbit || *gbit <= 0 || rest.rfind("Gbps", 0) != 0) return std::nullopt;
  LinkSpeed l;
  l.kind = "SATA";
  l.gigatransfers = *gbit;
  l.max_bytes_per_s = sata_bytes_per_s(*gbit);
  l.text = fmt::format("SATA {:.1f} Gb/s ({:.0f} MB/s)", *gbit, l.max_bytes_per_s / 1e6);
  return l;
}

LinkResult link_speed(const SysBlock& device) {
  const std::string& disk = device.disk;
  const bool nvme = disk.rfind("nvme", 0) == 0;
  std::error_code ec;
  fs::path dir = fs::canonical(device.disk_dir, ec);
  if (ec) dir = device.disk_dir;
  for (fs::path p = dir.parent_path(); !p.empty() && p != p.parent_path(); p = p.parent_path()) {
    const std::string name = p.filename().string();
    if (starts_with_digits(name, "ata")) {
      const std::string n = name.substr(3);
      const fs::path spd = p / ("link" + n) / "ata_link" / ("link" + n) / "sata_spd";
      const auto text = read_sysfs_text(spd);
      if (!text)
        return {std::nullopt, fmt::format("{} is on ATA port {}, whose {} cannot be read", disk, name, spd.string())};
      auto l = parse_sata_link(*text);
      if (!l)
        return {std::nullopt,
                fmt::format("{}: '{}' is no link speed (the link is down or unknown)", spd.string(), *text)};
      l->source = spd;
      return {std::move(l), ""};
    }
    if (name.rfind("port-", 0) == 0) {
      // A SAS port: a link per phy ("phy-0:0"), each phy's sas_phy/<phy>/negotiated_linkrate.
      LinkSpeed l;
      l.kind = "SAS";
      l.lanes = 0;
      std::string rates;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        const std::string phy = e.path().filename().string();
        if (phy.rfind("phy-", 0) != 0) continue;
        const fs::path rate = e.path() / "sas_phy" / phy / "negotiated_linkrate";
        const auto t = read_sysfs_text(rate);
        std::string_view rest;
        double gbit = 0;
        if (t)
          if (const auto g = leading_number(*t, rest)) gbit = *g;
        rates += (rates.empty() ? "" : ", ") + phy + " " + t.value_or("unreadable");
        if (gbit <= 0) continue;  // "Unknown", "Phy disabled"
        ++l.lanes;
        l.gigatransfers = gbit;
        l.max_bytes_per_s += sas_phy_bytes_per_s(gbit);
        l.source = rate;
      }
      if (l.lanes == 0)
        return {std::nullopt, fmt::format("{} is on SAS port {} with no negotiated link ({})", disk, name,
                                          rates.empty() ? "no phys" : rates)};
      l.text = fmt::format("SAS {:.1f} Gbit x{} ({:.0f} MB/s)", l.gigatransfers, l.lanes, l.max_bytes_per_s / 1e6);
      return {std::move(l), ""};
    }
    if (nvme && fs::exists(p / "current_link_speed", ec)) {
      const auto speed = read_sysfs_text(p / "current_link_speed");
      const auto width = read_sysfs_text(p / "current_link_width");
      auto l = speed && width ? parse_pcie_link(*speed, *width) : std::nullopt;
      if (!l)
        return {std::nullopt, fmt::format("{}: '{}' x '{}' is no PCIe link speed", (p / "current_link_speed").string(),
                                          speed.value_or(""), width.value_or(""))};
      l->source = p / "current_link_speed";
      return {std::move(l), ""};
    }
  }
  if (nvme) return {std::nullopt, fmt::format("{} is an NVMe disk on no PCIe device (NVMe over fabrics?)", disk)};
  if (disk.rfind("vd", 0) == 0) return {std::nullopt, fmt::format("{} is a virtio disk: its link is virtual", disk)};
  return {std::nullopt, fmt::format("{} is neither an NVMe, SATA nor SAS disk: no link speed", disk)};
}

}  // namespace drivelab::telemetry
