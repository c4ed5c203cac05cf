// The five TPC-C transactions as server-side procedures (tpcc_procedures.hpp). Each body follows
// the statements of its `statements` counterpart (tpcc_statements.cpp) one for one, with the
// clauses cited there, except PostgreSQL's, which fold statements together (each statement of a
// PL/pgSQL body pays the executor's start-up): New-Order and Delivery are set-based, Payment reads
// what it updates with UPDATE ... RETURNING, and a customer chosen by last name is counted and
// found in one statement (their comments say how).
#include "drivelab/oltp/tpcc/tpcc_procedures.hpp"

#include <iterator>

#include <fmt/format.h>

#include "drivelab/core/errors.hpp"
#include "drivelab/oltp/tpcc/tpcc_schema.hpp"
#include "tpcc_protocols.hpp"

namespace drivelab::oltp::tpcc {
namespace {

// ---- what both dialects' procedures share ------------------------------------------------------
// The bodies below are fmt format strings: `{name}` stands for one of these steps, rendered for
// the dialect (and for Payment or Order-Status) by procedure_ddl().

/// Clause 2.5.2.2 / 2.6.2.2: with p_by_name, v_c_id becomes the customer of warehouse `w`,
/// district `d` and last name p_c_last at position ceil(n/2) (1-based) of the n sorted by
/// C_FIRST; none is a damaged database. PostgreSQL counts them in the same statement (the OFFSET's
/// subquery), MySQL in a statement before.
std::string customer_by_name(const Dialect& dialect, std::string_view w, std::string_view d) {
  if (dialect.procedures != ProcedureLanguage::sql_psm)
    return fmt::format(R"(  IF p_by_name <> 0 THEN
    SELECT c_id INTO v_c_id FROM customer
      WHERE c_w_id = {0} AND c_d_id = {1} AND c_last = p_c_last
      ORDER BY c_first
      OFFSET (SELECT (COUNT(*) - 1) / 2 FROM customer WHERE c_w_id = {0} AND c_d_id = {1} AND c_last = p_c_last)
      LIMIT 1;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'no customer named % in warehouse % district %', p_c_last, {0}, {1};
    END IF;
  END IF;)",
                       w, d);
  return fmt::format(R"(  IF p_by_name <> 0 THEN
    SELECT COUNT(*) INTO v_count FROM customer
      WHERE c_w_id = {0} AND c_d_id = {1} AND c_last = p_c_last;
    IF v_count = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer with that last name'; END IF;
    SET v_count = (v_count - 1) DIV 2;
    SELECT c_id INTO v_c_id FROM customer
      WHERE c_w_id = {0} AND c_d_id = {1} AND c_last = p_c_last
      ORDER BY c_first LIMIT v_count, 1;
  END IF;)",
                     w, d);
}

/// Clause 2.5.2.2, once the customer v_c_id is known: the customer's row read and the payment
/// booked on it (a BC customer's C_DATA gets the payment at its left, truncated to 500
/// characters), and its HISTORY row (H_DATA: W_NAME and D_NAME separated by 4 spaces).
/// PostgreSQL reads, updates and inserts in one statement (UPDATE ... RETURNING feeding the
/// INSERT); MySQL reads with SELECT ... FOR UPDATE (in kMyPayment), then updates and inserts.
std::string pay_customer(const Dialect& dialect) {
  if (dialect.procedures != ProcedureLanguage::sql_psm)
    return R"(  WITH c AS (
    UPDATE customer SET c_balance = c_balance - v_amount, c_ytd_payment = c_ytd_payment + v_amount,
           c_payment_cnt = c_payment_cnt + 1,
           c_data = CASE WHEN c_credit = 'BC'
                         THEN left(format('%s %s %s %s %s %s ', v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id,
                                          v_amount) || c_data, 500)
                         ELSE c_data END
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
      RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
                c_since, c_credit, c_credit_lim, c_discount, c_balance, c_data)
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    SELECT v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_date, v_amount, v_wd.w_name || '    ' || v_wd.d_name
      FROM c;
  IF NOT FOUND THEN RAISE EXCEPTION 'customer %/%/% not found', p_c_w_id, p_c_d_id, v_c_id; END IF;)";
  return R"(  IF v_c_credit = 'BC' THEN
    UPDATE customer SET c_balance = c_balance - p_h_amount, c_ytd_payment = c_ytd_payment + p_h_amount,
           c_payment_cnt = c_payment_cnt + 1,
           c_data = LEFT(CONCAT(v_c_id, ' ', p_c_d_id, ' ', p_c_w_id, ' ', p_d_id, ' ', p_w_id, ' ',
                                p_h_amount, ' ', v_c_data), 500)
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_h_amount, c_ytd_payment = c_ytd_payment + p_h_amount,
           c_payment_cnt = c_payment_cnt + 1
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, p_h_date, p_h_amount,
            CONCAT(v_w_name, '    ', v_d_name));)";
}

