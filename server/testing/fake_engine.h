// FakeEngine: a scriptable hedge::Engine for server tests.
//
// Submit records the read and, unless a refusal is scripted, admits it and
// keeps its callback; the test completes it later with Complete (from any
// thread: call it from a thread of the test's own to play the engine loop).
// Cancel records the id and, like the real engine, completes a pending read
// with CANCELLED (a typed hedge::ReadFailure). Snapshot returns whatever the test set.
//
// Thread safety: every method is safe from any thread. Callbacks run on the
// thread that calls Complete or Cancel, outside the fake's lock.

#ifndef TAILGATE_SERVER_TESTING_FAKE_ENGINE_H_
#define TAILGATE_SERVER_TESTING_FAKE_ENGINE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/transport/engine.h"

namespace tailgate::server::testing {

class FakeEngine final : public hedge::Engine {
 public:
  explicit FakeEngine(hedge::Clock& clock = hedge::SteadyClock())
      : clock_(clock) {}

  // Engine.
  absl::StatusOr<uint64_t> Submit(hedge::EngineRead read,
                                  hedge::ReadCallback done) override;
  void Cancel(uint64_t read_id) override;
  // Records the sets (upstream_updates) and accepts them.
  absl::Status SetUpstreams(
      std::vector<hedge::UpstreamConfig> upstreams) override;
  hedge::EngineSnapshot Snapshot() const override;
  hedge::Clock& clock() const override { return clock_; }

  // Scripting.
  // Every later Submit is refused with `status`; OK admits again.
  void RefuseWith(absl::Status status);
  // Every later admitted read is completed with `result` before Submit
  // returns, as a real engine's loop thread may do; nullopt stops that.
  void CompleteOnSubmit(
      std::optional<absl::StatusOr<hedge::EngineResponse>> result);
  void SetSnapshot(hedge::EngineSnapshot snapshot);
  // Completes a pending read; false if it is not pending (never admitted,
  // or already completed).
  bool Complete(uint64_t read_id, absl::StatusOr<hedge::EngineResponse> result);

  // Observations.
  std::vector<hedge::EngineRead> submitted() const;  // in Submit order
  std::vector<uint64_t> cancelled() const;           // Cancel calls, in order
  std::vector<uint64_t> pending_ids() const;         // ascending
  // SetUpstreams calls, in order.
  std::vector<std::vector<hedge::UpstreamConfig>> upstream_updates() const;
  // Blocks until `n` reads have been submitted (admitted or not), up to
  // `timeout`; false on timeout.
  bool WaitForSubmitted(size_t n, absl::Duration timeout) const;

 private:
  hedge::Clock& clock_;

  mutable absl::Mutex mu_;
  absl::Status refusal_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<hedge::EngineResponse>> complete_on_submit_
      ABSL_GUARDED_BY(mu_);
  hedge::EngineSnapshot snapshot_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, hedge::ReadCallback> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<hedge::EngineRead> submitted_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> cancelled_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<hedge::UpstreamConfig>> upstream_updates_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_FAKE_ENGINE_H_
