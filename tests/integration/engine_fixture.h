// Test fixture: a real Engine in front of real loopback replicas.
//
// Reads are submitted and awaited synchronously with Read(); the engine's
// callbacks arrive on its loop thread and are handed over through a
// notification, so no test sleeps.
//
// Replica scripts: a Handler made by PerAttempt() can be shared by every
// replica of a test; the n-th request for one target, on whichever replica,
// gets the n-th response. With a target per read, that scripts the primary
// (first) and the extra attempt (second) of each read without depending on
// which replica the rotation picks.
//
// Thread safety: a PendingRead may be completed on any thread and awaited on
// another. Handlers from PerAttempt() and Route() are safe to call from
// several replica threads at once. The fixture itself is used from the test
// thread only.

#ifndef TAILGATE_TESTS_INTEGRATION_ENGINE_FIXTURE_H_
#define TAILGATE_TESTS_INTEGRATION_ENGINE_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hedge/clock.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/curl/curl_loop.h"
#include "hedge/transport/engine.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {

// A read in flight: Wait() returns its result once the engine completes it.
// (hedge::Mutex rather than absl::Notification: the system abseil is not
// built with ThreadSanitizer, which then cannot see it synchronize.)
class PendingRead {
 public:
  hedge::ReadCallback Callback();
  const absl::StatusOr<hedge::EngineResponse>& Wait(
      absl::Duration timeout = absl::Seconds(10));
  bool done() const;

 private:
  mutable hedge::Mutex mu_;
  hedge::CondVar completed_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  // Written once, before done_ is set; Wait returns a reference to it.
  absl::StatusOr<hedge::EngineResponse> result_ ABSL_GUARDED_BY(mu_) =
      absl::UnknownError("not completed");
};

// A plain answer.
ReplicaResponse Answer(std::string body,
                       absl::Duration delay = absl::ZeroDuration(),
                       int status = 200);
// An answer acting out `fault` (see ReplicaResponse::Fault).
ReplicaResponse Faulty(ReplicaResponse::Fault fault, std::string body = "",
                       int status = 200);
// Never answers until the client goes away.
ReplicaResponse Hang();

// The n-th request for a given target (counted over every replica sharing
// the handler) gets responses[n]; later ones get the last response.
// REQUIRES: !responses.empty()
Handler PerAttempt(std::vector<ReplicaResponse> responses);

// Sends each request to the first route whose prefix its target starts
// with; unmatched targets get 404.
Handler Route(std::vector<std::pair<std::string, Handler>> routes);

class EngineFixture : public ::testing::Test {
 public:
  // Hedge delay 20 ms, generous budget (fraction 1, burst 100), no
  // give-up.
  static hedge::EngineConfig DefaultConfig();

 protected:
  // Starts `handlers.size()` replicas.
  void StartReplicas(std::vector<Handler> handlers);
  // Starts an engine in front of the replicas with `config` (its upstreams
  // are replaced by one default set).
  void StartEngine(hedge::EngineConfig config = DefaultConfig());
  // Like StartEngine, with the replica set given as URLs: a replica with a
  // base path, a port that refuses connections... and an optional clock
  // and observer (which must outlive the engine).
  void StartEngineWithUrls(hedge::EngineConfig config,
                           const std::vector<std::string>& urls,
                           hedge::Clock& clock = hedge::SteadyClock(),
                           hedge::EngineObserver* observer = nullptr);
  // Engine::Create on a new loop thread of `clock` (loop_), after the
  // engine and loop before are gone; the caller keeps the engine.
  absl::StatusOr<std::unique_ptr<hedge::Engine>> CreateEngine(
      hedge::EngineConfig config, hedge::Clock& clock = hedge::SteadyClock(),
      hedge::EngineObserver* observer = nullptr);
  std::vector<std::string> ReplicaUrls() const;
  // "http://127.0.0.1:PORT" for a port where nothing listens.
  static std::string RefusedUrl();

  hedge::EngineRead Get(std::string target) const;
  // Submits and waits. A refusal is returned as the status. The time from
  // Submit to the result, seen by the caller, is kept in last_latency_.
  absl::StatusOr<hedge::EngineResponse> Read(hedge::EngineRead read);
  absl::StatusOr<hedge::EngineResponse> Read(std::string target) {
    return Read(Get(std::move(target)));
  }
  // A PendingRead that outlives the engine (TearDown destroys the engine
  // first), so a test that fails half-way leaves no callback dangling.
  PendingRead& NewPendingRead();
  // Submits; EXPECTs admission.
  uint64_t Submit(hedge::EngineRead read, PendingRead& pending);

  // Requests received by every replica, for one target.
  int64_t RequestsFor(absl::string_view target) const;
  int64_t TotalRequests() const;
  // EXPECTs no read, attempt or replica attempt in flight in the engine.
  void ExpectIdle() const;

  void TearDown() override;

  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::unique_ptr<PendingRead>> pending_reads_;
  // The loop thread the engine is lent, as a process would lend it;
  // outlives the engine.
  std::unique_ptr<hedge::transport::CurlLoop> loop_;
  std::unique_ptr<hedge::Engine> engine_;
  absl::Duration last_latency_;
};

// EXPECTs that a failure's message carries no transport detail: no curl
// wording, no address, no port of `ports`.
void ExpectNoTransportDetail(const absl::Status& status,
                             const std::vector<int>& ports);

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_INTEGRATION_ENGINE_FIXTURE_H_
