#include "tests/integration/engine_fixture.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "hedge/replica_url.h"

namespace tailgate::testing {

hedge::ReadCallback PendingRead::Callback() {
  return [this](absl::StatusOr<hedge::EngineResponse> result) {
    result_ = std::move(result);
    done_.Notify();
  };
}

const absl::StatusOr<hedge::EngineResponse>& PendingRead::Wait(
    absl::Duration timeout) {
  EXPECT_TRUE(done_.WaitForNotificationWithTimeout(timeout))
      << "read did not complete within " << timeout;
  return result_;
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
  return config;
}

void EngineFixture::StartEngine(hedge::EngineConfig config) {
  std::vector<std::string> urls;
  for (const auto& replica : replicas_) urls.push_back(replica->url());
  absl::StatusOr<std::vector<hedge::ReplicaUrl>> parsed =
      hedge::ParseReplicaList(absl::StrJoin(urls, ","));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  if (config.upstreams.empty()) config.upstreams.resize(1);
  config.upstreams[0].replicas = *parsed;
  absl::StatusOr<std::unique_ptr<hedge::Engine>> engine =
      hedge::Engine::Create(std::move(config));
  ASSERT_TRUE(engine.ok()) << engine.status();
  engine_ = std::move(*engine);
}

hedge::EngineRead EngineFixture::Get(std::string target) const {
  hedge::EngineRead read;
  read.target = std::move(target);
  read.deadline = engine_->clock().Now() + absl::Seconds(5);
  return read;
}

absl::StatusOr<hedge::EngineResponse> EngineFixture::Read(
    hedge::EngineRead read) {
  PendingRead pending;
  absl::StatusOr<uint64_t> id =
      engine_->Submit(std::move(read), pending.Callback());
  if (!id.ok()) return id.status();
  return pending.Wait();
}

uint64_t EngineFixture::Submit(hedge::EngineRead read, PendingRead& pending) {
  absl::StatusOr<uint64_t> id =
      engine_->Submit(std::move(read), pending.Callback());
  EXPECT_TRUE(id.ok()) << id.status();
  return id.ok() ? *id : 0;
}

void EngineFixture::TearDown() {
  engine_.reset();
  replicas_.clear();
}

}  // namespace tailgate::testing