/// Clause 2.7.4.2, once district v_d's oldest order v_o_id is taken and its customer v_c_id
/// read: the carrier, the lines' delivery date and the customer's balance (the same SQL in both
/// dialects, indented by `indent`).
std::string deliver_order(std::string_view indent) {
  return fmt::format(R"({0}UPDATE orders SET o_carrier_id = p_o_carrier_id
{0}  WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
{0}UPDATE order_line SET ol_delivery_d = p_delivery_d
{0}  WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
{0}SELECT SUM(ol_amount) INTO v_amount FROM order_line
{0}  WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o_id;
{0}UPDATE customer SET c_balance = c_balance + COALESCE(v_amount, 0),
{0}       c_delivery_cnt = c_delivery_cnt + 1
{0}  WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c_id;)",
                     indent);
}

// ---- PostgreSQL (PL/pgSQL) ---------------------------------------------------------------------

/// New-Order (clause 2.4.2.2); returns the new O_ID. Set-based, in two statements instead of the
/// per-line clause's 46 for 10 lines (each statement of a PL/pgSQL body pays the executor's
/// start-up and end and a plan-cache check: 18% of the server's CPU in the TPC-C mix, measured
/// with perf when New-Order took 7; HammerDB v4.12's NEWORD is set-based too, pgoltp.tcl:479-600): one takes the
/// district's next O_ID with UPDATE ... RETURNING and reads the WAREHOUSE and CUSTOMER rows with it; one
/// (data-modifying CTEs) reads the items of all lines, reads and updates their stock rows, turns them into ORDER-LINE
/// rows and inserts the ORDERS and NEW-ORDER rows. An unused item (clause 2.4.2.3) leaves its line out of the join: the
/// line count falls short and the order is rolled back with kRollbackSqlstate, naming the item.
/// The effects are the per-line clause's exactly: an item ordered on two lines from the same
/// warehouse has its S_QUANTITY rule applied twice in line order (drivelab_stock_quantity), its
/// S_YTD/S_ORDER_CNT/S_REMOTE_CNT counted per line. The stock rows are locked in (S_W_ID, S_I_ID)
/// order, so two New-Orders sharing items do not deadlock on them.
constexpr std::string_view kPgStockQuantity = R"(CREATE OR REPLACE FUNCTION drivelab_stock_quantity(
  p_quantity INTEGER, p_ordered INTEGER[])
RETURNS INTEGER LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v INTEGER := p_quantity; q INTEGER;
BEGIN
  FOREACH q IN ARRAY p_ordered LOOP
    v := CASE WHEN v - q >= 10 THEN v - q ELSE v - q + 91 END;
  END LOOP;
  RETURN v;
END $$)";

constexpr std::string_view kPgNewOrder = R"(CREATE OR REPLACE FUNCTION drivelab_neword(
  p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER, p_ol_cnt INTEGER,
  p_i_ids TEXT, p_supply_w_ids TEXT, p_quantities TEXT, p_entry_d TIMESTAMP)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  v_i_ids INTEGER[] := string_to_array(p_i_ids, ',')::INTEGER[];
  v_supply INTEGER[] := string_to_array(p_supply_w_ids, ',')::INTEGER[];
  v_qty INTEGER[] := string_to_array(p_quantities, ',')::INTEGER[];
  v_all_local INTEGER := CASE WHEN p_w_id = ALL (v_supply) THEN 1 ELSE 0 END;
  v_h RECORD; v_o_id INTEGER; v_rows INTEGER; v_unused INTEGER;
