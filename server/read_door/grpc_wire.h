// The few pieces of the gRPC-over-HTTP/2 wire format the read door speaks
// itself (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md):
// the grpc-timeout header, the length-prefixed message, and the
// percent-encoded grpc-message trailer.
//
// Thread safety: pure functions.

#ifndef TAILGATE_SERVER_READ_DOOR_GRPC_WIRE_H_
#define TAILGATE_SERVER_READ_DOOR_GRPC_WIRE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::server::read_door {

// Bytes before each message: a compressed flag and a big-endian length.
inline constexpr size_t kMessagePrefixBytes = 5;

// "TimeoutValue TimeoutUnit": 1 to 8 ASCII digits, then one of H M S m u n.
// INVALID_ARGUMENT naming what is wrong otherwise.
absl::StatusOr<absl::Duration> ParseGrpcTimeout(absl::string_view value);

// The one message of a unary request, from the request's whole body.
// UNIMPLEMENTED for a compressed message (the door accepts identity only),
// INTERNAL for a body that is not exactly one length-prefixed message.
absl::StatusOr<absl::string_view> UnaryMessage(absl::string_view body);

// The message's length, read from its prefix. REQUIRES: prefix.size() >=
// kMessagePrefixBytes.
uint32_t MessageLength(absl::string_view prefix);

// Writes the prefix of an uncompressed message of `length` bytes.
void PutMessagePrefix(uint32_t length, char* out);

// grpc-message's percent-encoding: bytes outside 0x20..0x7E, and '%'.
std::string PercentEncode(absl::string_view message);

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_GRPC_WIRE_H_
