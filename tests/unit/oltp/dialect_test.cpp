// The SQL dialect hooks: every TPC-C statement and the DDL rendered in each dialect, no server.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include <fmt/format.h>

#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "drivelab/oltp/tpcc/tpcc_statements.hpp"

namespace drivelab::oltp {
namespace {

using tpcc::schema_ddl;
using tpcc::transaction_sql;

bool has(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

/// `word` as a whole word, case-insensitive (LIMIT, TIMESTAMP ...).
bool has_word(const std::string& text, const std::string& word) {
  return std::regex_search(text, std::regex("\\b" + word + "\\b", std::regex::icase));
}

TEST(Dialect, SqlServerRendersTableHintsTopAndDatetime2) {
  const Dialect d = make_dialect(SqlDialect::sqlserver);
  const auto q = transaction_sql(d);
  for (const auto& [name, sql] : q.all()) {
    SCOPED_TRACE(name + ": " + sql);
    EXPECT_FALSE(has_word(sql, "LIMIT"));
    EXPECT_FALSE(has(sql, "FOR UPDATE"));
  }
  EXPECT_EQ(q.no_district,
            "SELECT d_tax, d_next_o_id FROM district WITH (UPDLOCK, ROWLOCK) WHERE d_w_id = ? AND d_id = ?");
  EXPECT_EQ(q.no_stock[2],
            "SELECT s_quantity, s_data, s_dist_03 FROM stock WITH (UPDLOCK, ROWLOCK) WHERE s_i_id = ? AND s_w_id = ?");
  EXPECT_TRUE(has(q.p_customer, "FROM customer WITH (UPDLOCK, ROWLOCK) WHERE"));
  EXPECT_EQ(q.d_oldest_new_order,
            "SELECT TOP (1) no_o_id FROM new_order WITH (UPDLOCK, ROWLOCK) WHERE no_w_id = ? AND no_d_id = ? "
            "ORDER BY no_o_id");
  // Reads that lock nothing carry no hint.
  EXPECT_FALSE(has(q.sl_count, "UPDLOCK"));
  EXPECT_FALSE(has(q.os_order, "UPDLOCK"));

  for (const std::string& ddl : schema_ddl(d)) {
    SCOPED_TRACE(ddl);
    EXPECT_FALSE(has_word(ddl, "TIMESTAMP")) << "T-SQL TIMESTAMP is rowversion";
    EXPECT_FALSE(has(ddl, "ENGINE"));
    EXPECT_FALSE(has(ddl, "WITHOUT ROWID"));
  }
  const auto ddl = schema_ddl(d);
  EXPECT_TRUE(has(ddl[2], "c_since DATETIME2"));
  EXPECT_TRUE(has(ddl[5], "o_entry_d DATETIME2"));
}

TEST(Dialect, MysqlRendersForUpdateLimitInnodbAndDatetime) {
  const Dialect d = make_dialect(SqlDialect::mysql);
  const auto q = transaction_sql(d);
  EXPECT_EQ(q.no_district, "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE");
  // MySQL takes LIMIT only before FOR UPDATE.
  EXPECT_EQ(q.d_oldest_new_order,
            "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE");
  for (const auto& [name, sql] : q.all()) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(has(sql, "UPDLOCK"));
    EXPECT_FALSE(has(sql, "TOP ("));
  }
  for (const std::string& ddl : schema_ddl(d)) {
    SCOPED_TRACE(ddl);
    EXPECT_TRUE(ddl.ends_with(") ENGINE=InnoDB"));
    EXPECT_FALSE(has_word(ddl, "TIMESTAMP"));
  }
  EXPECT_TRUE(has(schema_ddl(d)[3], "h_date DATETIME,"));
}

TEST(Dialect, PostgresRendersForUpdateAndLimit) {
  const Dialect d = make_dialect(SqlDialect::postgres);
  const auto q = transaction_sql(d);
  EXPECT_TRUE(q.p_customer.ends_with("WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"));
  EXPECT_TRUE(q.d_oldest_new_order.ends_with("ORDER BY no_o_id LIMIT 1 FOR UPDATE"));
  for (const std::string& ddl : schema_ddl(d)) {
    EXPECT_FALSE(has(ddl, "ENGINE"));
    EXPECT_FALSE(has(ddl, "ROWID"));
  }
  EXPECT_TRUE(has(schema_ddl(d)[6], "ol_delivery_d TIMESTAMP,"));
}

TEST(Dialect, SqliteRendersWhatTheSqliteBackendAlwaysRan) {
  // The SQLite backend builds its Dialect from the defaults (name + WITHOUT ROWID): both must
  // render the same text, and that text must be what it ran before the hooks existed.
  Dialect from_defaults;
  from_defaults.name = "sqlite";
  from_defaults.clustered_small_table_options = " WITHOUT ROWID";
  const Dialect d = make_dialect(SqlDialect::sqlite);
  EXPECT_EQ(transaction_sql(d).all(), transaction_sql(from_defaults).all());
  EXPECT_EQ(schema_ddl(d), schema_ddl(from_defaults));

  const auto q = transaction_sql(d);
  EXPECT_EQ(q.no_district, "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?");
  EXPECT_EQ(q.d_oldest_new_order,
            "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1");
  const auto ddl = schema_ddl(d);
  ASSERT_EQ(ddl.size(), 10u);
  EXPECT_TRUE(ddl[0].ends_with("PRIMARY KEY (w_id)) WITHOUT ROWID"));
  EXPECT_TRUE(has(ddl[2], "c_since TIMESTAMP,"));
  EXPECT_TRUE(ddl[2].ends_with("PRIMARY KEY (c_w_id, c_d_id, c_id))"));  // CUSTOMER rows are large
}

TEST(Dialect, EveryStatementIsRenderedAndDistinctPerDistrict) {
  const auto q = transaction_sql(make_dialect(SqlDialect::sqlserver));
  const auto all = q.all();
  EXPECT_EQ(all.size(), 40u);  // New-Order 9 + 10 stock lookups, Payment 9, Order-Status 3, Delivery 7, Stock-Level 2
  for (const auto& [name, sql] : all) {
    EXPECT_FALSE(sql.empty()) << name;
    EXPECT_FALSE(has(sql, "{")) << name << ": unrendered placeholder";
  }
  for (int d = 1; d <= 10; ++d)
    EXPECT_TRUE(has(q.no_stock[static_cast<std::size_t>(d - 1)], fmt::format("s_dist_{:02d}", d))) << d;
}

}  // namespace
}  // namespace drivelab::oltp