BEGIN
  WITH d AS (
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id
      RETURNING d_tax, d_next_o_id - 1 AS o_id)
  SELECT d.o_id, d.d_tax, w.w_tax, c.c_discount, c.c_last, c.c_credit INTO v_h
    FROM d, warehouse w, customer c
    WHERE w.w_id = p_w_id AND c.c_w_id = p_w_id AND c.c_d_id = p_d_id AND c.c_id = p_c_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'warehouse %, district %/% or customer %/%/% not found',
      p_w_id, p_w_id, p_d_id, p_w_id, p_d_id, p_c_id;
  END IF;
  v_o_id := v_h.o_id;
  WITH lines AS (
    SELECT u.id, u.sw, u.q, u.n::INTEGER AS n, i.i_price, i.i_name, i.i_data
      FROM unnest(v_i_ids, v_supply, v_qty) WITH ORDINALITY AS u(id, sw, q, n)
      JOIN item i ON i.i_id = u.id),
  pairs AS (
    SELECT l.id, l.sw, count(*)::INTEGER AS cnt, sum(l.q)::INTEGER AS qsum, array_agg(l.q ORDER BY l.n) AS qs
      FROM lines l GROUP BY l.id, l.sw ORDER BY l.sw, l.id),
  upd AS (
    UPDATE stock SET
        s_quantity = CASE WHEN p.cnt > 1 THEN drivelab_stock_quantity(stock.s_quantity, p.qs)
                          WHEN stock.s_quantity - p.qsum >= 10 THEN stock.s_quantity - p.qsum
                          ELSE stock.s_quantity - p.qsum + 91 END,
        s_ytd = stock.s_ytd + p.qsum, s_order_cnt = stock.s_order_cnt + p.cnt,
        s_remote_cnt = stock.s_remote_cnt + CASE WHEN p.sw <> p_w_id THEN p.cnt ELSE 0 END
      FROM pairs p WHERE stock.s_i_id = p.id AND stock.s_w_id = p.sw
      RETURNING stock.s_i_id, stock.s_w_id, stock.s_data,
        CASE p_d_id WHEN 1 THEN stock.s_dist_01 WHEN 2 THEN stock.s_dist_02 WHEN 3 THEN stock.s_dist_03
          WHEN 4 THEN stock.s_dist_04 WHEN 5 THEN stock.s_dist_05 WHEN 6 THEN stock.s_dist_06
          WHEN 7 THEN stock.s_dist_07 WHEN 8 THEN stock.s_dist_08 WHEN 9 THEN stock.s_dist_09
          ELSE stock.s_dist_10 END AS dist_info),
  o AS (
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
      VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, p_ol_cnt, v_all_local)),
  n AS (
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id))
  INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                          ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
    SELECT v_o_id, p_d_id, p_w_id, l.n, l.id, l.sw, NULL, l.q, l.q * l.i_price, upd.dist_info
      FROM lines l JOIN upd ON upd.s_i_id = l.id AND upd.s_w_id = l.sw;
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  IF v_rows <> p_ol_cnt THEN
    SELECT u.id INTO v_unused FROM unnest(v_i_ids) WITH ORDINALITY AS u(id, n)
      WHERE NOT EXISTS (SELECT 1 FROM item WHERE i_id = u.id) ORDER BY u.n LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'DLRB1',
        MESSAGE = format('unused item %s: New-Order rolled back (clause 2.4.2.3)', v_unused);
    END IF;
    RAISE EXCEPTION 'stock rows missing: % of % order lines found (warehouse %)', v_rows, p_ol_cnt, p_w_id;
  END IF;
  RETURN v_o_id;
END $$)";

/// Payment (clause 2.5.2.2); returns the customer's C_ID. Two statements (three by last name)
/// instead of the clause's five (seven): WAREHOUSE is updated and read by a CTE that the DISTRICT
/// update joins (so the warehouse row is always locked first, as in the per-statement order), and
/// the customer's read, update and HISTORY row are one statement (pay_customer).
constexpr std::string_view kPgPayment = R"(CREATE OR REPLACE FUNCTION drivelab_payment(
  p_w_id INTEGER, p_d_id INTEGER, p_c_w_id INTEGER, p_c_d_id INTEGER, p_c_id INTEGER,
  p_by_name INTEGER, p_c_last TEXT, p_h_amount NUMERIC, p_h_date TIMESTAMP)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  v_amount NUMERIC := round(p_h_amount, 2); v_wd RECORD; v_c_id INTEGER := p_c_id;
BEGIN
  WITH w AS (
    UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w_id
      RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip)
  UPDATE district SET d_ytd = d_ytd + v_amount FROM w WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING w.w_name, w.w_street_1, w.w_street_2, w.w_city, w.w_state, w.w_zip,
              d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_wd;
  IF NOT FOUND THEN RAISE EXCEPTION 'warehouse % or district %/% not found', p_w_id, p_w_id, p_d_id; END IF;
{payment_customer}
{pay_customer}
  RETURN v_c_id;
END $$)";

/// Order-Status (clause 2.6.2.2, read-only); returns the customer's C_ID.
constexpr std::string_view kPgOrderStatus = R"(CREATE OR REPLACE FUNCTION drivelab_ostat(
  p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER, p_by_name INTEGER, p_c_last TEXT)
