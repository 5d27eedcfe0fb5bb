#include "server/read_door/grpc_wire.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tailgate::server::read_door {

absl::StatusOr<absl::Duration> ParseGrpcTimeout(absl::string_view value) {
  if (value.size() < 2 || value.size() > 9) {
    return absl::InvalidArgumentError(
        "grpc-timeout must be 1 to 8 digits and a unit");
  }
  const absl::string_view digits = value.substr(0, value.size() - 1);
  int64_t amount = 0;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("grpc-timeout must start with digits");
    }
    amount = amount * 10 + (c - '0');
  }
  switch (value.back()) {
    case 'H':
      return absl::Hours(amount);
    case 'M':
      return absl::Minutes(amount);
    case 'S':
      return absl::Seconds(amount);
    case 'm':
      return absl::Milliseconds(amount);
    case 'u':
      return absl::Microseconds(amount);
    case 'n':
      return absl::Nanoseconds(amount);
    default:
      return absl::InvalidArgumentError(
          "grpc-timeout unit must be one of H M S m u n");
  }
}

uint32_t MessageLength(absl::string_view prefix) {
  const auto byte = [&](int i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(prefix[i]));
  };
  return byte(1) << 24 | byte(2) << 16 | byte(3) << 8 | byte(4);
}

void PutMessagePrefix(uint32_t length, char* out) {
  out[0] = 0;
  out[1] = static_cast<char>(length >> 24);
  out[2] = static_cast<char>(length >> 16);
  out[3] = static_cast<char>(length >> 8);
  out[4] = static_cast<char>(length);
}

absl::StatusOr<absl::string_view> UnaryMessage(absl::string_view body) {
  if (body.size() < kMessagePrefixBytes) {
    return absl::InternalError("the request carries no message");
  }
  if (body[0] != 0) {
    return absl::UnimplementedError(
        "compressed messages are not accepted (grpc-accept-encoding: "
        "identity)");
  }
  const uint64_t length = MessageLength(body);
  if (body.size() - kMessagePrefixBytes != length) {
    return absl::InternalError(
        body.size() - kMessagePrefixBytes < length
            ? "the request's message is cut short"
            : "a unary request carries more than one message");
  }
  return body.substr(kMessagePrefixBytes);
}

std::string PercentEncode(absl::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e || byte == '%') {
      constexpr char kHex[] = "0123456789ABCDEF";
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace tailgate::server::read_door
