// The ReadResponse wire encoding of an engine's answer, written straight
// from the EngineResponse: the same bytes a tailgate.v1.ReadResponse filled
// by FillReadResponse (server/read/read_descriptor.h) parses back to, without
// building that message (about 25 allocations a read for a typical answer
// with seven headers, and its destruction). Field numbers are those of
// proto/tailgate/v1/tailgate.proto; read_response_wire_test checks the
// two encodings agree.
//
// Thread safety: a pure function.

#ifndef TAILGATE_SERVER_READ_DOOR_READ_RESPONSE_WIRE_H_
#define TAILGATE_SERVER_READ_DOOR_READ_RESPONSE_WIRE_H_

#include <string>

#include "hedge/transport/engine.h"

namespace tailgate::server::read_door {

// Appends the ReadResponse for `response` to `out`.
void AppendReadResponse(const hedge::EngineResponse& response,
                        std::string* out);

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_READ_RESPONSE_WIRE_H_
