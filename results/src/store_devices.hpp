#pragma once
/// \file store_devices.hpp (private)
/// The results store's `devices` table (store.hpp, schema version 2; docs/reporter.md "The
/// results store"): one row per test and block device the test's telemetry names
/// (details.telemetry.devices, telemetry/test_telemetry.hpp): the headline device, whose figures
/// are the test's headline metrics, and each device below it, whose figures are its
/// details.telemetry.devices[].test; with the health of the drive it is on (the test's
/// details.health, telemetry/health_record.hpp) or why there is none. Internal to results/:
/// store.cpp creates, fills and upgrades through it.
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include "drivelab/results/catalogue_types.hpp"
#include "drivelab/results/record.hpp"

namespace drivelab::results::detail {

/// The device figures with a column of their own (REAL, named as the declaration): every catalogue
/// declaration of kind `device` on the console's device line (trait kDeviceLine) whose name is
/// of the block device (`device_`, not the host's `host_psi_`): iostat -x's figures, the counts
/// over the measured phase and the demand per unit of the application's work. In catalogue order.
std::vector<const MetricDef*> device_columns();

/// One row of `devices`.
struct DeviceRow {
  std::size_t position = 0;       ///< the test's index in the record's tests
  std::string device;             ///< kernel name: "nvme0n1p2", "dm-0", "loop0"
  std::string role;               ///< "headline", "whole_disk", "slave", "backing_device", "backing_file_device"
  std::string below;              ///< the device it is below ("" for the headline)
  Json figures = Json::object();  ///< {declaration name: number}, the figures the record has
  std::string drive;              ///< the drive whose health `health` is ("/dev/nvme0"), or ""
  /// The drive's entry of the test's details.health.drives, or null. Its columns: drive_model,
  /// drive_firmware, drive_temperature_max_c, drive_percentage_used (after the test),
  /// drive_media_errors, drive_tmt1_transitions, drive_tmt2_transitions (deltas over the test),
  /// drive_throttled (0/1).
  Json health;
  std::string health_reason;  ///< when `health` is null: why
};

/// The names of the devices a test's details (TestRecord::details) name under telemetry.devices:
/// the headline first; empty when there are none (no telemetry, or a target without a block device).
std::vector<std::string> telemetry_device_names(const Json& test_details);

/// The rows of every test of `record` whose telemetry names devices; none for a record without
/// telemetry (written before issue 33) or a merge of hosts' records (its tests name devices per
/// host in details.devices, not details.telemetry).
std::vector<DeviceRow> device_rows(const RunRecord& record);

/// Creates the table and its indexes (schema version 2).
void create_devices_table(sqlite3* db, const std::filesystem::path& where);

/// The columns of device_columns() the table lacks.
std::vector<std::string> missing_device_columns(sqlite3* db, const std::filesystem::path& where);

/// Adds the columns of device_columns() the table lacks (a figure declared after the store was
/// made: NULL in the rows stored before).
void add_missing_device_columns(sqlite3* db, const std::filesystem::path& where);

/// Inserts `rows` of run `run_id`.
void insert_device_rows(sqlite3* db, const std::string& run_id, const std::vector<DeviceRow>& rows,
                        const std::filesystem::path& where);

/// The upgrade of a version-1 store (inside the caller's transaction): creates the table and fills
/// it from every stored record's JSON.
void upgrade_to_devices(sqlite3* db, const std::filesystem::path& where);

}  // namespace drivelab::results::detail
