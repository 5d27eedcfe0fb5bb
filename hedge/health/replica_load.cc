#include "hedge/health/replica_load.h"

#include <algorithm>
#include <cmath>

namespace tailgate::hedge {
namespace {

int64_t NanosSinceEpoch(absl::Time t) {
  return absl::ToInt64Nanoseconds(t - absl::UnixEpoch());
}

// exp(-elapsed / decay): how much of an estimate `elapsed` leaves.
double Kept(absl::Duration elapsed, absl::Duration decay) {
  if (elapsed <= absl::ZeroDuration()) return 1.0;
  return std::exp(-absl::FDivDuration(elapsed, decay));
}

}  // namespace

void ReplicaLoad::Begin(absl::Time started) {
  MutexLock lock(&mu_);
  ++in_flight_;
  started_sum_nanos_ += NanosSinceEpoch(started);
}

void ReplicaLoad::End(absl::Time started, absl::Time now, Ending ending) {
  MutexLock lock(&mu_);
  if (in_flight_ > 0) {
    --in_flight_;
    started_sum_nanos_ -= NanosSinceEpoch(started);
  }
  switch (ending) {
    case Ending::kAnswered:
    case Ending::kCutShort:
      AddSample(now, now - started);
      break;
    case Ending::kFailed:
      RaiseTo(now, std::max(now - started, kFailurePenalty));
      break;
    case Ending::kNoSample:
      break;
  }
}

void ReplicaLoad::RestartFrom(absl::Time now, absl::Duration latency) {
  MutexLock lock(&mu_);
  estimate_seconds_ = absl::ToDoubleSeconds(latency);
  last_sample_ = now;
}

void ReplicaLoad::RaiseTo(absl::Time now, absl::Duration floor) {
  if (DecayedLocked(now) >= floor) return;
  estimate_seconds_ = absl::ToDoubleSeconds(floor);
  last_sample_ = std::max(last_sample_, now);
}

void ReplicaLoad::AddSample(absl::Time now, absl::Duration sample) {
  const double seconds = absl::ToDoubleSeconds(sample);
  if (last_sample_ == absl::InfinitePast()) {
    estimate_seconds_ = seconds;
  } else {
    // Blends the stored estimate, not the idle-decayed view: decaying it
    // between every two samples too would hold a steady replica's
    // estimate below its latency. A sample after a silence longer than
    // kIdleDecay (the replica was avoided) weighs more, as if the silence
    // past kIdleDecay had run on kIdleDecay's clock: what an avoided
    // replica answers when tried again is what it is known by.
    const absl::Duration idle = now - last_sample_;
    const double kept =
        Kept(idle, kDecay) *
        Kept(std::max(idle - kIdleDecay, absl::ZeroDuration()), kIdleDecay);
    const double base = estimate_seconds_;
    estimate_seconds_ = base * kept + seconds * (1 - kept);
  }
  last_sample_ = std::max(last_sample_, now);
}

absl::Duration ReplicaLoad::DecayedLocked(absl::Time now) const {
  if (last_sample_ == absl::InfinitePast()) return absl::ZeroDuration();
  return absl::Seconds(estimate_seconds_ *
                       Kept(now - last_sample_, kIdleDecay));
}

absl::Duration ReplicaLoad::MeanAgeLocked(absl::Time now) const {
  if (in_flight_ <= 0) return absl::ZeroDuration();
  const int64_t mean_start =
      static_cast<int64_t>(started_sum_nanos_ / in_flight_);
  return now - (absl::UnixEpoch() + absl::Nanoseconds(mean_start));
}

double ReplicaLoad::CostLocked(absl::Time now) const {
  const absl::Duration latency =
      std::max({DecayedLocked(now), kLatencyFloor, MeanAgeLocked(now)});
  return absl::ToDoubleSeconds(latency) * static_cast<double>(in_flight_ + 1);
}

double ReplicaLoad::Cost(absl::Time now) const {
  MutexLock lock(&mu_);
  return CostLocked(now);
}

ReplicaLoadSnapshot ReplicaLoad::Snapshot(absl::Time now) const {
  MutexLock lock(&mu_);
  return ReplicaLoadSnapshot{DecayedLocked(now), in_flight_, CostLocked(now)};
}

}  // namespace tailgate::hedge
