#pragma once
// COPY's binary format (https://www.postgresql.org/docs/15/sql-copy.html, "Binary Format") for
// the column types of the workloads' tables. The server then skips text parsing (line and field
// splitting, int4in, numeric_in, timestamp_in): about a quarter of a COPY backend's CPU in the
// TPC-C load (perf profile, docs/backend-postgres.md). Tables with any other column type are
// loaded in text format.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drivelab::oltp::pg {

enum class CopyKind { int2, int4, int8, float4, float8, numeric, text, timestamp };

/// One column of a binary COPY: its kind and, for NUMERIC(p,s), the scale s.
struct CopyColumn {
  std::string name;
  CopyKind kind = CopyKind::text;
  int scale = 0;
};

/// The binary kind of a column of type `type_oid` with modifier `typmod` (pg_attribute), or
/// nullopt when it has no binary encoder here (then the table is loaded in text format).
/// NUMERIC needs a declared scale (NUMERIC(p,s)); unconstrained NUMERIC is loaded as text.
std::optional<CopyColumn> copy_column(std::string name, unsigned type_oid, int typmod);

/// "PGCOPY\n\377\r\n\0", flags 0, header extension length 0.
std::string_view binary_copy_header() noexcept;
/// The file trailer: a field count of -1.
std::string_view binary_copy_trailer() noexcept;

/// Appends the row's field count (at the first column of a row).
void put_field_count(std::string& out, int fields);
/// Appends one field. Throws BackendError (naming the column) when the value does not fit the
/// column (text that is not a number or a date-time, a fraction into an integer column).
void put_int64(std::string& out, const CopyColumn& c, std::int64_t v);
void put_double(std::string& out, const CopyColumn& c, double v);
void put_text(std::string& out, const CopyColumn& c, std::string_view v);
void put_null(std::string& out);

/// Microseconds since 2000-01-01 00:00:00 of "YYYY-MM-DD HH:MM:SS[.ffffff]" (a space or T
/// between date and time), PostgreSQL's internal TIMESTAMP value; nullopt if malformed.
std::optional<std::int64_t> parse_timestamp_us(std::string_view s);

/// round(value * 10^scale), half away from zero, from decimal text ("-12.345", "1e-05"); exact
/// (no binary floating point). nullopt if malformed or beyond 18 digits.
std::optional<std::int64_t> scaled_decimal(std::string_view s, int scale);

}  // namespace drivelab::oltp::pg
