// ReadAdmission: the steps every read door (gRPC HedgedRead, plain HTTP)
// takes to turn a read descriptor into an engine read, so both doors apply
// the same hygiene, drain, deadline and rejection accounting:
//
//   1. Admit: validate the descriptor (EngineReadFromRequest; INVALID_ARGUMENT
//      naming the field, counted as invalid_argument), take a DrainGate slot
//      (UNAVAILABLE "server is draining" once draining, counted as
//      draining), and map the caller's deadline onto the engine clock.
//   2. Submit: hand the read to the engine (a NOT_FOUND refusal is counted
//      as unknown_upstream; the engine counts its own overload refusals).
//
// A successful Admit leaves the caller holding one DrainGate slot, which it
// releases (gate().Exit()) once the read is completely over: after a
// refused Submit, or after the engine's callback has run and the answer has
// been delivered or dropped.
//
// Example:
//   absl::StatusOr<hedge::EngineRead> read = admission.Admit(request, deadline);
//   if (!read.ok()) return Refuse(read.status());
//   absl::StatusOr<uint64_t> id = admission.Submit(*std::move(read), done);
//   if (!id.ok()) { admission.gate().Exit(); return Refuse(id.status()); }
//
// Thread safety: safe from any thread. The engine, gate and rejections must
// outlive it.

#ifndef TAILGATE_SERVER_READ_ADMISSION_H_
#define TAILGATE_SERVER_READ_ADMISSION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/drain.h"
#include "server/rejections.h"

namespace tailgate::server {

class ReadAdmission {
 public:
  // `timeout` is --timeout: the bound on a descriptor's hedge delay (the
  // engine itself caps every deadline at it).
  ReadAdmission(hedge::Engine& engine, absl::Duration timeout, DrainGate& gate,
                Rejections& rejections)
      : engine_(engine),
        timeout_(timeout),
        gate_(gate),
        rejections_(rejections) {}

  // Step 1. `call_deadline` is on the system clock (absl::InfiniteFuture()
  // when the caller set none); it is not capped here (see EngineDeadline).
  absl::StatusOr<hedge::EngineRead> Admit(const v1::ReadRequest& request,
                                          absl::Time call_deadline);

  // Step 2. REQUIRES: the read came from Admit. On success `done` will run
  // once on the engine loop thread; on refusal it never runs.
  absl::StatusOr<uint64_t> Submit(hedge::EngineRead read,
                                  hedge::ReadCallback done);

  // Counts a read a door refused for a reason of its own (a malformed HTTP
  // request) before calling Admit.
  void CountRejection(RejectReason reason) { rejections_.Add(reason); }

  hedge::Engine& engine() const { return engine_; }
  DrainGate& gate() const { return gate_; }
  absl::Duration timeout() const { return timeout_; }

 private:
  hedge::Engine& engine_;
  const absl::Duration timeout_;
  DrainGate& gate_;
  Rejections& rejections_;
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_ADMISSION_H_
