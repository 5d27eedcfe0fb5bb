#include "server/testing/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tailgate::server::testing {

absl::StatusOr<HttpReply> HttpFetch(int port, absl::string_view method,
                                    absl::string_view path) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect to port ", port));
  }
  const std::string request =
      absl::StrCat(method, " ", path, " HTTP/1.0\r\nHost: test\r\n\r\n");
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("send failed");
  }
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) reply.append(buf, n);
  close(fd);

  const size_t end_of_head = reply.find("\r\n\r\n");
  int status = 0;
  if (reply.size() < 12 || end_of_head == std::string::npos ||
      !absl::SimpleAtoi(absl::string_view(reply).substr(9, 3), &status)) {
    return absl::DataLossError(absl::StrCat("malformed reply: ", reply));
  }
  HttpReply parsed;
  parsed.status = status;
  parsed.head = reply.substr(0, end_of_head);
  parsed.body = reply.substr(end_of_head + 4);
  return parsed;
}

}  // namespace tailgate::server::testing