RETURNS INTEGER LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_c_id INTEGER := p_c_id; v_count INTEGER; v_c RECORD; v_o RECORD; v_l RECORD;
BEGIN
{order_status_customer}
  SELECT c_balance, c_first, c_middle, c_last INTO v_c FROM customer
    WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
  IF NOT FOUND THEN RAISE EXCEPTION 'customer %/%/% not found', p_w_id, p_d_id, v_c_id; END IF;
  SELECT o_id, o_entry_d, o_carrier_id INTO v_o FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_id =
      (SELECT MAX(o_id) FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id);
  IF FOUND THEN
    SELECT COUNT(ol_i_id), SUM(ol_supply_w_id), SUM(ol_quantity), SUM(ol_amount), MAX(ol_delivery_d)
      INTO v_l FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o.o_id;
  END IF;
  RETURN v_c_id;
END $$)";

/// Delivery (clause 2.7.4.2), all ten districts; returns how many were delivered. Set-based, as
/// New-Order: one statement finds and deletes each district's oldest NEW-ORDER row, one sets the
/// orders' carrier and returns their customers, one sets the lines' delivery date and books each
/// order's SUM(OL_AMOUNT) on its customer: 3 statements instead of 6 per district (HammerDB's
/// DELIVERY is set-based the same way, pgoltp.tcl:1269-1328). A district whose oldest order a
/// concurrent Delivery took first (found, but not deleted here) raises a serialization failure,
/// as the line-by-line body did: the driver reruns the call.
constexpr std::string_view kPgDelivery = R"(CREATE OR REPLACE FUNCTION drivelab_delivery(
  p_w_id INTEGER, p_o_carrier_id INTEGER, p_delivery_d TIMESTAMP)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  v_found INTEGER; v_ds INTEGER[]; v_os INTEGER[]; v_cs INTEGER[]; v_delivered INTEGER; v_rows INTEGER;
BEGIN
  WITH oldest AS (
    SELECT g.d, (SELECT no_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = g.d
                   ORDER BY no_o_id LIMIT 1) AS o_id
      FROM generate_series(1, 10) AS g(d)),
  del AS (
    DELETE FROM new_order USING oldest
      WHERE new_order.no_w_id = p_w_id AND new_order.no_d_id = oldest.d AND new_order.no_o_id = oldest.o_id
      RETURNING new_order.no_d_id, new_order.no_o_id)
  SELECT (SELECT count(o_id) FROM oldest)::INTEGER, array_agg(del.no_d_id ORDER BY del.no_d_id),
         array_agg(del.no_o_id ORDER BY del.no_d_id), count(*)::INTEGER
    INTO v_found, v_ds, v_os, v_delivered FROM del;
  IF v_delivered <> v_found THEN
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
      MESSAGE = format('%s of %s oldest new orders of warehouse %s delivered concurrently',
                       v_found - v_delivered, v_found, p_w_id);
  END IF;
  IF v_delivered = 0 THEN RETURN 0; END IF;
  WITH upd AS (
    UPDATE orders SET o_carrier_id = p_o_carrier_id FROM unnest(v_ds, v_os) AS u(d, o)
      WHERE orders.o_w_id = p_w_id AND orders.o_d_id = u.d AND orders.o_id = u.o
      RETURNING orders.o_d_id, orders.o_c_id)
  SELECT array_agg(upd.o_c_id ORDER BY upd.o_d_id), count(*)::INTEGER INTO v_cs, v_rows FROM upd;
  IF v_rows <> v_delivered THEN
    RAISE EXCEPTION 'orders missing: % of % delivered orders of warehouse % found', v_rows, v_delivered, p_w_id;
  END IF;
  WITH lines AS (
    UPDATE order_line SET ol_delivery_d = p_delivery_d FROM unnest(v_ds, v_os) AS u(d, o)
      WHERE order_line.ol_w_id = p_w_id AND order_line.ol_d_id = u.d AND order_line.ol_o_id = u.o
      RETURNING order_line.ol_d_id, order_line.ol_amount),
  sums AS (SELECT lines.ol_d_id AS d, SUM(lines.ol_amount) AS amount FROM lines GROUP BY lines.ol_d_id)
  UPDATE customer SET c_balance = customer.c_balance + COALESCE(sums.amount, 0),
         c_delivery_cnt = customer.c_delivery_cnt + 1
    FROM unnest(v_ds, v_cs) AS u(d, c) LEFT JOIN sums ON sums.d = u.d
    WHERE customer.c_w_id = p_w_id AND customer.c_d_id = u.d AND customer.c_id = u.c;
  RETURN v_delivered;
END $$)";

