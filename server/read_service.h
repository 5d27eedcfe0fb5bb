// ReadService: tailgate.v1.HedgedRead on the gRPC callback API.
//
// Each Read goes through ReadAdmission (read_admission.h): it validates the
// descriptor (INVALID_ARGUMENT naming the field), refuses it while draining
// (UNAVAILABLE), maps the call's deadline, capped by --timeout, onto the
// engine clock and submits it to the engine. The
// engine's refusal or completion becomes the call's status, code for code.
// A cancelled call cancels its engine read. No gRPC thread ever blocks: the
// handler returns at once and the engine finishes the call from its loop
// thread.
//
// Every admitted call holds a DrainGate slot from its handler to OnDone, so
// a drain waits for the call to be completely over.
//
// Thread safety: gRPC calls Read from any of its threads. The engine, gate
// and rejections must outlive the service and every call it started (shut
// the grpc::Server down before destroying them).

#ifndef TAILGATE_SERVER_READ_SERVICE_H_
#define TAILGATE_SERVER_READ_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/drain.h"
#include "server/read_admission.h"
#include "server/rejections.h"

namespace tailgate::server {

class ReadService final : public v1::HedgedRead::CallbackService {
 public:
  // `timeout` caps every read's deadline (--timeout).
  ReadService(hedge::Engine& engine, absl::Duration timeout, DrainGate& gate,
              Rejections& rejections);

  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* context,
                                 const v1::ReadRequest* request,
                                 v1::ReadResponse* response) override;

 private:
  // Validation, drain and deadline, shared with the plain-HTTP door.
  ReadAdmission admission_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_SERVICE_H_
