#include "hedge/adaptive/hedge_payoff.h"

#include <algorithm>

namespace tailgate::hedge {

double HedgePayoff::SpendFor(double win_ratio) {
  const double t =
      std::clamp((win_ratio - kFloorAt) / (kFullAt - kFloorAt), 0.0, 1.0);
  return kFloor + (1.0 - kFloor) * t;
}

bool HedgePayoff::AllowHedge() {
  MutexLock lock(&mu_);
  allowance_ = std::min(1.0, allowance_ + SpendFor(win_ratio_));
  // A little slack, so that ten tenths make a whole.
  if (allowance_ >= 1.0 - 1e-9) {
    allowance_ = std::max(0.0, allowance_ - 1.0);
    return true;
  }
  ++held_back_;
  return false;
}

void HedgePayoff::OnHedgeResult(bool won) {
  MutexLock lock(&mu_);
  win_ratio_ += ((won ? 1.0 : 0.0) - win_ratio_) / kMemory;
}

double HedgePayoff::win_ratio() const {
  MutexLock lock(&mu_);
  return win_ratio_;
}

double HedgePayoff::spend() const {
  MutexLock lock(&mu_);
  return SpendFor(win_ratio_);
}

uint64_t HedgePayoff::held_back() const {
  MutexLock lock(&mu_);
  return held_back_;
}

}  // namespace tailgate::hedge