/// Stock-Level (clause 2.8.2.2, read-only); returns the low-stock count.
constexpr std::string_view kPgStockLevel = R"(CREATE OR REPLACE FUNCTION drivelab_slev(
  p_w_id INTEGER, p_d_id INTEGER, p_threshold INTEGER)
RETURNS INTEGER LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_next_o_id INTEGER; v_count INTEGER;
BEGIN
  SELECT d_next_o_id INTO v_next_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  IF NOT FOUND THEN RAISE EXCEPTION 'district %/% not found', p_w_id, p_d_id; END IF;
  SELECT COUNT(DISTINCT s_i_id) INTO v_count FROM order_line, stock
    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next_o_id
      AND ol_o_id >= v_next_o_id - 20 AND s_w_id = p_w_id AND s_i_id = ol_i_id
      AND s_quantity < p_threshold;
  RETURN v_count;
END $$)";

// ---- MariaDB / MySQL (stored functions) --------------------------------------------------------
// A SELECT ... INTO that finds no row raises NOT FOUND; the CONTINUE handler turns it into
// v_found = 0. Errors are raised with SIGNAL: 45000 (ER_SIGNAL_EXCEPTION, 1644: fatal) for a
// damaged database, kRollbackSqlstate for the business rollback, ER_CHECKREAD (1020: retryable)
// for a NEW-ORDER row taken by a concurrent Delivery.

/// A stored function `name(params) RETURNS INT <access> SQL DATA NOT DETERMINISTIC`, its body
/// starting with the not-found flag v_found (procedure_ddl() puts it together).
struct MyFunction {
  std::string_view params;
  std::string_view access;  ///< MODIFIES or READS
  std::string_view body;    ///< after DECLARE v_found, up to the final END
};

/// New-Order (clause 2.4.2.2); returns the new O_ID.
constexpr MyFunction kMyNewOrder{
    .params =
        "p_w_id INT, p_d_id INT, p_c_id INT, p_ol_cnt INT,\n"
        "  p_i_ids VARCHAR(255), p_supply_w_ids VARCHAR(255), p_quantities VARCHAR(255), p_entry_d DATETIME",
    .access = "MODIFIES",
    .body = R"(  DECLARE v_w_tax, v_d_tax, v_c_discount DECIMAL(4,4);
  DECLARE v_c_last VARCHAR(16);
  DECLARE v_c_credit CHAR(2);
  DECLARE v_o_id, v_n, v_i_id, v_supply, v_qty, v_s_quantity, v_new_quantity INT;
  DECLARE v_all_local INT DEFAULT 1;
  DECLARE v_i_price DECIMAL(5,2);
  DECLARE v_i_name VARCHAR(24);
  DECLARE v_i_data, v_s_data VARCHAR(50);
  DECLARE v_dist_info CHAR(24);
  DECLARE v_msg VARCHAR(128);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'warehouse not found'; END IF;
  SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id FROM district
    WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'district not found'; END IF;
  UPDATE district SET d_next_o_id = v_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit FROM customer
    WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'customer not found'; END IF;
  SET v_n = 1;
  WHILE v_n <= p_ol_cnt DO
    IF CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply_w_ids, ',', v_n), ',', -1) AS SIGNED) <> p_w_id THEN
      SET v_all_local = 0;
    END IF;
    SET v_n = v_n + 1;
  END WHILE;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, p_entry_d, NULL, p_ol_cnt, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
  SET v_n = 1;
  WHILE v_n <= p_ol_cnt DO
    SET v_i_id = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_i_ids, ',', v_n), ',', -1) AS SIGNED);
    SET v_supply = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply_w_ids, ',', v_n), ',', -1) AS SIGNED);
    SET v_qty = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_quantities, ',', v_n), ',', -1) AS SIGNED);
    SELECT i_price, i_name, i_data INTO v_i_price, v_i_name, v_i_data FROM item WHERE i_id = v_i_id;
    IF v_found = 0 THEN
      SET v_msg = CONCAT('unused item ', v_i_id, ': New-Order rolled back (clause 2.4.2.3)');
      SIGNAL SQLSTATE 'DLRB1' SET MESSAGE_TEXT = v_msg;
    END IF;
    SELECT s_quantity, s_data,
           CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
             WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
             WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO v_s_quantity, v_s_data, v_dist_info
      FROM stock WHERE s_i_id = v_i_id AND s_w_id = v_supply FOR UPDATE;
    IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'stock not found'; END IF;
    SET v_new_quantity = IF(v_s_quantity - v_qty >= 10, v_s_quantity - v_qty, v_s_quantity - v_qty + 91);
    UPDATE stock SET s_quantity = v_new_quantity, s_ytd = s_ytd + v_qty,
           s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + IF(v_supply <> p_w_id, 1, 0)
      WHERE s_i_id = v_i_id AND s_w_id = v_supply;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o_id, p_d_id, p_w_id, v_n, v_i_id, v_supply, NULL, v_qty, v_qty * v_i_price, v_dist_info);
    SET v_n = v_n + 1;
  END WHILE;
  RETURN v_o_id;)"};

