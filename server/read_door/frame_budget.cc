#include "server/read_door/frame_budget.h"

namespace tailgate::server::read_door {

FrameBudget::Verdict FrameBudget::OnPing(absl::Time now, bool calls_open) {
  const absl::Duration interval =
      calls_open ? kMinPingInterval : kMinPingIntervalWithoutCalls;
  if (last_ping_ != absl::InfinitePast() && now - last_ping_ < interval &&
      ++ping_strikes_ > kMaxPingStrikes) {
    return Verdict::kTooManyPings;
  }
  last_ping_ = now;
  return OnIdleFrame();
}

FrameBudget::Verdict FrameBudget::OnIdleFrame() {
  ++idle_frames_;
  if (idle_frames_ > kIdleFrameAllowance + kIdleFramesPerWork * work_) {
    return Verdict::kTooManyIdleFrames;
  }
  return Verdict::kOk;
}

void FrameBudget::OnAnswerSent() {
  ++work_;
  ping_strikes_ = 0;
  last_ping_ = absl::InfinitePast();
}

absl::string_view FrameBudget::DebugData(Verdict verdict) {
  switch (verdict) {
    case Verdict::kTooManyPings:
      return "too_many_pings";
    case Verdict::kTooManyIdleFrames:
      return "too_many_idle_frames";
    case Verdict::kOk:
      break;
  }
  return "";
}

}  // namespace tailgate::server::read_door
