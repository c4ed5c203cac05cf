#pragma once
/// \file link_speed.hpp
/// The speed of the link a drive sits on, and the most bytes per second it can carry: the
/// ceiling a throughput measured on that drive cannot exceed.
///
/// NVMe: the PCI device above the controller (Documentation/ABI/testing/sysfs-bus-pci):
/// current_link_speed ("8.0 GT/s PCIe"; older kernels "8 GT/s") and current_link_width ("4").
/// Per lane, PCIe gen 1 and 2 (2.5, 5 GT/s) carry 8 data bits in 10 (8b/10b), gen 3 to 5 (8, 16,
/// 32 GT/s) 128 in 130 (128b/130b); gen 6 (64 GT/s, PAM4 with FLIT) is taken as 1b/1b, which
/// over-states it by the FLIT overhead (an upper bound is what a ceiling needs). Bytes/s =
/// GT/s x 10^9 x encoding / 8 x lanes; PCIe packet overhead (TLP headers, DLLPs) is not deducted,
/// so no drive reaches this figure.
///
/// SATA: the ATA link above the disk (drivers/ata/libata-transport.c): <ataN>/linkN/ata_link/
/// linkN/sata_spd ("6.0 Gbps", "3.0 Gbps", "1.5 Gbps"), as /sys/class/ata_link/linkN/sata_spd
/// shows it. SATA encodes 8b/10b: 6 Gb/s carries 600 MB/s.
///
/// SAS: the SAS port nearest above the disk (drivers/scsi/scsi_transport_sas.c: a port-H:N
/// directory with a link to each of its phys, each phy's sas_phy/<phy>/negotiated_linkrate,
/// "12.0 Gbit", as /sys/class/sas_phy/<phy>/negotiated_linkrate shows it), summed over the port's
/// phys (a wide port). SAS-1 to SAS-3 (3, 6, 12 Gbit) encode 8b/10b; 22.5 Gbit (SAS-4) 128b/150b.
///
/// Other devices (virtio, USB, loop, dm without one of the above below them): nullopt with the
/// reason; a virtual device's PCI link speed says nothing of its storage.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "drivelab/core/sysfs.hpp"

namespace drivelab::telemetry {

struct LinkSpeed {
  std::string kind;              ///< "PCIe" or "SATA"
  double gigatransfers = 0;      ///< per lane: GT/s (PCIe) or Gb/s (SATA)
  int lanes = 1;                 ///< PCIe link width; 1 for SATA
  double max_bytes_per_s = 0;    ///< the link's payload ceiling (see above)
  std::string text;              ///< "PCIe 8.0 GT/s x4 (3938 MB/s)", "SATA 6.0 Gb/s (600 MB/s)"
  std::filesystem::path source;  ///< the sysfs file the speed was read from
};

/// Payload bytes per second of one PCIe lane at `gt_per_s` (encoding per generation, above).
double pcie_lane_bytes_per_s(double gt_per_s) noexcept;
/// Payload bytes per second of a SATA link at `gbit_per_s` (8b/10b).
double sata_bytes_per_s(double gbit_per_s) noexcept;

/// A PCIe link from the two attribute texts; nullopt for "Unknown", "0" lanes or malformed text.
std::optional<LinkSpeed> parse_pcie_link(std::string_view current_link_speed, std::string_view current_link_width);
/// A SATA link from a sata_spd text; nullopt for "<unknown>" or malformed text.
std::optional<LinkSpeed> parse_sata_link(std::string_view sata_spd);
/// Payload bytes per second of one SAS phy at `gbit_per_s` (8b/10b up to 12 Gbit, 128b/150b above).
double sas_phy_bytes_per_s(double gbit_per_s) noexcept;

/// The link of `device`'s whole disk, or why there is none.
struct LinkResult {
  std::optional<LinkSpeed> link;
  std::string reason;  ///< when `link` is empty: "vda is a virtio disk: its link is virtual"
};
/// Walks up from the disk's sysfs directory: the nearest ataN port (SATA), SAS port-H:N (SAS)
/// or, for an NVMe disk, the nearest PCI device with current_link_speed.
LinkResult link_speed(const SysBlock& device);

}  // namespace drivelab::telemetry
