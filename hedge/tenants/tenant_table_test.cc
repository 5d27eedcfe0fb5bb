#include "hedge/tenants/tenant_table.h"

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tailgate::hedge {
namespace {

TEST(TenantNameTest, AcceptsTheEdges) {
  for (const std::string& name :
       {std::string(), std::string("a"), std::string("team-a.eu_1"),
        std::string(kMaxTenantNameBytes, 'x')}) {
    EXPECT_TRUE(ValidateTenantName(name).ok()) << name;
  }
}

TEST(TenantNameTest, RejectionSaysWhatIsWrong) {
  EXPECT_EQ(
      ValidateTenantName(std::string(kMaxTenantNameBytes + 1, 'x')).message(),
      "longer than 64 bytes (65)");
  EXPECT_EQ(ValidateTenantName("a b").message(),
            "want letters, digits, \".\", \"_\" and \"-\", got \"a b\"");
  // Escaped, so that the message stays one printable line.
  EXPECT_TRUE(absl::StrContains(
      ValidateTenantName(std::string("a\0b", 3)).message(), "got \"a\\x00"));
  for (const char* bad : {"a/b", "a:b", "\xc3\xa9", "a\"b", "{x}"}) {
    const absl::Status status = ValidateTenantName(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(TenantTableTest, TheFirstTenantsGetSlotsThenOther) {
  TenantTable tenants(128, 1);
  EXPECT_EQ(tenants.SlotOf(""), 0);
  EXPECT_EQ(tenants.SlotOf("a"), 1);
  EXPECT_EQ(tenants.SlotOf(""), 0);  // remembered
  for (int i = 2; i < kMaxNamedTenants; ++i) {
    EXPECT_EQ(tenants.SlotOf(absl::StrCat("t", i)), i);
  }
  EXPECT_EQ(tenants.Names().size(), static_cast<size_t>(kMaxNamedTenants));
  EXPECT_EQ(tenants.SlotOf("late"), TenantTable::kOther);
  EXPECT_EQ(tenants.SlotOf("later"), TenantTable::kOther);
  EXPECT_EQ(tenants.SlotOf("a"), 1);
  const std::vector<std::string> names = tenants.Names();
  ASSERT_EQ(names.size(), static_cast<size_t>(TenantTable::kSlots));
  EXPECT_EQ(names[0], "");
  EXPECT_EQ(names[1], "a");
  EXPECT_EQ(names[TenantTable::kOther], "other");
}

TEST(TenantTableTest, EachSlotHoldsItsShareOfAdmission) {
  TenantTable tenants(10, 0.5);
  EXPECT_EQ(tenants.capacity(), 5);
  const int a = tenants.SlotOf("a");
  const int b = tenants.SlotOf("b");
  std::vector<Permit> held;
  for (int i = 0; i < 5; ++i) {
    std::optional<Permit> permit = tenants.TryAdmit(a);
    ASSERT_TRUE(permit.has_value()) << i;
    held.push_back(*std::move(permit));
  }
  EXPECT_FALSE(tenants.TryAdmit(a).has_value());
  EXPECT_EQ(tenants.in_flight(a), 5);
  // Another tenant is not affected...
  EXPECT_TRUE(tenants.TryAdmit(b).has_value());
  // ...and a released read makes room again.
  held.pop_back();
  EXPECT_TRUE(tenants.TryAdmit(a).has_value());
}

TEST(TenantTableTest, AShareNeverRoundsToNothing) {
  EXPECT_EQ(TenantTable(10, 0.01).capacity(), 1);
  EXPECT_EQ(TenantTable(1, 1).capacity(), 1);
  EXPECT_EQ(TenantTable(128, 1).capacity(), 128);
  EXPECT_EQ(TenantTable(128, 0.999).capacity(), 127);
}

TEST(TenantTableTest, ConcurrentNewNamesStayBounded) {
  TenantTable tenants(128, 1);
  std::vector<std::thread> threads;
  std::atomic<int> out_of_range{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int slot = tenants.SlotOf(absl::StrCat("t", t, "-", i % 50));
        if (slot < 0 || slot >= TenantTable::kSlots) out_of_range.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(out_of_range.load(), 0);
  EXPECT_EQ(tenants.Names().size(), static_cast<size_t>(TenantTable::kSlots));
}

}  // namespace
}  // namespace tailgate::hedge
