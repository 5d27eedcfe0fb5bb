// ReadCore and ReadCall: one path for a read, from admission to delivery,
// behind every door (the loop front and the read door, server/read_door;
// the plain-HTTP door, server/http_door; the gRPC library's service,
// server/grpc/read_service). A door is a codec: it decodes its protocol
// into a v1::ReadRequest and a deadline, hands them to a ReadCall, and
// encodes what the call reports (an answer, or a ReadError whose ReadEnd it
// maps through its protocol's table). Everything else is here:
//
//   Start       validates the descriptor (INVALID_ARGUMENT naming the
//               field), takes a DrainGate slot (UNAVAILABLE once draining)
//               and a ResponseMemory call (RESOURCE_EXHAUSTED when
//               --max_requests calls are running or sending, or answers
//               waiting fill --max_buffered_bytes), maps the caller's
//               deadline onto the engine clock and submits the read; each
//               refusal is counted by reason (Rejections).
//   done        the engine's completion, on its loop thread: an answer is
//               held against --max_buffered_bytes (or dropped, counted,
//               and reported as kBufferFull) and its send deadline
//               (--send_timeout) starts; an error comes typed (ReadError).
//   ClientGone  the client left: the read is cancelled, unless its deadline
//               is within kDeadlineCancelSlack (then the deadline ends it
//               and it counts as a timeout, not as a caller's cancel: the
//               client's copy of the deadline and ours differ by rounding
//               and transit).
//   Shutdown    the door stops: the read is cancelled and reported as
//               kShuttingDown, not as a caller's cancel.
//   DropUnsent  the client did not take the answer by its send deadline:
//               counted as dropped (once); the door resets the call.
//   Finish      the call is completely over (answer written or dropped,
//               stream closed): its slot and the answer's bytes are given
//               back. The destructor finishes a call not yet finished.
//
// Example (a door on the engine's loop thread):
//   ReadCall& read = call->read;  // a member of the door's call, never moved
//   if (std::optional<ReadError> refused = read.Start(request, deadline,
//           [call](ReadOutcome outcome) { Deliver(call, std::move(outcome));
//           })) {
//     return Answer(call, *refused);  // nothing is held; done never runs
//   }
//   ... once the answer is written, or the stream is gone: read.Finish();
//
// Thread safety: ReadCore is safe from any thread. A ReadCall belongs to
// one door call: Start from the door's thread; done runs once on the
// engine's loop thread (never inside Start); ClientGone and Shutdown from
// any thread once Start has returned; send_deadline, DropUnsent and Finish
// after done has run (or after a refused Start), each from one thread at a
// time. The ReadCall must outlive its done callback: a door keeps it while
// the engine has the read.

#ifndef TAILGATE_SERVER_READ_READ_CALL_H_
#define TAILGATE_SERVER_READ_READ_CALL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "hedge/policy/batch_credits.h"
#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/drain.h"
#include "server/read/read_error.h"
#include "server/read/rejections.h"
#include "server/read/response_memory.h"

namespace tailgate::server {

// A cancel this close to a call's deadline is the deadline's doing.
inline constexpr absl::Duration kDeadlineCancelSlack = absl::Milliseconds(10);

struct ReadCoreLimits {
  absl::Duration timeout;       // --timeout: bounds a descriptor's hedge delay
  absl::Duration send_timeout;  // --send_timeout: an answer's send deadline
};

// What every ReadCall of the process shares. The engine, gate, rejections
// and memory must outlive it and every call.
class ReadCore {
 public:
  ReadCore(hedge::Engine& engine, DrainGate& gate, Rejections& rejections,
           ResponseMemory& memory, ReadCoreLimits limits)
      : engine_(engine),
        gate_(gate),
        rejections_(rejections),
        memory_(memory),
        limits_(limits) {}
  ReadCore(const ReadCore&) = delete;
  ReadCore& operator=(const ReadCore&) = delete;

