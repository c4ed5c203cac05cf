#include "drivelab/oltp/backend/backend.hpp"
#include "drivelab/oltp/backend/connect_failure.hpp"
#include "drivelab/oltp/backend/server.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "drivelab/core/process.hpp"

namespace drivelab::oltp {

std::string_view to_string(Outcome o) noexcept {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::retryable: return "retryable";
    case Outcome::in_doubt: return "in_doubt";
    case Outcome::fatal: return "fatal";
    case Outcome::storage_failure: return "storage failure";
  }
  return "unknown";
}

StorageFailure::StorageFailure(const std::string& what, std::string sqlstate, int native_code)
    : BackendError("storage failure: " + what, std::move(sqlstate), native_code) {}

bool is_storage_message(std::string_view message) noexcept {
  // Lower-case fragments; see the header for where each comes from.
  static constexpr std::array<std::string_view, 9> kTexts{"no space left on device",
                                                          "could not write",
                                                          "could not extend file",
                                                          "could not fsync",
                                                          "disk full",
                                                          "errno 28",
                                                          "error 28",
                                                          "input/output error",
                                                          "read-only file system"};
  const auto lower_find = [&](std::string_view needle) {
    for (std::size_t at = 0; at + needle.size() <= message.size(); ++at) {
      bool same = true;
      for (std::size_t i = 0; i < needle.size() && same; ++i)
        same = std::tolower(static_cast<unsigned char>(message[at + i])) == needle[i];
      // "error 28" is errno 28, not "error 2813".
      const std::size_t end = at + needle.size();
      if (same && (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end])))) return true;
    }
    return false;
  };
  return std::any_of(kTexts.begin(), kTexts.end(), lower_find);
}

bool is_storage_error(SqlDialect d, std::string_view sqlstate, int native_code, std::string_view message) noexcept {
  switch (d) {
    case SqlDialect::postgres:
      if (sqlstate == "53100" || sqlstate == "58030") return true;
      break;
    case SqlDialect::mysql:
      if (native_code == 1021 || native_code == 1114) return true;
      break;
    case SqlDialect::sqlserver:
      if (native_code == 1101 || native_code == 1105 || native_code == 9002 || native_code == 823) return true;
      break;
    case SqlDialect::sqlite:
      // SQLITE_FULL, SQLITE_IOERR (sqlite3.h); & 0xff: the primary code of an extended one.
      if ((native_code & 0xff) == 13 || (native_code & 0xff) == 10) return true;
      break;
  }
  return is_storage_message(message);
}

namespace {
bool contains_nocase(std::string_view text, std::string_view lower_needle) noexcept {
  return std::search(text.begin(), text.end(), lower_needle.begin(), lower_needle.end(),
                     [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }) != text.end();
}
}  // namespace

std::string_view to_string(ConnectFailure f) noexcept {
  switch (f) {
    case ConnectFailure::too_many_connections: return "too many connections";
    case ConnectFailure::timed_out: return "timed out";
    case ConnectFailure::refused: return "refused";
    case ConnectFailure::other: return "other";
  }
  return "other";
}

ConnectFailure classify_connect_failure(std::string_view sqlstate, int native_code, std::string_view message) noexcept {
  const auto says = [&](std::string_view lower) { return contains_nocase(message, lower); };
  if (sqlstate == "53300" || native_code == 1040 || native_code == 1203 || says("too many clients") ||
      says("too many connections") || says("remaining connection slots are reserved"))
    return ConnectFailure::too_many_connections;
  const bool mysql_connect = native_code == 2002 || native_code == 2003;
  if (sqlstate == "HYT00" || sqlstate == "HYT01" || says("timeout expired") || says("timed out") ||
      says("system error: 110") || (mysql_connect && says("(110)")))
    return ConnectFailure::timed_out;
  if (says("connection refused") || says("no such file or directory") ||
      (mysql_connect && (says("(111)") || says("(2)"))))
    return ConnectFailure::refused;
  return ConnectFailure::other;
}

std::string DbStatus::to_string() const {
  std::string s = fmt::format("{}: {}", oltp::to_string(outcome), message.empty() ? "-" : message);
  if (!sqlstate.empty()) s += fmt::format(" (SQLSTATE {})", sqlstate);
  if (native_code != 0) s += fmt::format(" (native {})", native_code);
  return s;
}

void throw_as(const DbStatus& s, const std::string& text) {
  if (s.outcome == Outcome::storage_failure) throw StorageFailure(text, s.sqlstate, s.native_code);
  throw BackendError(text, s.sqlstate, s.native_code);
}

