// Tenants through real I/O: each tenant's share of max_requests, each
// tenant's own hedge credits, and the per-tenant counters.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hedge/tenants/tenant_table.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

class EngineTenantsTest : public EngineFixture {
 protected:
  hedge::EngineRead TenantGet(std::string target, std::string tenant) const {
    hedge::EngineRead read = Get(std::move(target));
    read.tenant = std::move(tenant);
    return read;
  }

  // The snapshot's entry for `name`; fails the test if there is none.
  static hedge::TenantSnapshot Find(const hedge::EngineSnapshot& stats,
                                    const std::string& name) {
    for (const hedge::TenantSnapshot& tenant : stats.tenants) {
      if (tenant.name == name) return tenant;
    }
    ADD_FAILURE() << "no tenant \"" << name << "\"";
    return {};
  }
};

TEST_F(EngineTenantsTest, ATenantHoldsAtMostItsShareOfRequests) {
  StartReplicas({Always(Hang()), Always(Hang())});
  hedge::EngineConfig config = DefaultConfig();
  config.admission = hedge::AdmissionConfig{4, 8};
  config.tenant_share = 0.5;  // 2 reads per tenant
  config.timeout = absl::Seconds(10);
  config.upstreams[0].hedge_delay = absl::Seconds(5);
  StartEngine(config);

  std::vector<uint64_t> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(
        Submit(TenantGet(absl::StrCat("/a", i), "a"), NewPendingRead()));
  }
  PendingRead& refused = NewPendingRead();
  absl::StatusOr<uint64_t> over =
      engine_->Submit(TenantGet("/a-over", "a"), refused.Callback());
  ASSERT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().message(),
            "tenant \"a\" has its share of concurrent reads (2: "
            "tenant_share=0.5 of max_requests=4)");
  // Another tenant, and reads without one, still find room.
  held.push_back(Submit(TenantGet("/b0", "b"), NewPendingRead()));
  held.push_back(Submit(TenantGet("/none", ""), NewPendingRead()));

  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.rejected_tenant_share, 1u);
  EXPECT_EQ(stats.rejected_overloaded, 0u);
  ASSERT_EQ(stats.tenants.size(), 3u);
  EXPECT_EQ(stats.tenants[0].name, "a");
  EXPECT_EQ(stats.tenants[0].requests, 2u);
  EXPECT_EQ(stats.tenants[0].rejected, 1u);
  EXPECT_EQ(stats.tenants[0].in_flight, 2);
  EXPECT_EQ(stats.tenants[1].name, "b");
  EXPECT_EQ(stats.tenants[2].name, "");
  EXPECT_EQ(RequestsFor("/a-over"), 0);

  for (uint64_t id : held) engine_->Cancel(id);
  for (const auto& pending : pending_reads_) {
    if (pending.get() != &refused) pending->Wait();
  }
  EXPECT_EQ(Find(engine_->Snapshot(), "a").in_flight, 0);
  ExpectIdle();
  // Its share is free again.
  for (const auto& replica : replicas_) {
    replica->SetHandler(Always(Answer("ok")));
  }
  absl::StatusOr<hedge::EngineResponse> again = Read(TenantGet("/a2", "a"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(refused.done());
}

TEST_F(EngineTenantsTest, AFloodingTenantSpendsOnlyItsOwnHedgeCredits) {
  // Every read is slow on both replicas and hedged at 5 ms. Hedge credits:
  // 0.1 per read, 4 banked; a tenant may bank half (2) and earns only from
  // its own reads.
  StartReplicas({Always(Answer("slow", absl::Milliseconds(30))),
                 Always(Answer("slow", absl::Milliseconds(30)))});
  hedge::EngineConfig config = DefaultConfig();
  config.admission = hedge::AdmissionConfig{256, 512};
  config.tenant_share = 0.5;
  config.upstreams[0].budget = {0.1, 4};
  config.upstreams[0].tenant_share = 0.5;
  config.upstreams[0].hedge_delay = absl::Milliseconds(5);
  // Hedges only: give-up fallbacks are paid by the retry budget, not by a
  // tenant's hedge credits.
  config.upstreams[0].give_up.factor = 0;
  StartEngine(config);

  // The flood: 60 reads of tenant "b" at once.
  std::vector<PendingRead*> flood;
  for (int i = 0; i < 60; ++i) {
    flood.push_back(&NewPendingRead());
    Submit(TenantGet(absl::StrCat("/b?i=", i), "b"), *flood.back());
  }
  for (PendingRead* read : flood) ASSERT_TRUE(read->Wait().ok());
  hedge::EngineSnapshot stats = engine_->Snapshot();
  // Its own 2 banked credits and 0.1 for each of its 60 reads: 8.
  EXPECT_LE(Find(stats, "b").hedges, 8u);
  EXPECT_GE(Find(stats, "b").hedges, 2u);
  EXPECT_GT(stats.skipped_no_tenant_budget, 0u);
  // What the flood earned beyond its own share is still in the upstream's
  // balance for the others: tenant "a" hedges its slow read.
  EXPECT_GE(stats.upstreams[0].hedge_credits, 1);
  absl::StatusOr<hedge::EngineResponse> a = Read(TenantGet("/a", "a"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->trace.hedged);
  stats = engine_->Snapshot();
  EXPECT_EQ(Find(stats, "a").hedges, 1u);
  EXPECT_EQ(Find(stats, "a").requests, 1u);
  EXPECT_EQ(Find(stats, "b").requests, 60u);
  ExpectIdle();
}

TEST_F(EngineTenantsTest, TenantsBeyondTheTableShareOther) {
  StartReplicas({Always(Answer("ok")), Always(Answer("ok"))});
  StartEngine();
  for (int i = 0; i < hedge::kMaxNamedTenants + 3; ++i) {
    ASSERT_TRUE(Read(TenantGet("/x", absl::StrCat("t", i))).ok());
  }
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  ASSERT_EQ(stats.tenants.size(),
            static_cast<size_t>(hedge::kMaxNamedTenants + 1));
  EXPECT_EQ(stats.tenants.front().name, "t0");
  EXPECT_EQ(stats.tenants.back().name, "other");
  EXPECT_EQ(stats.tenants.back().requests, 3u);
}

}  // namespace
}  // namespace tailgate::testing