/// Payment (clause 2.5.2.2); returns the customer's C_ID.
constexpr MyFunction kMyPayment{.params =
                                    "p_w_id INT, p_d_id INT, p_c_w_id INT, p_c_d_id INT, p_c_id INT, p_by_name INT,\n"
                                    "  p_c_last VARCHAR(16), p_h_amount DECIMAL(6,2), p_h_date DATETIME",
                                .access = "MODIFIES",
                                .body = R"(  DECLARE v_c_id INT DEFAULT p_c_id;
  DECLARE v_count INT;
  DECLARE v_w_name, v_d_name VARCHAR(10);
  DECLARE v_street_1, v_street_2, v_city VARCHAR(20);
  DECLARE v_state CHAR(2);
  DECLARE v_zip CHAR(9);
  DECLARE v_c_first, v_c_last VARCHAR(16);
  DECLARE v_c_middle, v_c_credit CHAR(2);
  DECLARE v_c_phone CHAR(16);
  DECLARE v_c_since DATETIME;
  DECLARE v_c_credit_lim, v_c_balance DECIMAL(12,2);
  DECLARE v_c_discount DECIMAL(4,4);
  DECLARE v_c_data VARCHAR(500);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  UPDATE warehouse SET w_ytd = w_ytd + p_h_amount WHERE w_id = p_w_id;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
    INTO v_w_name, v_street_1, v_street_2, v_city, v_state, v_zip FROM warehouse WHERE w_id = p_w_id;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'warehouse not found'; END IF;
  UPDATE district SET d_ytd = d_ytd + p_h_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
    INTO v_d_name, v_street_1, v_street_2, v_city, v_state, v_zip FROM district
    WHERE d_w_id = p_w_id AND d_id = p_d_id;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'district not found'; END IF;
{payment_customer}
  SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
         c_since, c_credit, c_credit_lim, c_discount, c_balance, c_data
    INTO v_c_first, v_c_middle, v_c_last, v_street_1, v_street_2, v_city, v_state, v_zip, v_c_phone,
         v_c_since, v_c_credit, v_c_credit_lim, v_c_discount, v_c_balance, v_c_data
    FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'customer not found'; END IF;
{pay_customer}
  RETURN v_c_id;)"};

/// Order-Status (clause 2.6.2.2, read-only); returns the customer's C_ID.
constexpr MyFunction kMyOrderStatus{.params = "p_w_id INT, p_d_id INT, p_c_id INT, p_by_name INT, p_c_last VARCHAR(16)",
                                    .access = "READS",
                                    .body = R"(  DECLARE v_c_id INT DEFAULT p_c_id;
  DECLARE v_count, v_o_id, v_o_carrier_id, v_lines, v_supply, v_quantity INT;
  DECLARE v_c_balance, v_amount DECIMAL(12,2);
  DECLARE v_c_first, v_c_last VARCHAR(16);
  DECLARE v_c_middle CHAR(2);
  DECLARE v_o_entry_d, v_delivery_d DATETIME;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
{order_status_customer}
  SELECT c_balance, c_first, c_middle, c_last INTO v_c_balance, v_c_first, v_c_middle, v_c_last
    FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'customer not found'; END IF;
  SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_o_entry_d, v_o_carrier_id FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_id =
      (SELECT MAX(o_id) FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id);
  IF v_found = 1 THEN
    SELECT COUNT(ol_i_id), SUM(ol_supply_w_id), SUM(ol_quantity), SUM(ol_amount), MAX(ol_delivery_d)
      INTO v_lines, v_supply, v_quantity, v_amount, v_delivery_d
      FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
  END IF;
  RETURN v_c_id;)"};

/// Delivery (clause 2.7.4.2), all ten districts; returns how many were delivered.
constexpr MyFunction kMyDelivery{.params = "p_w_id INT, p_o_carrier_id INT, p_delivery_d DATETIME",
                                 .access = "MODIFIES",
                                 .body = R"(  DECLARE v_d INT DEFAULT 1;
  DECLARE v_delivered INT DEFAULT 0;
  DECLARE v_o_id, v_c_id INT;
  DECLARE v_amount DECIMAL(12,2);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  WHILE v_d <= 10 DO
    SET v_found = 1;
    SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_found = 1 THEN
      DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o_id;
      IF ROW_COUNT() <> 1 THEN
        SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1020, MESSAGE_TEXT = 'new order delivered concurrently';
      END IF;
      SELECT o_c_id INTO v_c_id FROM orders WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o_id;
      IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'order not found'; END IF;
{deliver_order}
      SET v_delivered = v_delivered + 1;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  RETURN v_delivered;)"};

