// The ReadResponse wire encoding of an engine's answer, written straight
// from the EngineResponse: the same bytes a tailgate.v1.ReadResponse filled
// by FillReadResponse (server/read/read_descriptor.h) parses back to, without
// building that message (about 25 allocations a read for a typical answer
// with seven headers, and its destruction). Field numbers are those of
// proto/tailgate/v1/tailgate.proto; read_response_wire_test checks the
// two encodings agree.
//
// The body is not copied: the framed message is three pieces, the body
// being the engine's own string, moved in; an answer held for a slow client
// takes its body's bytes once, not twice.
//
// Thread safety: pure functions; a FramedReadResponse is a value.

#ifndef TAILGATE_SERVER_READ_DOOR_READ_RESPONSE_WIRE_H_
#define TAILGATE_SERVER_READ_DOOR_READ_RESPONSE_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "hedge/transport/engine.h"

namespace tailgate::server::read_door {

// One gRPC message (its 5-byte prefix included) holding a ReadResponse, in
// the order of its bytes: `head` (the prefix, status, headers, and the body
// field's tag and length), `body`, `tail` (the trace).
struct FramedReadResponse {
  std::string head;
  std::string body;
  std::string tail;

  size_t size() const { return head.size() + body.size() + tail.size(); }
  // Copies up to `length` bytes from byte `offset` on into `out`; returns
  // how many (0 at the end).
  size_t CopyOut(size_t offset, uint8_t* out, size_t length) const;
};

// Frames `response` as one gRPC message; its body is moved, not copied.
FramedReadResponse FrameReadResponse(hedge::EngineResponse response);

// A tailgate.v1.ReadManyItem as one gRPC message: read `index` answered
// with `response` (moved, as above), or failed with `status` (its code and
// message).
FramedReadResponse FrameReadManyItem(uint32_t index,
                                     hedge::EngineResponse response);
FramedReadResponse FrameReadManyFailure(uint32_t index,
                                        const absl::Status& status);

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_READ_RESPONSE_WIRE_H_
