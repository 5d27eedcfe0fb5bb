#include "experiment/measure/rss_sampler.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "experiment/measure/peak_rss.h"

namespace tailgate::experiment {

int64_t RssSeries::Min() const {
  assert(!kib.empty());
  return *std::min_element(kib.begin(), kib.end());
}

int64_t RssSeries::Max() const {
  assert(!kib.empty());
  return *std::max_element(kib.begin(), kib.end());
}

RssSampler::RssSampler(pid_t pid, absl::Duration interval) : pid_(pid) {
  series_.interval = interval;
  sampler_ = std::thread([this, interval] {
    do {
      Sample();
    } while (error_.ok() && !stop_.WaitForNotificationWithTimeout(interval));
  });
}

RssSampler::~RssSampler() {
  if (sampler_.joinable()) Stop().IgnoreError();
}

absl::StatusOr<RssSeries> RssSampler::Stop() {
  stop_.Notify();
  sampler_.join();
  if (!error_.ok()) return error_;
  return std::move(series_);
}

void RssSampler::Sample() {
  absl::StatusOr<int64_t> kib = ResidentKib(pid_);
  if (!kib.ok()) {
    error_ = kib.status();
    return;
  }
  series_.kib.push_back(*kib);
}

}  // namespace tailgate::experiment