/// Stock-Level (clause 2.8.2.2, read-only); returns the low-stock count.
constexpr MyFunction kMyStockLevel{.params = "p_w_id INT, p_d_id INT, p_threshold INT",
                                   .access = "READS",
                                   .body = R"(  DECLARE v_next_o_id, v_count INT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  SELECT d_next_o_id INTO v_next_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  IF v_found = 0 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'district not found'; END IF;
  SELECT COUNT(DISTINCT s_i_id) INTO v_count FROM order_line, stock
    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next_o_id
      AND ol_o_id >= v_next_o_id - 20 AND s_w_id = p_w_id AND s_i_id = ol_i_id
      AND s_quantity < p_threshold;
  RETURN v_count;)"};

constexpr std::string_view kNames[] = {"drivelab_neword", "drivelab_payment", "drivelab_ostat", "drivelab_delivery",
                                       "drivelab_slev"};

template <typename T>
std::string join(const NewOrderInput& in, T OrderLineInput::* field) {
  std::string out;
  for (int i = 0; i < in.ol_cnt; ++i) {
    if (i > 0) out += ',';
    fmt::format_to(std::back_inserter(out), "{}", in.lines[static_cast<std::size_t>(i)].*field);
  }
  return out;
}

}  // namespace

bool has_procedures(const Dialect& dialect) noexcept { return dialect.procedures != ProcedureLanguage::none; }

std::vector<std::string> procedure_ddl(const Dialect& dialect) {
  if (!has_procedures(dialect))
    throw InternalError(fmt::format("tpcc: no server-side procedures for the {} dialect", dialect.name));
  const bool mysql = dialect.procedures == ProcedureLanguage::sql_psm;
  // Payment's customer is in (c_w_id, c_d_id), Order-Status's in the terminal's (w_id, d_id).
  const std::string payment_customer = customer_by_name(dialect, "p_c_w_id", "p_c_d_id");
  const std::string order_status_customer = customer_by_name(dialect, "p_w_id", "p_d_id");
  const std::string paid = pay_customer(dialect);
  const std::string delivered = deliver_order(mysql ? "      " : "    ");
  const auto render = [&](std::string_view text) {
    return fmt::format(fmt::runtime(text), fmt::arg("payment_customer", payment_customer),
                       fmt::arg("order_status_customer", order_status_customer), fmt::arg("pay_customer", paid),
                       fmt::arg("deliver_order", delivered));
  };
  // In the order of kNames.
  constexpr std::string_view kPgFunctions[] = {kPgNewOrder, kPgPayment, kPgOrderStatus, kPgDelivery, kPgStockLevel};
  constexpr MyFunction kMyFunctions[] = {kMyNewOrder, kMyPayment, kMyOrderStatus, kMyDelivery, kMyStockLevel};
  std::vector<std::string> out;
  if (!mysql) out.emplace_back(kPgStockQuantity);  // New-Order's helper, before New-Order
  for (std::size_t i = 0; i < std::size(kNames); ++i) {
    if (!mysql) {
      out.push_back(render(kPgFunctions[i]));
      continue;
    }
    const MyFunction& f = kMyFunctions[i];
    out.push_back(fmt::format("DROP FUNCTION IF EXISTS {}", kNames[i]));
    out.push_back(
        fmt::format("CREATE FUNCTION {}(\n  {})\nRETURNS INT {} SQL DATA NOT DETERMINISTIC\nBEGIN\n"
                    "  DECLARE v_found INT DEFAULT 1;\n{}\nEND",
                    kNames[i], f.params, f.access, render(f.body)));
  }
  return out;
}

void create_procedures(Connection& conn, const Dialect& dialect) {
  for (const std::string& sql : procedure_ddl(dialect)) conn.execute_immediate(sql);
}

ProcedureCallSql procedure_call_sql(const Dialect& /*dialect*/) {
  // The same text in both dialects: a one-row SELECT of the function's value.
  return {.new_order = "SELECT drivelab_neword(?, ?, ?, ?, ?, ?, ?, ?)",
          .payment = "SELECT drivelab_payment(?, ?, ?, ?, ?, ?, ?, ?, ?)",
          .order_status = "SELECT drivelab_ostat(?, ?, ?, ?, ?)",
          .delivery = "SELECT drivelab_delivery(?, ?, ?)",
          .stock_level = "SELECT drivelab_slev(?, ?, ?)"};
}

