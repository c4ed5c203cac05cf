#include <ctime>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"

namespace drivelab::oltp::tpcc {
namespace {

// Column types and primary keys of clause 1.3. DECIMAL(p,s) as listed there; numeric ids as
// INTEGER (the spec's "unique IDs" of 2*W, 20, 96,000 ... fit in 32 bits); date-times as the
// dialect's {timestamp} type.
struct TableDdl {
  bool small_rows;  // rows far smaller than a page: clustered on the key where the dialect can
  std::string_view sql;
};

constexpr TableDdl kDdl[] = {
    {true, R"(CREATE TABLE warehouse (
  w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id)))"},
    {true, R"(CREATE TABLE district (
  d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4),
  d_ytd DECIMAL(12,2), d_next_o_id INTEGER,
  PRIMARY KEY (d_w_id, d_id)))"},
    {false, R"(CREATE TABLE customer (
  c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, c_first VARCHAR(16),
  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20),
  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since {timestamp},
  c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2),
  c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, c_delivery_cnt INTEGER,
  c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id)))"},
    // HISTORY has no primary key in TPC-C (clause 1.3: "rows ... do not require a unique key").
    {false, R"(CREATE TABLE history (
  h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER,
  h_date {timestamp}, h_amount DECIMAL(6,2), h_data VARCHAR(24)))"},
    {true, R"(CREATE TABLE new_order (
  no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)))"},
    {true, R"(CREATE TABLE orders (
  o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER,
  o_entry_d {timestamp}, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER,
  PRIMARY KEY (o_w_id, o_d_id, o_id)))"},
    {true, R"(CREATE TABLE order_line (
  ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL,
  ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d {timestamp},
  ol_quantity INTEGER, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)))"},
    {true, R"(CREATE TABLE item (
  i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DECIMAL(5,2),
  i_data VARCHAR(50),
  PRIMARY KEY (i_id)))"},
    {false, R"(CREATE TABLE stock (
  s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24),
  s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24),
  s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, s_order_cnt INTEGER,
  s_remote_cnt INTEGER, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id)))"},
    {true, R"(CREATE TABLE drivelab_meta (
  name VARCHAR(64) NOT NULL, value VARCHAR(200),
  PRIMARY KEY (name)))"},
};

constexpr std::string_view kIndexes[] = {
    "CREATE INDEX customer_last_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
};

constexpr int kMetaVersion = 1;

}  // namespace

std::vector<std::string> schema_ddl(const Dialect& dialect) {
  std::vector<std::string> out;
  for (const TableDdl& t : kDdl) {
    // {timestamp}: the dialect's date-time type (T-SQL's TIMESTAMP is rowversion).
    out.push_back(fmt::format(fmt::runtime(t.sql), fmt::arg("timestamp", dialect.timestamp_type)) +
                  dialect.table_options + (t.small_rows ? dialect.clustered_small_table_options : ""));
  }
  return out;
}

std::vector<std::string> index_ddl() { return {std::begin(kIndexes), std::end(kIndexes)}; }

void create_schema(Connection& conn, const Dialect& dialect) {
  for (const std::string& sql : schema_ddl(dialect)) conn.execute_immediate(sql);
}

void create_indexes(Connection& conn) {
  for (const std::string& sql : index_ddl()) conn.execute_immediate(sql);
}

void write_meta(Connection& conn, const LoadMeta& meta) {
  const std::pair<std::string_view, std::int64_t> rows[] = {
      {"version", kMetaVersion},           {"warehouses", meta.scale.warehouses},
      {"items", meta.scale.items},         {"c_load_c_last", meta.c_load.c_last},
      {"c_load_c_id", meta.c_load.c_id},   {"c_load_ol_i_id", meta.c_load.ol_i_id},
      {"complete", meta.complete ? 1 : 0},
  };
  conn.execute_immediate("DELETE FROM drivelab_meta");
  auto insert = conn.prepare("INSERT INTO drivelab_meta (name, value) VALUES (?, ?)");
  for (const auto& [name, value] : rows) {
    const std::string text = std::to_string(value);
    insert->bind_text(1, name);
    insert->bind_text(2, text);
    if (DbStatus s = insert->execute(); !s.ok()) throw_status("write drivelab_meta", s);
  }
}

std::optional<LoadMeta> read_meta(Connection& conn) {
  std::unique_ptr<Statement> q;
  try {
    q = conn.prepare("SELECT name, value FROM drivelab_meta");
  } catch (const BackendError&) {
    return std::nullopt;  // no such table: not one of our databases
  }
  if (!q->execute().ok()) return std::nullopt;
  LoadMeta meta;
  int found = 0;
  int version = 0;
  DbStatus st;
  while (q->next(st)) {
    const std::string name(q->column_text(0));
    int value = 0;
    try {
      value = std::stoi(std::string(q->column_text(1)));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    ++found;
    if (name == "version")
      version = value;
    else if (name == "warehouses")
      meta.scale.warehouses = value;
    else if (name == "items")
      meta.scale.items = value;
    else if (name == "c_load_c_last")
      meta.c_load.c_last = value;
    else if (name == "c_load_c_id")
      meta.c_load.c_id = value;
    else if (name == "c_load_ol_i_id")
      meta.c_load.ol_i_id = value;
    else if (name == "complete")
      meta.complete = value != 0;
    else
      --found;
  }
  if (!st.ok() || found != 7 || version != kMetaVersion) return std::nullopt;
  return meta;
}

const std::string& sql_timestamp_now() {
  thread_local std::time_t formatted = -1;
  thread_local std::string text;
  const std::time_t t = std::time(nullptr);
  if (t != formatted) {
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    text.assign(buf, n);
    formatted = t;
  }
  return text;
}

}  // namespace drivelab::oltp::tpcc
