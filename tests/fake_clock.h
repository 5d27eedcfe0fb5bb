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

#include <mutex>

#include "absl/base/macros.h"
#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "hedge/clock.h"

namespace tailgate::testing {

class FakeClock final : public hedge::Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}

  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  absl::Time Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }

  // REQUIRES: d >= absl::ZeroDuration() (monotonic time never goes back).
  void Advance(absl::Duration d) {
    ABSL_ASSERT(d >= absl::ZeroDuration());
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }

  // REQUIRES: t >= Now().
  void Set(absl::Time t) {
    std::lock_guard<std::mutex> lock(mu_);
    ABSL_ASSERT(t >= now_);
    now_ = t;
  }

 private:
  // (std::mutex rather than absl::Mutex: the system abseil is not built with
  // ThreadSanitizer, which then cannot see absl::Mutex synchronize.)
  mutable std::mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_FAKE_CLOCK_H_
