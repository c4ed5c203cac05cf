#pragma once
/// \file identity.hpp
/// Who ran, where, on what: the `tool`, `host` and `target` objects of the result record.
/// Everything is read from /proc and /sys; a field that cannot be read is null (never guessed).
#include <filesystem>
#include <string>

#include "drivelab/results/record.hpp"

namespace drivelab::results {

/// {name:"drivelab", version, git_describe, build_type, compiler, sanitizers:bool}
Json probe_tool();

/// The version `drivelab --version` prints and the Debian package carries, derived from `git
/// describe` at build time (rules in cmake/git_describe.cmake): "0.1.0~334.ga6a6264" (no release
/// tag yet: <project version>~<commits>.g<hash>), "1.2.0" (at tag v1.2.0), "1.2.0+5.gabc1234"
/// (5 commits after it); ".dirty" appended for uncommitted changes; the project version alone
/// without git.
std::string package_version();

/// {hostname, os (PRETTY_NAME of /etc/os-release), kernel (uname -r), arch, cpu_model, cpu_cores
/// (online logical CPUs), memory_bytes (MemTotal), virtualization (from /sys/class/dmi or cpuinfo
/// "hypervisor" flag: "vm" / "bare-metal" / null)}
Json probe_host();

/// The drive under test behind `target` (a directory or a block device):
/// {path (absolute), kind ("directory"|"block_device"), filesystem (ext4, xfs, tmpfs, ...),
///  mount_point, mount_source, block_device ("vda", "nvme0n1"; the whole disk for a partition),
///  partition, model, serial, firmware, vendor, rotational:bool, logical_block_bytes,
///  physical_block_bytes, capacity_bytes (device), filesystem_size_bytes, filesystem_free_bytes,
///  scheduler}
/// Reads /proc/self/mountinfo (drivelab::mount_containing), statfs(2) and
/// /sys/block/<dev>/{device/{model,firmware_rev,vendor},queue/*,size}. `serial` is the disk's
/// identity from the one serial chain, drivelab::device_serial (core/sysfs.hpp): exactly what
/// `--destroy-data-on` accepts for it (a loop device's backing file, a dm device's UUID, the
/// kernel name when nothing else names it); null only without a block device (tmpfs).
/// Throws EnvironmentError if `target` does not exist.
Json probe_target(const std::filesystem::path& target);

}  // namespace drivelab::results
