#include "tests/integration/engine_fixture.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "hedge/hygiene/replica_url.h"
#include "tests/replica/silent_listener.h"

namespace tailgate::testing {

hedge::ReadCallback PendingRead::Callback() {
  return [this](absl::StatusOr<hedge::EngineResponse> result) {
    hedge::MutexLock lock(&mu_);
    if (done_) {
      ADD_FAILURE() << "read completed twice";
      return;
    }
    result_ = std::move(result);
    done_ = true;
    // Under the lock: once Wait() sees done_, the PendingRead may be gone.
    completed_.SignalAll();
  };
}

const absl::StatusOr<hedge::EngineResponse>& PendingRead::Wait(
    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  hedge::MutexLock lock(&mu_);
  bool timed_out = false;
  while (!done_ && !timed_out) {
    timed_out = completed_.WaitWithDeadline(&mu_, deadline);
  }
  EXPECT_TRUE(done_) << "read did not complete within " << timeout;
  return result_;
}

bool PendingRead::done() const {
  hedge::MutexLock lock(&mu_);
  return done_;
}

ReplicaResponse Answer(std::string body, absl::Duration delay, int status) {
  ReplicaResponse response;
  response.status = status;
  response.body = std::move(body);
  response.delay = delay;
  return response;
}

ReplicaResponse Faulty(ReplicaResponse::Fault fault, std::string body,
                       int status) {
  ReplicaResponse response =
      Answer(std::move(body), absl::ZeroDuration(), status);
  response.fault = fault;
  return response;
}

ReplicaResponse Hang() { return Faulty(ReplicaResponse::Fault::kHang); }

Handler PerAttempt(std::vector<ReplicaResponse> responses) {
  struct Script {
    explicit Script(std::vector<ReplicaResponse> responses)
        : responses(std::move(responses)) {}
    const std::vector<ReplicaResponse> responses;
    hedge::Mutex mu;
    absl::flat_hash_map<std::string, size_t> seen ABSL_GUARDED_BY(mu);
  };
  auto script = std::make_shared<Script>(std::move(responses));
  return [script](const ReplicaRequest& request) {
    size_t n;
    {
      hedge::MutexLock lock(&script->mu);
      n = script->seen[request.uri]++;
    }
    return script->responses[std::min(n, script->responses.size() - 1)];
  };
}

Handler Route(std::vector<std::pair<std::string, Handler>> routes) {
  return [routes = std::move(routes)](const ReplicaRequest& request) {
    for (const auto& [prefix, handler] : routes) {
      if (absl::StartsWith(request.uri, prefix)) return handler(request);
    }
    return Answer("no route", absl::ZeroDuration(), 404);
  };
}

void EngineFixture::StartReplicas(std::vector<Handler> handlers) {
  for (Handler& handler : handlers) {
    absl::StatusOr<std::unique_ptr<Replica>> replica =
        Replica::Start(std::move(handler));
    ASSERT_TRUE(replica.ok()) << replica.status();
    replicas_.push_back(std::move(*replica));
  }
}

hedge::EngineConfig EngineFixture::DefaultConfig() {
  hedge::EngineConfig config;
  config.upstreams.resize(1);
  config.upstreams[0].hedge_delay = absl::Milliseconds(20);
  config.upstreams[0].budget = hedge::HedgeBudgetConfig{1.0, 100};
  // No give-up: these tests stage hedges and fallbacks with slow replicas,
  // and a give-up fallback would add attempts of its own. The give-up has
  // tests of its own (engine_sick_replica_test, read_decision_give_up_test).
  config.upstreams[0].give_up.factor = 0;
  return config;
}

std::vector<std::string> EngineFixture::ReplicaUrls() const {
  std::vector<std::string> urls;
  for (const auto& replica : replicas_) urls.push_back(replica->url());
  return urls;
}

std::string EngineFixture::RefusedUrl() {
  absl::StatusOr<int> port = RefusingLoopbackPort();
  EXPECT_TRUE(port.ok()) << port.status();
  return absl::StrCat("http://127.0.0.1:", port.value_or(1));
}

void EngineFixture::StartEngine(hedge::EngineConfig config) {
  StartEngineWithUrls(std::move(config), ReplicaUrls());
}

void EngineFixture::StartEngineWithUrls(hedge::EngineConfig config,
                                        const std::vector<std::string>& urls,
                                        hedge::Clock& clock,
                                        hedge::EngineObserver* observer) {
  absl::StatusOr<std::vector<hygiene::ReplicaUrl>> parsed =
      hygiene::ParseReplicaList(absl::StrJoin(urls, ","));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  if (config.upstreams.empty()) config.upstreams.resize(1);
  config.upstreams[0].replicas = *parsed;
  absl::StatusOr<std::unique_ptr<hedge::Engine>> engine =
      CreateEngine(std::move(config), clock, observer);
  ASSERT_TRUE(engine.ok()) << engine.status();
  engine_ = std::move(*engine);
}

absl::StatusOr<std::unique_ptr<hedge::Engine>> EngineFixture::CreateEngine(
    hedge::EngineConfig config, hedge::Clock& clock,
    hedge::EngineObserver* observer) {
  engine_.reset();  // a test may restart the engine with another config
  loop_ = std::make_unique<hedge::transport::CurlLoop>(clock);
  if (absl::Status started = loop_->Start(); !started.ok()) return started;
  return hedge::Engine::Create(std::move(config), *loop_, observer);
}

hedge::EngineRead EngineFixture::Get(std::string target) const {
  hedge::EngineRead read;
  read.target = std::move(target);
  read.deadline = engine_->clock().Now() + absl::Seconds(5);
  return read;
}

absl::StatusOr<hedge::EngineResponse> EngineFixture::Read(
    hedge::EngineRead read) {
  PendingRead& pending = NewPendingRead();
  const absl::Time start = hedge::SteadyClock().Now();
  absl::StatusOr<uint64_t> id =
      engine_->Submit(std::move(read), pending.Callback());
  if (!id.ok()) {
    last_latency_ = hedge::SteadyClock().Now() - start;
    return id.status();
  }
  absl::StatusOr<hedge::EngineResponse> result = pending.Wait();
  last_latency_ = hedge::SteadyClock().Now() - start;
  return result;
}

PendingRead& EngineFixture::NewPendingRead() {
  pending_reads_.push_back(std::make_unique<PendingRead>());
  return *pending_reads_.back();
}

uint64_t EngineFixture::Submit(hedge::EngineRead read, PendingRead& pending) {
  absl::StatusOr<uint64_t> id =
      engine_->Submit(std::move(read), pending.Callback());
  EXPECT_TRUE(id.ok()) << id.status();
  return id.ok() ? *id : 0;
}

int64_t EngineFixture::RequestsFor(absl::string_view target) const {
  int64_t n = 0;
  for (const auto& replica : replicas_) {
    for (const ReplicaRequest& request : replica->requests()) {
      n += request.uri == target;
    }
  }
  return n;
}

int64_t EngineFixture::TotalRequests() const {
  int64_t n = 0;
  for (const auto& replica : replicas_) n += replica->requests_received();
  return n;
}

void EngineFixture::ExpectIdle() const {
  const hedge::EngineSnapshot snapshot = engine_->Snapshot();
  EXPECT_EQ(snapshot.in_flight_requests, 0);
  EXPECT_EQ(snapshot.in_flight_attempts, 0);
  for (const hedge::ReplicaSnapshot& replica : snapshot.replicas) {
    EXPECT_EQ(replica.in_flight, 0) << replica.url;
  }
}

void EngineFixture::TearDown() {
  engine_.reset();  // completes whatever is still in flight
  loop_.reset();
  pending_reads_.clear();
  replicas_.clear();
}

void ExpectNoTransportDetail(const absl::Status& status,
                             const std::vector<int>& ports) {
  const std::string message = absl::AsciiStrToLower(status.message());
  for (const char* detail :
       {"curl", "127.0.0.1", "localhost", "connection refused",
        "couldn't connect", "failed to connect", "recv failure",
        "unsupported http", "header without colon", "weird server reply",
        "transfer closed", "connection reset"}) {
    EXPECT_FALSE(absl::StrContains(message, detail))
        << "\"" << status.message() << "\" leaks \"" << detail << "\"";
  }
  for (int port : ports) {
    EXPECT_FALSE(absl::StrContains(message, absl::StrCat(port)))
        << "\"" << status.message() << "\" leaks port " << port;
  }
}

}  // namespace tailgate::testing
