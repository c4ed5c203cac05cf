#include <gtest/gtest.h>

#include "drivelab/oltp/tpcc_config.hpp"

namespace drivelab::oltp::tpcc {
namespace {

struct Decoded {
  TpccConfig config;
  std::string errors;
};

Decoded decode(const std::string& yaml) {
  config::Diagnostics diags;
  const auto doc = config::Document::load_string(yaml, "t.yaml", diags);
  const config::Node root = doc.root(diags);
  Decoded d;
  d.config = decode_tpcc_config(root.child("tpcc"));
  d.errors = diags.to_string();
  return d;
}

TEST(TpccConfig, DefaultsWhenTheSectionIsAbsent) {
  const auto d = decode("other: 1\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.backend, "sqlite");
  EXPECT_EQ(d.config.warehouses, 1);
  EXPECT_EQ(d.config.users, 10);
  EXPECT_EQ(d.config.think, ThinkMode::none);
  EXPECT_EQ(d.config.journal_mode, "WAL");
  EXPECT_EQ(d.config.synchronous, "FULL");
  EXPECT_EQ(d.config.cache_size_bytes, 64u << 20);
  EXPECT_FALSE(d.config.reuse);
  EXPECT_FALSE(d.config.keep_database);
  EXPECT_EQ(d.config.scale_items, kItems);
}

TEST(TpccConfig, KeysDecodeAndUsersDefaultToTenPerWarehouse) {
  auto d = decode("tpcc: {warehouses: 3, think: tpcc, cache_size: 8MiB, busy_timeout: 250ms, "
                  "synchronous: normal, journal_mode: delete, reuse: true, keep_database: true}\n");
  EXPECT_EQ(d.errors, "");
  EXPECT_EQ(d.config.users, 30);
  EXPECT_EQ(d.config.think, ThinkMode::tpcc);
  EXPECT_EQ(d.config.cache_size_bytes, 8u << 20);
  EXPECT_EQ(d.config.busy_timeout, std::chrono::milliseconds(250));
  EXPECT_TRUE(d.config.reuse);
  const auto j = to_json(d.config);
  EXPECT_EQ(j["users"], 30);
  EXPECT_EQ(j["think"], "tpcc");
  d = decode("tpcc: {warehouses: 2, users: 4}\n");
  EXPECT_EQ(d.config.users, 4);
}

TEST(TpccConfig, PlannedBackendsAreAClearConfigError) {
  const auto d = decode("tpcc:\n  backend: postgres\n");
  EXPECT_NE(d.errors.find("t.yaml:2:"), std::string::npos) << d.errors;
  EXPECT_NE(d.errors.find("tpcc.backend: backend 'postgres' is not built yet"), std::string::npos) << d.errors;
  EXPECT_NE(decode("tpcc: {backend: oracle}\n").errors.find("unknown backend 'oracle'"), std::string::npos);
}

TEST(TpccConfig, BadValuesAreAllReported) {
  const auto d = decode("tpcc: {warehouses: 0, users: 0, think: lots, journal_mode: fast, "
                        "synchronous: maybe, load_threads: 4, warehuses: 2}\n");
  for (const char* needle : {"tpcc.warehouses", "tpcc.users", "tpcc.think", "tpcc.journal_mode",
                             "tpcc.synchronous", "load_threads must be 1", "unknown key 'warehuses'"})
    EXPECT_NE(d.errors.find(needle), std::string::npos) << needle << "\n" << d.errors;
}

}  // namespace
}  // namespace drivelab::oltp::tpcc
