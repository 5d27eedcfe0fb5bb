#include "server/grpc/door_probe.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"

namespace tailgate::server {
namespace {

constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";
// HealthCheckResponse{status: SERVING (1)} and {status: NOT_SERVING (2)}.
constexpr absl::string_view kServing("\x08\x01", 2);
constexpr absl::string_view kNotServing("\x08\x02", 2);
// The request: the gRPC prefix (uncompressed, length 0) of an empty
// HealthCheckRequest, which asks about the whole server ("").
constexpr char kRequest[5] = {0, 0, 0, 0, 0};
// A health check's answer is 7 bytes; a door sending more than this is not
// answering one, and the probe keeps no more.
constexpr size_t kMaxAnswerBytes = 1024;

std::string ErrnoText(int error) {
  char buffer[256];
  return strerror_r(error, buffer, sizeof buffer);  // GNU: returns the text
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// poll()'s timeout until `deadline`, rounded up: a wait ends at or after it.
int MillisUntil(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(
      absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
      INT_MAX));
}

// Waits for `events` on `fd`: its revents; 0 once `deadline` has passed;
// -1 when poll fails (errno).
int Wait(int fd, short events, absl::Time deadline) {
  while (true) {
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, MillisUntil(deadline));
    if (ready > 0) return entry.revents;
    if (ready == 0) {
      if (absl::Now() >= deadline) return 0;
    } else if (errno != EINTR) {
      return -1;
    }
  }
}

// Connects the non-blocking `fd` to `address` by `deadline`; an error
// names what failed.
absl::Status Connect(int fd, const sockaddr* address, socklen_t length,
                     absl::Time deadline) {
  while (::connect(fd, address, length) != 0) {
    const int error = errno;
    if (error == EAGAIN) {
      // A Unix socket whose listen backlog is full: the door may yet
      // accept, so try again until the deadline.
      if (absl::Now() >= deadline) {
        return absl::UnavailableError(
            "connect: the listen backlog stayed full until the deadline");
      }
      ::poll(nullptr, 0, std::min(10, MillisUntil(deadline)));
      continue;
    }
    if (error != EINPROGRESS && error != EINTR) {
      return absl::UnavailableError(
          absl::StrCat("connect: ", ErrnoText(error)));
    }
    const int revents = Wait(fd, POLLOUT, deadline);
    if (revents == 0) {
      return absl::UnavailableError("connect: not connected by the deadline");
    }
    if (revents < 0) {
      return absl::UnavailableError(absl::StrCat("poll: ", ErrnoText(errno)));
    }
    int result = 0;
    socklen_t result_length = sizeof result;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &result, &result_length) != 0) {
      result = errno;
    }
    if (result != 0) {
      return absl::UnavailableError(
          absl::StrCat("connect: ", ErrnoText(result)));
    }
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

// A new connection to `door`, non-blocking.
absl::StatusOr<Socket> Open(const ListenAddress& door, absl::Time deadline) {
  if (door.is_unix) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (door.path.size() >= sizeof address.sun_path) {
      return absl::UnavailableError("connect: the socket path is too long");
    }
    door.path.copy(address.sun_path, door.path.size());
    Socket socket(
        ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (socket.fd() < 0) {
      return absl::UnavailableError(absl::StrCat("socket: ", ErrnoText(errno)));
    }
    absl::Status connected =
        Connect(socket.fd(), reinterpret_cast<const sockaddr*>(&address),
                sizeof address, deadline);
    if (!connected.ok()) return connected;
    return socket;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(door.port);
  const int resolved =
      ::getaddrinfo(door.host.c_str(), port.c_str(), &hints, &found);
  if (resolved != 0) {
    return absl::UnavailableError(
        absl::StrCat("resolving ", door.host, ": ", gai_strerror(resolved)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found,
                                                           &freeaddrinfo);
  absl::Status last = absl::UnavailableError(
      absl::StrCat("resolving ", door.host, ": no address"));
  for (const addrinfo* entry = found; entry != nullptr;
       entry = entry->ai_next) {
    Socket socket(::socket(entry->ai_family,
                           entry->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                           entry->ai_protocol));
    if (socket.fd() < 0) {
      last = absl::UnavailableError(absl::StrCat("socket: ", ErrnoText(errno)));
      continue;
    }
    const int one = 1;
    (void)::setsockopt(socket.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    last = Connect(socket.fd(), entry->ai_addr, entry->ai_addrlen, deadline);
    if (last.ok()) return socket;
    if (absl::Now() >= deadline) break;
  }
  return last;
}

// The call as the nghttp2 callbacks see it.
struct Exchange {
  std::string out;  // frames nghttp2 produced, not yet written
  int32_t stream_id = -1;
  size_t request_sent = 0;
  std::string http_status;
  std::string grpc_status;  // empty: none received
  std::string grpc_message;
  std::string answer;  // the response's DATA: gRPC-framed messages
  bool answer_too_long = false;
  bool closed = false;
  uint32_t close_code = NGHTTP2_NO_ERROR;
};

Exchange& Of(void* user_data) { return *static_cast<Exchange*>(user_data); }

ssize_t OnSend(nghttp2_session*, const uint8_t* data, size_t length, int,
               void* user_data) {
  Of(user_data).out.append(reinterpret_cast<const char*>(data), length);
  return static_cast<ssize_t>(length);
}

int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
             size_t name_length, const uint8_t* value, size_t value_length,
             uint8_t, void* user_data) {
  Exchange& exchange = Of(user_data);
  if (frame->hd.stream_id != exchange.stream_id) return 0;
  const absl::string_view key(reinterpret_cast<const char*>(name), name_length);
  const absl::string_view text(reinterpret_cast<const char*>(value),
                               value_length);
  if (key == ":status") {
    exchange.http_status = std::string(text);
  } else if (key == "grpc-status") {
    exchange.grpc_status = std::string(text);
  } else if (key == "grpc-message") {
    exchange.grpc_message = std::string(text.substr(0, 200));
  }
  return 0;
}

int OnDataChunk(nghttp2_session*, uint8_t, int32_t stream_id,
                const uint8_t* data, size_t length, void* user_data) {
  Exchange& exchange = Of(user_data);
  if (stream_id != exchange.stream_id) return 0;
  if (exchange.answer.size() + length > kMaxAnswerBytes) {
    exchange.answer_too_long = true;
    return 0;
  }
  exchange.answer.append(reinterpret_cast<const char*>(data), length);
  return 0;
}

int OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t error_code,
                  void* user_data) {
  Exchange& exchange = Of(user_data);
  if (stream_id != exchange.stream_id) return 0;
  exchange.closed = true;
  exchange.close_code = error_code;
  return 0;
}

ssize_t ReadRequest(nghttp2_session*, int32_t, uint8_t* buffer, size_t length,
                    uint32_t* flags, nghttp2_data_source*, void* user_data) {
  Exchange& exchange = Of(user_data);
  const size_t n = std::min(length, sizeof kRequest - exchange.request_sent);
  std::copy_n(kRequest + exchange.request_sent, n, buffer);
  exchange.request_sent += n;
  if (exchange.request_sent == sizeof kRequest) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  }
  return static_cast<ssize_t>(n);
}

nghttp2_nv Field(absl::string_view name, absl::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
          name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

// Writes what it can of `out` without blocking; false (errno) on an error.
bool Flush(int fd, std::string& out) {
  while (!out.empty()) {
    const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      out.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }
  return true;
}

// What the answer says, once the stream has closed.
absl::Status Judge(const Exchange& exchange) {
  if (!exchange.http_status.empty() && exchange.http_status != "200") {
    return absl::UnavailableError(
        absl::StrCat("HTTP status ", exchange.http_status));
  }
  if (!exchange.grpc_status.empty() && exchange.grpc_status != "0") {
    return absl::UnavailableError(absl::StrCat("grpc-status ",
                                               exchange.grpc_status, " (",
                                               exchange.grpc_message, ")"));
  }
  if (exchange.close_code != NGHTTP2_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat(
        "the stream was reset (HTTP/2 error ", exchange.close_code, ")"));
  }
  if (exchange.grpc_status.empty()) {
    return absl::UnavailableError("the answer ended without a grpc-status");
  }
  return absl::OkStatus();
}

// Whether `answer` is exactly one uncompressed message, SERVING or
// NOT_SERVING.
bool IsHealthAnswer(absl::string_view answer) {
  if (answer.size() < 5 || answer[0] != 0) return false;
  const uint32_t length = (uint32_t{static_cast<uint8_t>(answer[1])} << 24) |
                          (uint32_t{static_cast<uint8_t>(answer[2])} << 16) |
                          (uint32_t{static_cast<uint8_t>(answer[3])} << 8) |
                          uint32_t{static_cast<uint8_t>(answer[4])};
  const absl::string_view message = answer.substr(5);
  return message.size() == length &&
         (message == kServing || message == kNotServing);
}

}  // namespace

DoorProbe::DoorProbe(ListenAddress door, absl::Duration deadline,
                     absl::Duration min_interval)
    : door_(std::move(door)),
      target_(door_.ToString()),
      deadline_(deadline),
      min_interval_(min_interval) {}

absl::Status DoorProbe::Check() {
  hedge::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (now - last_probe_ < min_interval_) return last_;
  last_ = Probe();
  last_probe_ = absl::Now();
  return last_;
}

absl::Status DoorProbe::Probe() {
  const absl::Time deadline = absl::Now() + deadline_;
  auto failed = [&](absl::string_view what) {
    return absl::UnavailableError(
        absl::StrCat("the gRPC door on ", target_,
                     " did not answer a health check: ", what));
  };

  absl::StatusOr<Socket> socket = Open(door_, deadline);
  if (!socket.ok()) return failed(socket.status().message());
  const int fd = socket->fd();

  nghttp2_session_callbacks* callbacks_raw = nullptr;
  if (nghttp2_session_callbacks_new(&callbacks_raw) != 0) {
    return failed("out of memory");
  }
  std::unique_ptr<nghttp2_session_callbacks,
                  decltype(&nghttp2_session_callbacks_del)>
      callbacks(callbacks_raw, &nghttp2_session_callbacks_del);
  nghttp2_session_callbacks_set_send_callback(callbacks.get(), OnSend);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(),
                                                            OnDataChunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(),
                                                         OnStreamClose);
  Exchange exchange;
  nghttp2_session* session_raw = nullptr;
  if (nghttp2_session_client_new(&session_raw, callbacks.get(), &exchange) !=
      0) {
    return failed("out of memory");
  }
  std::unique_ptr<nghttp2_session, decltype(&nghttp2_session_del)> session(
      session_raw, &nghttp2_session_del);

  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
  };
  // A Unix socket has no host: gRPC clients name "localhost".
  const std::string authority = door_.is_unix ? "localhost" : target_;
  const nghttp2_nv request[] = {
      Field(":method", "POST"),
      Field(":scheme", "http"),
      Field(":path", kHealthCheck),
      Field(":authority", authority),
      Field("content-type", "application/grpc"),
      Field("te", "trailers"),
  };
  nghttp2_data_provider body{};
  body.read_callback = ReadRequest;
  int rv = nghttp2_submit_settings(session.get(), NGHTTP2_FLAG_NONE, settings,
                                   sizeof settings / sizeof settings[0]);
  if (rv == 0) {
    exchange.stream_id = nghttp2_submit_request(
        session.get(), nullptr, request, sizeof request / sizeof request[0],
        &body, nullptr);
    if (exchange.stream_id < 0) rv = exchange.stream_id;
  }
  if (rv != 0) return failed(absl::StrCat("HTTP/2: ", nghttp2_strerror(rv)));

  char buffer[4096];
  while (!exchange.closed) {
    rv = nghttp2_session_send(session.get());
    if (rv != 0) return failed(absl::StrCat("HTTP/2: ", nghttp2_strerror(rv)));
    if (!Flush(fd, exchange.out)) {
      return failed(absl::StrCat("send: ", ErrnoText(errno)));
    }
    if (!nghttp2_session_want_read(session.get()) &&
        !nghttp2_session_want_write(session.get()) && exchange.out.empty()) {
      return failed("the connection ended before the answer (GOAWAY)");
    }
    const int revents =
        Wait(fd, POLLIN | (exchange.out.empty() ? 0 : POLLOUT), deadline);
    if (revents == 0) {
      return failed(
          absl::StrCat("no answer within ", absl::FormatDuration(deadline_)));
    }
    if (revents < 0) return failed(absl::StrCat("poll: ", ErrnoText(errno)));
    if ((revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    const ssize_t received = ::recv(fd, buffer, sizeof buffer, 0);
    if (received == 0) {
      return failed("the connection was closed before the answer");
    }
    if (received < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return failed(absl::StrCat("recv: ", ErrnoText(errno)));
    }
    const ssize_t used = nghttp2_session_mem_recv(
        session.get(), reinterpret_cast<const uint8_t*>(buffer),
        static_cast<size_t>(received));
    if (used < 0) {
      return failed(
          absl::StrCat("HTTP/2: ", nghttp2_strerror(static_cast<int>(used))));
    }
    if (exchange.answer_too_long) {
      return failed(
          absl::StrCat("an answer of more than ", kMaxAnswerBytes, " bytes"));
    }
  }
  // Done: a GOAWAY if it goes out at once, then the socket closes.
  if (nghttp2_session_terminate_session(session.get(), NGHTTP2_NO_ERROR) == 0 &&
      nghttp2_session_send(session.get()) == 0) {
    (void)Flush(fd, exchange.out);
  }

  absl::Status judged = Judge(exchange);
  if (!judged.ok()) return failed(judged.message());
  if (!IsHealthAnswer(exchange.answer)) {
    return absl::UnavailableError(absl::StrCat(
        "the gRPC door on ", target_, " answered a health check oddly (",
        exchange.answer.size(), " bytes, not SERVING or NOT_SERVING)"));
  }
  return absl::OkStatus();
}

}  // namespace tailgate::server
