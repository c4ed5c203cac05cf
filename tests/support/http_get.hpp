#pragma once
// Test helpers: a tiny HTTP/1.0 client for the loopback address and free loopback ports (the
// Prometheus endpoint of --metrics-listen is scraped with them: tests/unit/metrics,
// tests/integration/metrics_test.cpp and multihost_test.cpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace drivelab::test_support {

/// GET http://127.0.0.1:port/path: the body, or nullopt when it cannot connect or the status is
/// not 200.
inline std::optional<std::string> http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    if (fd >= 0) ::close(fd);
    return std::nullopt;
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  const bool sent = ::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size());
  std::string resp;
  char buf[65536];
  for (ssize_t n; sent && (n = ::read(fd, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  const auto line_end = resp.find("\r\n");
  const auto head_end = resp.find("\r\n\r\n");
  if (!sent || !resp.starts_with("HTTP/1.") || resp.find(" 200 ") > line_end || head_end == std::string::npos)
    return std::nullopt;
  return resp.substr(head_end + 4);
}

/// The first of `n` consecutive TCP ports free on 127.0.0.1 (each bound once to check, then
/// released for the program under test to take; a small race, as with any port picked outside).
inline int free_loopback_ports(int n = 1) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::vector<int> fds;
    int first = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in sa{};
      sa.sin_family = AF_INET;
      sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      sa.sin_port = htons(static_cast<std::uint16_t>(i == 0 ? 0 : first + i));
      ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
      if (fd >= 0) fds.push_back(fd);
      if (ok && i == 0) {
        socklen_t len = sizeof sa;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
        first = ntohs(sa.sin_port);
        ok = first + n - 1 <= 65535;
      }
    }
    for (int fd : fds) ::close(fd);
    if (ok) return first;
  }
  throw std::runtime_error("no free loopback ports");
}

}  // namespace drivelab::test_support
