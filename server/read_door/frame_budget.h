// FrameBudget: what one HTTP/2 connection may send that carries no work,
// so that no client can keep the loop thread busy with frames that cost
// the door CPU and serve nothing.
//
//   - Pings, after gRFC A8 (what the gRPC library's servers enforce): a
//     PING that comes sooner than kMinPingInterval after the last one
//     (kMinPingIntervalWithoutCalls when no call is open) is a strike;
//     more than kMaxPingStrikes strikes end the connection. The door
//     sending HEADERS or DATA clears the strikes (a client that pings to
//     measure an answer's bandwidth is welcome to).
//   - Frames that carry no work: PING, SETTINGS after the first,
//     WINDOW_UPDATE, PRIORITY, RST_STREAM, GOAWAY, frames of unknown types
//     and DATA with neither payload nor END_STREAM. The connection may send
//     kIdleFrameAllowance of them, plus kIdleFramesPerWork per piece of work: a
//     stream opened, a DATA frame with payload received, a HEADERS or DATA
//     frame the door sent. Past that it ends.
//
// The door ends such a connection with GOAWAY ENHANCE_YOUR_CALM, the debug
// data saying which budget it spent ("too_many_pings",
// "too_many_idle_frames").
//
// Example (the door's frame callback):
//   if (budget.OnPing(now, open_calls > 0) != FrameBudget::Verdict::kOk)
//     ... GOAWAY ENHANCE_YOUR_CALM ...
//
// Thread safety: none; one connection's, on its thread.

#ifndef TAILGATE_SERVER_READ_DOOR_FRAME_BUDGET_H_
#define TAILGATE_SERVER_READ_DOOR_FRAME_BUDGET_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::server::read_door {

class FrameBudget {
 public:
  static constexpr int kMaxPingStrikes = 2;
  static constexpr absl::Duration kMinPingInterval = absl::Minutes(5);
  static constexpr absl::Duration kMinPingIntervalWithoutCalls = absl::Hours(2);
  static constexpr int64_t kIdleFrameAllowance = 1024;
  static constexpr int64_t kIdleFramesPerWork = 8;

  enum class Verdict { kOk, kTooManyPings, kTooManyIdleFrames };

  // A PING (not an ACK) received at `now`; `calls_open`: whether the
  // connection has a call open.
  Verdict OnPing(absl::Time now, bool calls_open);
  // Any other frame that carries no work.
  Verdict OnIdleFrame();
  // Work done on the connection (see above).
  void OnWork() { ++work_; }
  // The door sent HEADERS or DATA: work, and the ping strikes are cleared.
  void OnAnswerSent();

  // The GOAWAY debug data for a verdict other than kOk.
  static absl::string_view DebugData(Verdict verdict);

 private:
  absl::Time last_ping_ = absl::InfinitePast();
  int ping_strikes_ = 0;
  int64_t work_ = 0;
  int64_t idle_frames_ = 0;
};

}  // namespace tailgate::server::read_door

#endif  // TAILGATE_SERVER_READ_DOOR_FRAME_BUDGET_H_
