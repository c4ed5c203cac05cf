#include "mysql_cancel.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cppconn/connection.h>
#include <cppconn/exception.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>

#include "drivelab/core/clock.hpp"
#include "drivelab/core/errors.hpp"

namespace drivelab::oltp::mysql {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);
/// Calls younger than this are left to finish: most statements take well under it, and killing
/// them would only turn finished work into retries.
constexpr std::int64_t kMinCallAgeNs = 20'000'000;

/// Client errors that mean the server did not answer (as opposed to answering with an error).
bool unanswered(int code) noexcept {
  switch (code) {
    case 2002:  // cannot connect through the socket
    case 2003:  // cannot connect to host
    case 2006:  // server has gone away
    case 2013:  // lost connection (a read timeout, or at the handshake)
    case 2055:  // lost connection (extended)
      return true;
    default: return false;
  }
}

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) noexcept {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in6&>(b);
    return x.sin6_port == y.sin6_port && std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
  }
  return false;
}

}  // namespace

WatchedCall::WatchedCall(CallSlot* slot, bool killable) noexcept : slot_(slot) {
  if (slot_ == nullptr) return;
  std::lock_guard lock(slot_->mu);
  slot_->killable = killable;
  slot_->kill_sent = false;
  slot_->checked_at_ns = 0;
  slot_->busy_since_ns.store(monotonic_ns(), std::memory_order_relaxed);
}

WatchedCall::~WatchedCall() {
  if (slot_ == nullptr) return;
  std::lock_guard lock(slot_->mu);  // waits for a KILL being sent to this call
  slot_->busy_since_ns.store(0, std::memory_order_relaxed);
}

CancelWatcher::CancelWatcher(ConnectParams side_params, WatchLimits limits)
    : params_(std::move(side_params)), limits_(limits) {
  // The side connection only sends KILL QUERY and SELECT 1: short timeouts, no default
  // database needed. Its failing to get an answer within them is what "unresponsive" means.
  params_.database.clear();
  params_.read_timeout_s = 10;
  params_.write_timeout_s = 10;
  params_.connect_timeout_s = 5;
}

CancelWatcher::~CancelWatcher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CancelWatcher::add(std::shared_ptr<CallSlot> slot) {
  {
    std::lock_guard lock(mu_);
    // Drop the slots of closed sessions (only this list still holds them).
    slots_.erase(std::remove_if(slots_.begin(), slots_.end(),
                                [](const std::shared_ptr<CallSlot>& s) { return s.use_count() == 1; }),
                 slots_.end());
    slots_.push_back(std::move(slot));
  }
  start();
}

void CancelWatcher::start() noexcept {
  std::lock_guard lock(mu_);
  if (started_ || stop_) return;
  try {
    thread_ = std::thread([this] { run(); });
    started_ = true;
  } catch (...) {  // NOLINT(bugprone-empty-catch): as below
    // No thread: lock waits end by innodb_lock_wait_timeout instead (documented).
  }
}

void CancelWatcher::run() {
  std::unique_ptr<sql::Connection> side;
  try {
    ensure_thread_init();
  } catch (...) {
    return;
  }
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kPollInterval, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    tick(side);
    lock.lock();
  }
}

bool CancelWatcher::ask(std::unique_ptr<sql::Connection>& side, const std::string& sql) noexcept {
  try {
    if (!side) side = connect(params_);
    std::unique_ptr<sql::Statement> st(side->createStatement());
    if (st->execute(sql)) std::unique_ptr<sql::ResultSet> rs(st->getResultSet());
    return true;
  } catch (const BackendError& e) {  // connect
    side.reset();
    return !unanswered(e.native_code());
  } catch (const sql::SQLException& e) {
    // 1094 (unknown thread: the session is gone) is an answer; a fresh side connection next time.
    side.reset();
    return !unanswered(e.getErrorCode());
  } catch (...) {
    side.reset();
    return true;  // not known to be unanswered: never cut sessions on a guess
  }
}

