#pragma once
// Test helper: a tiny HTTP/1.0 client for the loopback address (the Prometheus endpoint of
// --metrics-listen is scraped with it: tests/unit/metrics, tests/integration/metrics_test.cpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>

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

}  // namespace drivelab::test_support