  // A read a door refused for a reason of its own (a malformed request),
  // before any ReadCall.
  void CountRejection(RejectReason reason) { rejections_.Add(reason); }
  // An answer a door dropped for a reason of its own (a connection over
  // its share of --max_buffered_bytes).
  void CountDropped(DropReason reason) { rejections_.AddDropped(reason); }
  bool draining() const { return gate_.draining(); }
  hedge::Engine& engine() const { return engine_; }
  const ReadCoreLimits& limits() const { return limits_; }

  // The answer of a call that is no read (a door's own services: health,
  // reflection) counts against --max_buffered_bytes as a read's does:
  // HoldServiceAnswer reserves `bytes` (false, and nothing is held, when
  // they do not fit: answer ServiceBufferFullError), ReleaseServiceAnswer
  // gives back what it held once the answer has been sent or dropped.
  bool HoldServiceAnswer(int64_t bytes) { return memory_.TryHold(bytes); }

  // When a read was last answered (an engine answer held for its client),
  // on the system clock; long past before the first. /healthz's
  // liveness (server/sidecar/liveness.h).
  absl::Time last_answer() const {
    return absl::FromUnixNanos(last_answer_.load(std::memory_order_relaxed));
  }
  void ReleaseServiceAnswer(int64_t held) { memory_.Unhold(held); }
  absl::Status ServiceBufferFullError() const;

 private:
  friend class ReadCall;
  hedge::Engine& engine_;
  DrainGate& gate_;
  Rejections& rejections_;
  ResponseMemory& memory_;
  const ReadCoreLimits limits_;
  std::atomic<int64_t> last_answer_{absl::ToUnixNanos(absl::InfinitePast())};
};

// What a read came to. With `answer` set, its bytes are held against
// --max_buffered_bytes until the call's Finish; else `error` says why.
struct ReadOutcome {
  std::optional<hedge::EngineResponse> answer;
  ReadError error;
};
using ReadDone = absl::AnyInvocable<void(ReadOutcome)>;

class ReadCall {
 public:
  explicit ReadCall(ReadCore& core) : core_(core) {}
  // Finishes the call. REQUIRES: its done has run, or Start refused it.
  ~ReadCall() { Finish(); }
  ReadCall(const ReadCall&) = delete;
  ReadCall& operator=(const ReadCall&) = delete;

  // Admits and submits the read. nullopt: the engine has it and `done`
  // will run once, on the loop thread. Otherwise the refusal; nothing is
  // held and `done` never runs. `call_deadline` is on the system clock
  // (absl::InfiniteFuture() when the caller set none); the engine caps it
  // at --timeout. `batch`: the hedge credit of the ReadMany call the read
  // belongs to (null for a Read; hedge/policy/batch_credits.h).
  // REQUIRES: called at most once.
  std::optional<ReadError> Start(
      const v1::ReadRequest& request, absl::Time call_deadline, ReadDone done,
      std::shared_ptr<hedge::BatchCredits> batch = nullptr);

  void ClientGone();
  void Shutdown();

  // InfiniteFuture until an answer has been delivered, and after
  // DropUnsent.
  absl::Time send_deadline() const { return send_deadline_; }
  void DropUnsent();

  // Idempotent.
  void Finish();

  // The answer's bytes held against --max_buffered_bytes (0: none).
  int64_t held_bytes() const { return held_bytes_; }

 private:
  void Complete(absl::StatusOr<hedge::EngineResponse> result);

  ReadCore& core_;
  // Set by Start, before anything may call ClientGone or Shutdown.
  absl::Time call_deadline_ = absl::InfiniteFuture();
  std::optional<uint64_t> read_id_;
  ReadDone done_;
  bool holds_slot_ = false;
  // Set by Shutdown (any thread), read by the completion (loop thread).
  std::atomic<bool> shutting_down_{false};
  // Written by the completion, read after it (see the class comment).
  int64_t held_bytes_ = 0;
  absl::Time send_deadline_ = absl::InfiniteFuture();
};

// Bytes an answer holds while it waits to be sent: body and headers, plus
// a little for framing.
int64_t AnswerBytes(const hedge::EngineResponse& response);

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_READ_READ_CALL_H_
