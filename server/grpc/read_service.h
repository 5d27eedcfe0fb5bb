// ReadService: tailgate.v1.HedgedRead on the gRPC library's callback API
// (--listen_front=grpc). A codec over the read core (server/read/
// read_call.h): the handler hands the request and the call's deadline to a
// ReadCall and finishes the call with what it reports, the ReadError's
// status code for code. A cancelled call is the client gone
// (ReadCall::ClientGone). No gRPC thread ever blocks: the handler returns
// at once and the engine finishes the call from its loop thread.
//
// The answer's send deadline is enforced by StalledCalls: an answer the
// client has not taken by then is dropped (ReadCall::DropUnsent) and the
// call cancelled.
//
// Thread safety: gRPC calls Read from any of its threads. The core and
// `stalled` must outlive the service and every call it started (shut the
// grpc::Server down before destroying them).

#ifndef TAILGATE_SERVER_GRPC_READ_SERVICE_H_
#define TAILGATE_SERVER_GRPC_READ_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/read/read_call.h"
#include "server/read/stalled_calls.h"

namespace tailgate::server {

class ReadService final : public v1::HedgedRead::CallbackService {
 public:
  ReadService(ReadCore& core, StalledCalls& stalled)
      : core_(core), stalled_(stalled) {}

  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* context,
                                 const v1::ReadRequest* request,
                                 v1::ReadResponse* response) override;

 private:
  ReadCore& core_;
  StalledCalls& stalled_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_READ_SERVICE_H_
