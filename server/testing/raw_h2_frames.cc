#include "server/testing/raw_h2_frames.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "proto/tailgate/v1/tailgate.pb.h"

namespace tailgate::server::testing {
namespace {

uint32_t Word(absl::string_view bytes, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  return (uint32_t{byte(at)} << 24) | (byte(at + 1) << 16) |
         (byte(at + 2) << 8) | byte(at + 3);
}

void SetReceiveTimeout(int fd) {
  const timeval wait = absl::ToTimeval(kFrameWait);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
}

}  // namespace

std::string Frame(uint8_t type, uint8_t flags, uint32_t stream,
                  absl::string_view payload) {
  std::string frame;
  const uint32_t length = static_cast<uint32_t>(payload.size());
  frame.push_back(static_cast<char>(length >> 16));
  frame.push_back(static_cast<char>(length >> 8));
  frame.push_back(static_cast<char>(length));
  frame.push_back(static_cast<char>(type));
  frame.push_back(static_cast<char>(flags));
  for (int shift : {24, 16, 8, 0}) {
    frame.push_back(static_cast<char>(stream >> shift));
  }
  frame.append(payload.data(), payload.size());
  return frame;
}

void AppendField(std::string& block, absl::string_view name,
                 absl::string_view value) {
  block.push_back('\0');
  block.push_back(static_cast<char>(name.size()));
  block.append(name.data(), name.size());
  block.push_back(static_cast<char>(value.size()));
  block.append(value.data(), value.size());
}

std::string Preface() {
  return std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
         Frame(kSettings, 0, 0, "");
}

std::string ReadCallHeaders(absl::string_view content_type,
                            absl::string_view method) {
  std::string block;
  AppendField(block, ":method", "POST");
  AppendField(block, ":scheme", "http");
  AppendField(block, ":path", absl::StrCat("/tailgate.v1.HedgedRead/", method));
  AppendField(block, ":authority", "door");
  AppendField(block, "content-type", content_type);
  AppendField(block, "te", "trailers");
  return block;
}

namespace {

// `message` with its gRPC prefix (not compressed, its length).
std::string GrpcMessage(const std::string& message) {
  std::string data(5, '\0');
  const uint32_t length = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) {
    data[1 + i] = static_cast<char>(length >> (24 - 8 * i));
  }
  return data + message;
}

}  // namespace

std::string ReadMessage(const std::string& path) {
  v1::ReadRequest request;
  request.set_path(path);
  return GrpcMessage(request.SerializeAsString());
}

std::string ReadManyMessage(const std::vector<std::string>& paths,
                            uint32_t max_in_flight) {
  v1::ReadManyRequest request;
  for (const std::string& path : paths) request.add_reads()->set_path(path);
  request.set_max_in_flight(max_in_flight);
  return GrpcMessage(request.SerializeAsString());
}

std::string ReadCallWithWindowShut(const std::string& path,
                                   absl::string_view content_type) {
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const char window_zero[] = {0, 4, 0, 0, 0, 0};  // INITIAL_WINDOW_SIZE 0
  out += Frame(kSettings, 0, 0, absl::string_view(window_zero, 6));
  out += Frame(kHeaders, kEndHeaders, 1, ReadCallHeaders(content_type));
  out += Frame(kData, kEndStream, 1, ReadMessage(path));
  return out;
}

std::optional<std::string> WaitForFrame(int fd, uint8_t type, uint32_t stream) {
  SetReceiveTimeout(fd);
  std::string in;
  auto fill = [&](size_t n) {
    char buffer[4096];
    while (in.size() < n) {
      const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
      if (got <= 0) return false;
      in.append(buffer, static_cast<size_t>(got));
    }
    return true;
  };
  while (true) {
    if (!fill(9)) return std::nullopt;
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(in[i]); };
    const size_t length = (byte(0) << 16) | (byte(1) << 8) | byte(2);
    const uint32_t id =
        ((byte(5) & 0x7f) << 24) | (byte(6) << 16) | (byte(7) << 8) | byte(8);
    if (!fill(9 + length)) return std::nullopt;
    if (byte(3) == type && id == stream) return in.substr(9, length);
    in.erase(0, 9 + length);
  }
}

std::optional<uint32_t> WaitForReset(int fd, uint32_t stream) {
  std::optional<std::string> payload = WaitForFrame(fd, kRstStream, stream);
  if (!payload.has_value() || payload->size() != 4) return std::nullopt;
  return Word(*payload, 0);
}

std::optional<GoAway> WaitForGoAway(int fd) {
  std::optional<std::string> payload = WaitForFrame(fd, kGoAway, 0);
  if (!payload.has_value() || payload->size() < 8) return std::nullopt;
  return GoAway{Word(*payload, 4), payload->substr(8)};
}

bool ClosedByTheDoor(int fd) {
  SetReceiveTimeout(fd);
  char buffer[4096];
  while (true) {
    const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got == 0) return true;
    if (got < 0) return errno == ECONNRESET;
  }
}

}  // namespace tailgate::server::testing