PackedLines pack_lines(const NewOrderInput& in) {
  return {.i_ids = join(in, &OrderLineInput::i_id),
          .supply_w_ids = join(in, &OrderLineInput::supply_w_id),
          .quantities = join(in, &OrderLineInput::quantity)};
}

// ---- the calls ---------------------------------------------------------------------------------

namespace detail {
namespace {

/// Binds `args` to a call, runs it and reads its one integer into `value`. The call is the whole
/// transaction (autocommit), so a connection lost during it may have committed: in_doubt, never
/// rerun.
template <class... Args>
DbStatus call(Statement& q, int& value, const Args&... args) {
  bind_all(q, args...);
  DbStatus s = q.execute();
  if (s.ok()) {
    if (q.next(s)) {
      value = q.is_null(0) ? 0 : static_cast<int>(q.column_int64(0));
    } else if (s.ok()) {
      s.outcome = Outcome::fatal;
      s.message = "procedure call returned no row";
    }
  }
  if (s.connection_lost) s.outcome = Outcome::in_doubt;
  return s;
}

TxResult ended(DbStatus s) { return s.ok() ? TxResult{} : failed(std::move(s)); }

/// `transactions: procedures`: the five calls prepared on one connection, each the whole
/// transaction (tpcc_procedures.hpp: outcomes, and what the outputs hold).
class ProcedureTransactions final : public Transactions {
 public:
  ProcedureTransactions(Connection& conn, const Dialect& dialect) {
    const ProcedureCallSql q = procedure_call_sql(dialect);
    new_order_ = conn.prepare(q.new_order);
    payment_ = conn.prepare(q.payment);
    order_status_ = conn.prepare(q.order_status);
    delivery_ = conn.prepare(q.delivery);
    stock_level_ = conn.prepare(q.stock_level);
  }

  /// Fills out.o_id and out.all_local (total_amount and brand_generic_b stay 0).
  TxResult new_order(const NewOrderInput& in, NewOrderOutput& out) override {
    out = {};
    lines_ = pack_lines(in);
    timestamp_ = sql_timestamp_now();
    DbStatus s = call(*new_order_, out.o_id, in.w_id, in.d_id, in.c_id, in.ol_cnt, lines_.i_ids, lines_.supply_w_ids,
                      lines_.quantities, timestamp_);
    // The procedure raised the business rollback; the server undid the whole call.
    if (!s.ok() && s.sqlstate == kRollbackSqlstate) return {TxEnd::rolled_back, {}};
    if (s.ok()) out.all_local = all_local(in);
    return ended(std::move(s));
  }

  /// Fills out.c_id.
  TxResult payment(const PaymentInput& in, PaymentOutput& out) override {
    out = {};
    timestamp_ = sql_timestamp_now();
    return ended(call(*payment_, out.c_id, in.w_id, in.d_id, in.c_w_id, in.c_d_id, in.c_id, in.by_last_name ? 1 : 0,
                      in.c_last, in.h_amount, timestamp_));
  }

  /// Fills out.c_id.
  TxResult order_status(const OrderStatusInput& in, OrderStatusOutput& out) override {
    out = {};
    return ended(call(*order_status_, out.c_id, in.w_id, in.d_id, in.c_id, in.by_last_name ? 1 : 0, in.c_last));
  }

  /// Fills out.delivered and out.skipped.
  TxResult delivery(const DeliveryInput& in, DeliveryOutput& out) override {
    out = {};
    timestamp_ = sql_timestamp_now();
    DbStatus s = call(*delivery_, out.delivered, in.w_id, in.o_carrier_id, timestamp_);
    if (s.ok()) out.skipped = kDistrictsPerWarehouse - out.delivered;
    return ended(std::move(s));
  }

  /// Fills out.low_stock.
  TxResult stock_level(const StockLevelInput& in, StockLevelOutput& out) override {
    out = {};
    return ended(call(*stock_level_, out.low_stock, in.w_id, in.d_id, in.threshold));
  }

  TxProtocol protocol() const noexcept override { return TxProtocol::procedures; }

 private:
  std::unique_ptr<Statement> new_order_, payment_, order_status_, delivery_, stock_level_;
  PackedLines lines_;  // bound text must outlive execute()
  std::string timestamp_;
};

}  // namespace

std::unique_ptr<Transactions> make_procedure_transactions(Connection& conn, const Dialect& dialect) {
  return std::make_unique<ProcedureTransactions>(conn, dialect);
}

}  // namespace detail
}  // namespace drivelab::oltp::tpcc
