#include "hedge/adaptive/censored_latency_sketch.h"

#include <algorithm>
#include <cmath>

#include "absl/base/macros.h"

namespace tailgate::hedge {
namespace {

const double kLogGamma = std::log(CensoredLatencySketch::kGamma);

// Walks the Kaplan-Meier survival curve bucket by bucket: after Step(i),
// survival() is the estimated probability that a latency lies above
// bucket i.
class SurvivalWalk {
 public:
  SurvivalWalk(const std::array<uint64_t, CensoredLatencySketch::kBuckets>&
                   complete,
               const std::array<uint64_t, CensoredLatencySketch::kBuckets>&
                   censored,
               uint64_t total)
      : complete_(complete), censored_(censored), at_risk_(total) {}

  void Step(int bucket) {
    const uint64_t events = complete_[bucket];
    if (events > 0 && at_risk_ > 0) {
      survival_ *= 1.0 - static_cast<double>(events) / at_risk_;
    }
    // A sample censored in this bucket was at risk through it (it outlived
    // its cut), and is not counted anywhere above.
    at_risk_ -= std::min(at_risk_, events + censored_[bucket]);
  }

  double survival() const { return survival_; }
  uint64_t at_risk() const { return at_risk_; }

 private:
  const std::array<uint64_t, CensoredLatencySketch::kBuckets>& complete_;
  const std::array<uint64_t, CensoredLatencySketch::kBuckets>& censored_;
  uint64_t at_risk_;
  double survival_ = 1.0;
};

// Comparisons with a little slack: a survival of 0.1 computed as
// 0.09999999 must still reach the 0.9-quantile.
constexpr double kSlack = 1e-9;

}  // namespace

CensoredLatencySketch::CensoredLatencySketch(const Options& options)
    : slot_length_(options.window / std::max(options.slots, 1)),
      slots_(std::max(options.slots, 1)) {
  ABSL_ASSERT(options.window > absl::ZeroDuration());
}

int CensoredLatencySketch::BucketOf(absl::Duration latency) {
  if (latency < kMin) return 0;
  const double ratio = absl::FDivDuration(latency, kMin);
  const int bucket = 1 + static_cast<int>(std::floor(std::log(ratio) /
                                                     kLogGamma));
  return std::clamp(bucket, 1, kBuckets - 1);
}

absl::Duration CensoredLatencySketch::UpperEdge(int bucket) {
  return kMin * std::pow(kGamma, bucket);
}

absl::Duration CensoredLatencySketch::Midpoint(int bucket) {
  if (bucket == 0) return kMin / 2;
  return kMin * std::pow(kGamma, bucket - 0.5);
}

void CensoredLatencySketch::Advance(absl::Time now) {
  if (!current_start_.has_value()) {
    current_start_ = now;
    return;
  }
  if (now < *current_start_ + slot_length_) return;
  absl::Duration remainder;  // this abseil's IDivDuration needs one
  const int64_t passed =
      absl::IDivDuration(now - *current_start_, slot_length_, &remainder);
  const int64_t to_clear =
      std::min<int64_t>(passed, static_cast<int64_t>(slots_.size()));
  for (int64_t i = 0; i < to_clear; ++i) {
    current_ = (current_ + 1) % slots_.size();
    Slot& slot = slots_[current_];
    complete_total_ -= slot.complete_total;
    censored_total_ -= slot.censored_total;
    slot = Slot();
  }
  *current_start_ += slot_length_ * passed;
}

void CensoredLatencySketch::AddComplete(absl::Time now,
                                        absl::Duration latency) {
  Advance(now);
  Slot& slot = slots_[current_];
  ++slot.complete[BucketOf(latency)];
  ++slot.complete_total;
  ++complete_total_;
}

void CensoredLatencySketch::AddCensored(absl::Time now,
                                        absl::Duration at_least) {
  Advance(now);
  Slot& slot = slots_[current_];
  ++slot.censored[BucketOf(at_least)];
  ++slot.censored_total;
  ++censored_total_;
}

CensoredLatencySketch::Totals CensoredLatencySketch::Sum() const {
  Totals totals;
  for (const Slot& slot : slots_) {
    if (slot.complete_total + slot.censored_total == 0) continue;
    for (int i = 0; i < kBuckets; ++i) {
      totals.complete[i] += slot.complete[i];
      totals.censored[i] += slot.censored[i];
    }
  }
  return totals;
}

std::optional<CensoredLatencySketch::Quantile>
CensoredLatencySketch::QuantileOf(double p) const {
  const uint64_t total = complete_total_ + censored_total_;
  if (total == 0) return std::nullopt;
  const Totals totals = Sum();
  SurvivalWalk walk(totals.complete, totals.censored, total);
  int highest = 0;
  for (int i = 0; i < kBuckets; ++i) {
    if (walk.at_risk() == 0) break;
    highest = i;
    walk.Step(i);
    if (1.0 - walk.survival() >= p - kSlack) return Quantile{Midpoint(i)};
  }
  return Quantile{UpperEdge(highest), /*lower_bound=*/true};
}

std::optional<CensoredLatencySketch::Quantile>
CensoredLatencySketch::MedianRemaining(absl::Duration elapsed) const {
  const uint64_t total = complete_total_ + censored_total_;
  if (total == 0) return std::nullopt;
  const Totals totals = Sum();
  SurvivalWalk walk(totals.complete, totals.censored, total);
  const int start = BucketOf(elapsed);
  for (int i = 0; i < start; ++i) walk.Step(i);
  if (walk.at_risk() == 0 || walk.survival() <= 0) return std::nullopt;
  const double half = walk.survival() / 2;
  int highest = start;
  for (int i = start; i < kBuckets; ++i) {
    if (walk.at_risk() == 0) break;
    highest = i;
    walk.Step(i);
    if (walk.survival() <= half + kSlack) {
      return Quantile{std::max(Midpoint(i) - elapsed, absl::ZeroDuration())};
    }
  }
  return Quantile{std::max(UpperEdge(highest) - elapsed, absl::ZeroDuration()),
                  /*lower_bound=*/true};
}

}  // namespace tailgate::hedge