void throw_status(std::string_view what, const DbStatus& s) {
  std::string text = s.to_string();
  // StorageFailure puts "storage failure: " in front of the whole text; say it once.
  const std::string prefix = fmt::format("{}: ", to_string(Outcome::storage_failure));
  if (s.outcome == Outcome::storage_failure && text.starts_with(prefix)) text.erase(0, prefix.size());
  throw_as(s, fmt::format("{}: {}", what, text));
}

namespace {

/// The lines of `text`, trailing blanks removed.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    out.push_back(line);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  }
  return out;
}

bool contains(std::string_view line, std::string_view what) { return line.find(what) != std::string_view::npos; }

/// A log entry's first line: the servers' prefixes start with the timestamp.
bool starts_entry(std::string_view line) {
  return !line.empty() && std::isdigit(static_cast<unsigned char>(line.front())) != 0;
}

bool is_error_entry(std::string_view line) {
  return contains(line, "ERROR:") || contains(line, "FATAL:") || contains(line, "PANIC:") ||
         contains(line, "[ERROR]") || is_storage_message(line);
}

/// What ended or broke the server, logged below the error levels: PostgreSQL's postmaster
/// ("received immediate shutdown request", "server process (PID 12) was terminated by signal 9",
/// "... exited with exit code 1", "terminating any other active server processes"), MariaDB's
/// "Normal shutdown" and "Got signal 11".
bool is_server_event(std::string_view line) {
  return contains(line, "shutdown request") || contains(line, "terminated by signal") ||
         contains(line, "was terminated by exception") || contains(line, "exited with exit code") ||
         contains(line, "terminating any other active server processes") || contains(line, "Normal shutdown") ||
         contains(line, "Got signal") || contains(line, "got signal");
}

std::string joined(const std::vector<std::string_view>& lines) {
  std::string out;
  for (const auto line : lines) {
    out.append(line);
    out += '\n';
  }
  return out;
}

}  // namespace

ServerLogQuote server_log_quote(const std::string& text, int lines) {
  // The entries, without the lines that continue one (a statement's or a function's body) and
  // without CONTEXT and STATEMENT entries (which quote them).
  std::vector<std::string_view> entries;
  for (const auto line : lines_of(text))
    if (starts_entry(line) && !contains(line, "CONTEXT:") && !contains(line, "STATEMENT:")) entries.push_back(line);
  // The last kServerLogContextLines entries: what the server did last.
  const std::size_t context_from =
      entries.size() - std::min(entries.size(), static_cast<std::size_t>(kServerLogContextLines));
  std::vector<std::string_view> kept;
  bool errors = false;
  bool after_error = false;  // the previous entry was an error: its DETAIL and HINT go with it
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string_view line = entries[i];
    const bool error = is_error_entry(line);
    const bool detail = after_error && (contains(line, "DETAIL:") || contains(line, "HINT:"));
    errors = errors || error;
    after_error = error || detail;
    if (error || detail || is_server_event(line) || i >= context_from) kept.push_back(line);
  }
  return {distinct_tail_of_text(joined(kept), lines + kServerLogContextLines), errors};
}

std::string with_server_log(const std::string& reason, const ManagedServer& server, int lines) {
  const std::filesystem::path file = server.log_file();
  if (file.empty()) return reason;
  const ServerLogQuote quote = server_log_quote(tail_of_file(file, 1 << 20), lines);
  if (quote.text.empty()) return reason;
  std::string out;
  if (reason.find("storage failure") == std::string::npos) {
    // The last line that names the storage problem: the server's latest word on it.
    std::string_view cause;
    for (const auto line : lines_of(quote.text))
      if (is_storage_message(line)) cause = line;
    if (!cause.empty()) out = fmt::format("storage failure: {} (server log); ", cause);
  }
  // The file goes with the data directory unless the server section says keep: the lines are
  // quoted here because the path may be gone when the reason is read.
  out += fmt::format(
      "{}\nserver log ({}, {}, repeats counted; the file is removed with the data directory unless "
      "keep: true):\n{}",
      reason, file.string(),
      quote.error_lines ? fmt::format("its last {} distinct ERROR/FATAL/PANIC lines and its last {} lines", lines,
                                      kServerLogContextLines)
                        : fmt::format("no ERROR/FATAL/PANIC line; its last {} distinct lines", kServerLogContextLines),
      quote.text);
  return out;
}

}  // namespace drivelab::oltp