void CancelWatcher::tick(std::unique_ptr<sql::Connection>& side) {
  // Candidates are picked under the list's mutex from lock-free reads, so a tick over thousands
  // of idle or young calls copies nothing.
  const std::int64_t now = monotonic_ns();
  std::vector<std::shared_ptr<CallSlot>> candidates;
  {
    std::lock_guard lock(mu_);
    for (const auto& slot : slots_) {
      const std::int64_t since = slot->busy_since_ns.load(std::memory_order_relaxed);
      if (since == 0 || now - since < kMinCallAgeNs) continue;
      if (now - since < limits_.deadline_ns && slot->cancel.load(std::memory_order_relaxed) == nullptr) continue;
      candidates.push_back(slot);
    }
  }
  bool unresponsive = false;
  for (const auto& slot : candidates) {
    const std::int64_t since = slot->busy_since_ns.load(std::memory_order_relaxed);
    if (since == 0) continue;
    const std::int64_t age = now - since;
    // The flag is read under the slot's mutex: a closing session clears it under the same
    // mutex, so a flag that dies with its session is never read afterwards.
    std::lock_guard lock(slot->mu);
    if (slot->busy_since_ns.load(std::memory_order_relaxed) != since) continue;  // that call ended
    const std::atomic<bool>* flag = slot->cancel.load(std::memory_order_relaxed);
    const bool stopping = flag != nullptr && flag->load(std::memory_order_relaxed);
    if (!stopping && age < limits_.deadline_ns) continue;
    const std::string kill = "KILL QUERY " + std::to_string(slot->connection_id);
    if (stopping && slot->killable && !slot->kill_sent) {
      slot->kill_sent = true;
      if (ask(side, kill)) {
        kills_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      unresponsive = true;
      break;
    }
    const std::int64_t limit = stopping ? limits_.unresponsive_after_ns : limits_.deadline_ns;
    if (age < limit || (slot->checked_at_ns != 0 && now - slot->checked_at_ns < limit)) continue;
    slot->checked_at_ns = now;
    // Past its limit: a statement is ended (as the read timeout used to end it); for COMMIT or a
    // statement already sent a KILL, the server is only asked whether it answers at all.
    const bool end_it = slot->killable && !slot->kill_sent;
    if (end_it) slot->kill_sent = true;
    if (ask(side, end_it ? kill : std::string("SELECT 1"))) {
      if (end_it) kills_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    unresponsive = true;
    break;
  }
  if (unresponsive) {
    shut_down_.fetch_add(shut_down_sockets_to(params_.endpoint), std::memory_order_relaxed);
    side.reset();
  }
}

std::size_t shut_down_sockets_to(const Endpoint& e) noexcept {
  try {
    struct stat want{};
    bool have_want = false;
    std::vector<sockaddr_storage> targets;
    if (!e.socket_path.empty()) {
      have_want = ::stat(e.socket_path.c_str(), &want) == 0;
    } else {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      const std::string port = std::to_string(e.port > 0 ? e.port : 3306);
      if (::getaddrinfo(e.host.empty() ? "127.0.0.1" : e.host.c_str(), port.c_str(), &hints, &res) == 0) {
        for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
          sockaddr_storage s{};
          std::memcpy(&s, a->ai_addr, std::min<std::size_t>(a->ai_addrlen, sizeof s));
          targets.push_back(s);
        }
        ::freeaddrinfo(res);
      }
    }
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return 0;
    const int own = ::dirfd(dir);
    std::size_t n = 0;
    while (const dirent* ent = ::readdir(dir)) {
      char* end = nullptr;
      const long fd = std::strtol(ent->d_name, &end, 10);
      if (end == ent->d_name || *end != '\0' || fd == own) continue;
      struct stat st{};
      if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      if (::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
      bool match = false;
      if (peer.ss_family == AF_UNIX && !e.socket_path.empty()) {
        const auto& un = reinterpret_cast<const sockaddr_un&>(peer);
        const std::size_t max = len > offsetof(sockaddr_un, sun_path) ? len - offsetof(sockaddr_un, sun_path) : 0;
        const std::string path(un.sun_path, ::strnlen(un.sun_path, std::min(max, sizeof un.sun_path)));
        if (path == e.socket_path) {
          match = true;
        } else if (have_want && !path.empty() && path[0] != '\0') {
          struct stat ps{};
          match = ::stat(path.c_str(), &ps) == 0 && ps.st_dev == want.st_dev && ps.st_ino == want.st_ino;
        }
      } else if ((peer.ss_family == AF_INET || peer.ss_family == AF_INET6) && e.socket_path.empty()) {
        match = std::any_of(targets.begin(), targets.end(),
                            [&](const sockaddr_storage& t) { return same_address(t, peer); });
      }
      if (match && ::shutdown(static_cast<int>(fd), SHUT_RDWR) == 0) ++n;
    }
    ::closedir(dir);
    return n;
  } catch (...) {
    return 0;
  }
}

}  // namespace drivelab::oltp::mysql
