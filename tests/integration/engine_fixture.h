// Test fixture: a real Engine in front of real loopback replicas.
//
// Reads are submitted and awaited synchronously with Read(); the engine's
// callbacks arrive on its loop thread and are handed over through a
// Notification, so no test sleeps.

#ifndef TAILGATE_TESTS_INTEGRATION_ENGINE_FIXTURE_H_
#define TAILGATE_TESTS_INTEGRATION_ENGINE_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/transport/engine.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {

// A read in flight: Wait() returns its result once the engine completes it.
class PendingRead {
 public:
  hedge::ReadCallback Callback();
  const absl::StatusOr<hedge::EngineResponse>& Wait(
      absl::Duration timeout = absl::Seconds(10));
  bool done() const { return done_.HasBeenNotified(); }

 private:
  absl::Notification done_;
  absl::StatusOr<hedge::EngineResponse> result_ =
      absl::UnknownError("not completed");
};

class EngineFixture : public ::testing::Test {
 protected:
  // Starts `handlers.size()` replicas and an engine in front of them with
  // `config` (its upstreams are replaced by one default set).
  void StartReplicas(std::vector<Handler> handlers);
  void StartEngine(hedge::EngineConfig config = DefaultConfig());
  static hedge::EngineConfig DefaultConfig();

  hedge::EngineRead Get(std::string target) const;
  // Submits and waits. A refusal is returned as the status.
  absl::StatusOr<hedge::EngineResponse> Read(hedge::EngineRead read);
  absl::StatusOr<hedge::EngineResponse> Read(std::string target) {
    return Read(Get(std::move(target)));
  }
  // Submits; EXPECTs admission.
  uint64_t Submit(hedge::EngineRead read, PendingRead& pending);

  void TearDown() override;

  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<hedge::Engine> engine_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_INTEGRATION_ENGINE_FIXTURE_H_
