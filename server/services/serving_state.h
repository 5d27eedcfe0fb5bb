// ServingState: whether the sidecar serves reads, the one answer every
// health service gives (grpc.health.v1 for "" and tailgate.v1.HedgedRead):
// the loop front's own (server/read_door) and the gRPC library's on
// --listen_front=grpc follow it. main sets it: serving once the listeners
// are up, not serving from the start of the drain.
//
// Followers are told of each change through a Subscription: a listener
// runs on the thread that calls Set, under the state's lock, so that once
// a Subscription is gone its listener never runs again. A listener must
// therefore be quick and must not call back into this object (a door posts
// a task to its loop, see hedge::EventLoop::RunOnLoop).
//
// Example:
//   ServingState serving(false);
//   ServingState::Subscription follow = serving.Subscribe(
//       [&server](bool now) { SetReadServing(server, now); });
//   serving.Set(true);
//
// Thread safety: every method is safe from any thread. The state must
// outlive its subscriptions.

#ifndef TAILGATE_SERVER_SERVICES_SERVING_STATE_H_
#define TAILGATE_SERVER_SERVICES_SERVING_STATE_H_

#include <atomic>
#include <cstdint>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "hedge/sync/mutex.h"

namespace tailgate::server::services {

class ServingState {
 public:
  using Listener = absl::AnyInvocable<void(bool serving)>;

  // Removes its listener when destroyed. Movable; an empty (moved-from or
  // default) one removes nothing.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept
        : state_(std::exchange(other.state_, nullptr)), id_(other.id_) {}
    Subscription& operator=(Subscription&& other) noexcept;
    ~Subscription() { Reset(); }

    // Removes the listener now: it is not running and never runs again.
    void Reset();

   private:
    friend class ServingState;
    Subscription(ServingState* state, uint64_t id) : state_(state), id_(id) {}
    ServingState* state_ = nullptr;
    uint64_t id_ = 0;
  };

  explicit ServingState(bool serving) : serving_(serving) {}
  ServingState(const ServingState&) = delete;
  ServingState& operator=(const ServingState&) = delete;

  // Changes the state; each listener runs once if it changed.
  void Set(bool serving);
  bool serving() const { return serving_.load(std::memory_order_acquire); }

  // `listener` runs now, with the current state, then after each change.
  [[nodiscard]] Subscription Subscribe(Listener listener);

 private:
  void Unsubscribe(uint64_t id);

  hedge::Mutex mu_;
  // Written under mu_ (so listeners see changes in order); read anywhere.
  std::atomic<bool> serving_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<uint64_t, Listener> listeners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::server::services

#endif  // TAILGATE_SERVER_SERVICES_SERVING_STATE_H_
