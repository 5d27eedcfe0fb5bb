// ReadService: tailgate.v1.HedgedRead on the gRPC callback API.
//
// Each Read goes through ReadAdmission, the steps it shares with the
// plain-HTTP door: it validates the descriptor (INVALID_ARGUMENT naming the
// field), refuses it while draining (UNAVAILABLE) or while the sidecar's
// answers are at their limits (RESOURCE_EXHAUSTED), maps the call's
// deadline, capped by --timeout, onto the engine clock and submits it to
// the engine. The
// engine's refusal or completion becomes the call's status, code for code.
// A cancelled call cancels its engine read. No gRPC thread ever blocks: the
// handler returns at once and the engine finishes the call from its loop
// thread.
//
// Every admitted call holds a DrainGate slot and a ResponseMemory call from
// its handler to OnDone, so a drain waits for the call to be completely
// over and a client that does not read its answers cannot hold more than
// --max_requests of them, nor more than --max_buffered_bytes in all; an
// answer the client has not taken within --send_timeout is dropped
// (StalledCalls cancels the call).
//
// Thread safety: gRPC calls Read from any of its threads. Everything given
// to the constructor must outlive the service and every call it started
// (shut the grpc::Server down before destroying them).

#ifndef TAILGATE_SERVER_GRPC_READ_SERVICE_H_
#define TAILGATE_SERVER_GRPC_READ_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/read/drain.h"
#include "server/read/read_admission.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"
#include "server/read/stalled_calls.h"

namespace tailgate::server {

class ReadService final : public v1::HedgedRead::CallbackService {
 public:
  // `timeout` caps every read's deadline (--timeout).
  ReadService(hedge::Engine& engine, absl::Duration timeout, DrainGate& gate,
              Rejections& rejections, ResponseMemory& memory,
              StalledCalls& stalled);

  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* context,
                                 const v1::ReadRequest* request,
                                 v1::ReadResponse* response) override;

  // What every call uses; constant after construction.
  struct Calls {
    ReadAdmission admission;
    StalledCalls& stalled;
  };

 private:
  Calls calls_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_READ_SERVICE_H_
