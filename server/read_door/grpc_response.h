// The HEADERS frames of a gRPC answer, as the door submits them to
// nghttp2 (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md):
// response headers ahead of the messages, trailers after them, or
// trailers alone for a call that fails before its first message.
//
// Thread safety: as the nghttp2 session given (the door's thread).

#ifndef TAILGATE_SERVER_READ_DOOR_GRPC_RESPONSE_H_
#define TAILGATE_SERVER_READ_DOOR_GRPC_RESPONSE_H_

#include <nghttp2/nghttp2.h>

#include <cstdint>

#include "absl/status/status.h"

namespace tailgate::server::read_door {

// ":status 200" and "content-type application/grpc", then DATA from
// `messages`. nghttp2's code (0 on success).
int SubmitResponseHeaders(nghttp2_session* session, int32_t stream_id,
                          const nghttp2_data_provider& messages);

// grpc-status and grpc-message (percent-encoded), ending the stream after
// its messages. REQUIRES: the stream's data source has signalled
// NGHTTP2_DATA_FLAG_EOF with NGHTTP2_DATA_FLAG_NO_END_STREAM (this may be
// called from inside that callback).
int SubmitTrailers(nghttp2_session* session, int32_t stream_id,
                   const absl::Status& status);

// Trailers only: one HEADERS frame with `http_status`, the content type and
// the status, which ends the stream.
int SubmitTrailersOnly(nghttp2_session* session, int32_t stream_id,
                       int http_status, const absl::Status& status);

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_GRPC_RESPONSE_H_
