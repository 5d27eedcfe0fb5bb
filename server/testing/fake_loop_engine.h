// FakeLoopEngine: a hedge::Engine with a real libevent loop on a thread of
// its own, whose reads the test answers, and that loop as the
// hedge::EventLoop it lends the doors. For in-process tests of the front
// doors (server/http_door, server/read_door), which are served on the
// loop the engine runs on (pass the fake as both).
//
// RunOnLoop runs its task on the loop thread with the loop's event_base, in
// the order tasks were posted, as the real engine does. Submit records the
// read (its descriptor and deadline) and keeps its callback, unless a
// refusal is scripted; the test then answers it (Answer) or fails it with a
// typed hedge::ReadFailure (Fail), from its own thread. Cancel records the
// id and completes a pending read with CANCELLED, as the real engine does.
// Every completion runs on the loop thread, in a later step of the loop:
// never inside Submit or Cancel.
//
// Example:
//   absl::StatusOr<std::unique_ptr<FakeLoopEngine>> engine =
//       FakeLoopEngine::Create();
//   ... start a door on **engine, send it a request from a client thread ...
//   std::optional<FakeLoopEngine::Submitted> read =
//       (*engine)->WaitForRead(0, absl::Seconds(10));
//   (*engine)->Answer(read->id, response);
//
// Thread safety: every method is safe from any thread (the test's, or the
// loop's: a door submits and cancels there). Tasks and read callbacks run on
// the loop thread, outside the fake's lock. The destructor (not from the
// loop thread) completes reads still pending with UNAVAILABLE
// (kShuttingDown) on the loop thread, runs every task already posted, then
// stops the loop: destroy the doors first, as with the real engine.

#ifndef TAILGATE_SERVER_TESTING_FAKE_LOOP_ENGINE_H_
#define TAILGATE_SERVER_TESTING_FAKE_LOOP_ENGINE_H_

#include <event2/event.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/engine.h"
#include "hedge/transport/event_loop.h"
#include "tests/replica/event_loop_thread.h"

namespace tailgate::server::testing {

class FakeLoopEngine final : public hedge::Engine, public hedge::EventLoop {
 public:
  // A read as Submit received it.
  struct Submitted {
    uint64_t id = 0;  // 0: refused (RefuseWith)
    hedge::EngineRead read;
    bool on_loop_thread = false;  // Submit ran on the loop thread
  };

  // Starts the loop. `clock` (the engine clock reads' deadlines are on)
  // must outlive the engine.
  static absl::StatusOr<std::unique_ptr<FakeLoopEngine>> Create(
      hedge::Clock& clock = hedge::SteadyClock());

  ~FakeLoopEngine() override;
  FakeLoopEngine(const FakeLoopEngine&) = delete;
  FakeLoopEngine& operator=(const FakeLoopEngine&) = delete;

  // Engine.
  absl::StatusOr<uint64_t> Submit(hedge::EngineRead read,
                                  hedge::ReadCallback done) override;
  void Cancel(uint64_t read_id) override;
  // Accepts any sets and keeps none.
  absl::Status SetUpstreams(
      std::vector<hedge::UpstreamConfig> upstreams) override;
  hedge::EngineSnapshot Snapshot() const override { return {}; }
  // hedge::EventLoop
  absl::Status RunOnLoop(Task task) override;
  hedge::Clock& clock() const override { return clock_; }

  // Scripting.
  // Every later Submit is refused with `status` (recorded, with id 0); OK
  // admits again.
  void RefuseWith(absl::Status status);
  // Completes a pending read with `response` / with `failure` (its code,
  // read_failure.h) and `message`, on the loop thread. False if the read is
  // not pending (never admitted, already completed or cancelled).
  bool Answer(uint64_t read_id, hedge::EngineResponse response);
  bool Fail(uint64_t read_id, hedge::ReadFailure failure,
            absl::string_view message = "failed by the test");

  // Observations.
  // The `index`-th Submit (from 0), once it has happened; nullopt if it
  // does not within `timeout`.
  std::optional<Submitted> WaitForRead(size_t index,
                                       absl::Duration timeout) const;
  // True once Cancel has been called for `read_id`; false if it is not
  // within `timeout`.
  bool WaitForCancelled(uint64_t read_id, absl::Duration timeout) const;
  std::vector<Submitted> submitted() const;  // in Submit order
  std::vector<uint64_t> cancelled() const;   // Cancel calls, in order
  size_t pending() const;                    // admitted, not yet completed

 private:
  FakeLoopEngine(hedge::Clock& clock,
                 std::unique_ptr<tailgate::testing::EventLoopThread> loop);

  // Queues `task` for the loop thread and wakes it.
  void Post(absl::AnyInvocable<void(event_base*)> task)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes `read_id`'s callback out of the pending reads and posts its
  // completion with `result`. False if it is not pending.
  bool CompleteLocked(uint64_t read_id,
                      absl::StatusOr<hedge::EngineResponse> result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Loop thread: runs the tasks posted so far.
  static void OnWake(evutil_socket_t, short, void* arg) noexcept;

  hedge::Clock& clock_;
  // Destroyed last: the loop stops (and the base is freed) after wake_.
  const std::unique_ptr<tailgate::testing::EventLoopThread> loop_;
  event* wake_ = nullptr;  // activated by Post; constant after Create

  mutable hedge::Mutex mu_;
  mutable hedge::CondVar changed_;              // a read submitted or cancelled
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // the destructor runs
  std::deque<absl::AnyInvocable<void(event_base*)>> tasks_ ABSL_GUARDED_BY(mu_);
  absl::Status refusal_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, hedge::ReadCallback> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<Submitted> submitted_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> cancelled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_FAKE_LOOP_ENGINE_H_
