// FakeClock: a hedge::Clock that moves only when a test says so.
//
// Example:
//   tailgate::testing::FakeClock clock;  // starts at absl::UnixEpoch()
//   engine uses `clock`...
//   clock.Advance(absl::Milliseconds(25));  // the hedge delay has passed
//
// Thread safety: safe from any thread; time never moves by itself.

#ifndef TAILGATE_TESTS_FAKE_CLOCK_H_
#define TAILGATE_TESTS_FAKE_CLOCK_H_

#include "absl/base/macros.h"
#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/sync/mutex.h"

namespace tailgate::testing {

class FakeClock final : public hedge::Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}

  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  absl::Time Now() const override {
    hedge::MutexLock lock(&mu_);
    return now_;
  }

  // REQUIRES: d >= absl::ZeroDuration() (monotonic time never goes back).
  void Advance(absl::Duration d) {
    ABSL_ASSERT(d >= absl::ZeroDuration());
    hedge::MutexLock lock(&mu_);
    now_ += d;
  }

  // REQUIRES: t >= Now().
  void Set(absl::Time t) {
    hedge::MutexLock lock(&mu_);
    ABSL_ASSERT(t >= now_);
    now_ = t;
  }

 private:
  // (hedge::Mutex rather than absl::Mutex: see hedge/sync/mutex.h.)
  mutable hedge::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_FAKE_CLOCK_H_
