// A minimal blocking HTTP/1.0 client for tests of the metrics listener:
// one request per connection, the whole reply read until the server closes.
//
// Thread safety: a free function; safe from any thread.

#ifndef TAILGATE_SERVER_TESTING_HTTP_GET_H_
#define TAILGATE_SERVER_TESTING_HTTP_GET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::server::testing {

struct HttpReply {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
};

// Sends `method path` to 127.0.0.1:port.
absl::StatusOr<HttpReply> HttpFetch(int port, absl::string_view method,
                                    absl::string_view path);

inline absl::StatusOr<HttpReply> HttpGet(int port, absl::string_view path) {
  return HttpFetch(port, "GET", path);
}

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_HTTP_GET_H_
