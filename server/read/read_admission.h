// ReadAdmission: the steps every door (gRPC HedgedRead on --listen or
// --read_listen, plain HTTP) takes to turn a read descriptor into an engine
// read, so all doors apply the same hygiene, drain, deadline and rejection
// accounting:
//
//   1. Admit: validate the descriptor (EngineReadFromRequest; INVALID_ARGUMENT
//      naming the field, counted as invalid_argument), take a DrainGate slot
//      (UNAVAILABLE "server is draining" once draining, counted as
//      draining) and a ResponseMemory call (RESOURCE_EXHAUSTED when
//      --max_requests reads are still running or sending, or when answers
//      waiting to be sent leave no room under --max_buffered_bytes), and
//      map the caller's deadline onto the engine clock.
//   2. Submit: hand the read to the engine (a NOT_FOUND refusal is counted
//      as unknown_upstream; the engine counts its own overload refusals).
//   3. HoldAnswer: before an answer is handed to the client's connection,
//      reserve its bytes; false (the answer must be dropped, and it is
//      counted) when that would pass --max_buffered_bytes.
//
// A successful Admit leaves the caller holding a slot, which it releases
// with Release(held) once the read is completely over: after a refused
// Submit, or after the answer has been delivered or dropped.
//
// Example:
//   absl::StatusOr<hedge::EngineRead> read = admission.Admit(request, deadline);
//   if (!read.ok()) return Refuse(read.status());
//   absl::StatusOr<uint64_t> id = admission.Submit(*std::move(read), done);
//   if (!id.ok()) { admission.gate().Exit(); return Refuse(id.status()); }
//
// Thread safety: safe from any thread. The engine, gate and rejections must
// outlive it.

#ifndef TAILGATE_SERVER_READ_READ_ADMISSION_H_
#define TAILGATE_SERVER_READ_READ_ADMISSION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/drain.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"

namespace tailgate::server {

class ReadAdmission {
 public:
  // `timeout` is --timeout: the bound on a descriptor's hedge delay (the
  // engine itself caps every deadline at it).
  ReadAdmission(hedge::Engine& engine, absl::Duration timeout, DrainGate& gate,
                Rejections& rejections, ResponseMemory& memory)
      : engine_(engine),
        timeout_(timeout),
        gate_(gate),
        rejections_(rejections),
        memory_(memory) {}

  // Step 1. `call_deadline` is on the system clock (absl::InfiniteFuture()
  // when the caller set none); it is not capped here (see EngineDeadline).
  absl::StatusOr<hedge::EngineRead> Admit(const v1::ReadRequest& request,
                                          absl::Time call_deadline);

  // Step 2. REQUIRES: the read came from Admit. On success `done` will run
  // once on the engine loop thread; on refusal it never runs.
  absl::StatusOr<uint64_t> Submit(hedge::EngineRead read,
                                  hedge::ReadCallback done);

  // Step 3. Reserves `bytes` for an answer about to be handed to its client.
  bool HoldAnswer(int64_t bytes);
  // The RESOURCE_EXHAUSTED an answer HoldAnswer refused is finished with.
  absl::Status BufferFullError() const;

  // The read is over; `held` is what HoldAnswer reserved for it (or 0).
  void Release(int64_t held) {
    memory_.Done(held);
    gate_.Exit();
  }

  // Counts an answer dropped for a reason of the door's own.
  void CountDropped(DropReason reason) { rejections_.AddDropped(reason); }

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
  ResponseMemory& memory_;
};

// Bytes an answer holds while it waits to be sent: body and headers, plus a
// little for framing.
int64_t AnswerBytes(const hedge::EngineResponse& response);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_READ_ADMISSION_H_
