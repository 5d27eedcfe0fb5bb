#include "hedge/transport/coalesce_key.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tailgate::hedge::transport {
namespace {

EngineRead Read(std::string target) {
  EngineRead read;
  read.target = std::move(target);
  return read;
}

EngineRead WithHeaders(std::string target,
                       std::vector<hygiene::HttpHeader> headers) {
  EngineRead read = Read(std::move(target));
  read.headers = std::move(headers);
  return read;
}

TEST(CoalesceKeyTest, SameRequestSameKey) {
  EXPECT_EQ(CoalesceKey(Read("/a?x=1")), CoalesceKey(Read("/a?x=1")));
}

TEST(CoalesceKeyTest, TargetIsComparedByteForByte) {
  EXPECT_NE(CoalesceKey(Read("/a?x=1&y=2")), CoalesceKey(Read("/a?y=2&x=1")));
  EXPECT_NE(CoalesceKey(Read("/a")), CoalesceKey(Read("/A")));
  EXPECT_NE(CoalesceKey(Read("/a%2f")), CoalesceKey(Read("/a/")));
}

TEST(CoalesceKeyTest, MethodCounts) {
  EngineRead head = Read("/a");
  head.head = true;
  EXPECT_NE(CoalesceKey(head), CoalesceKey(Read("/a")));
}

TEST(CoalesceKeyTest, HeaderNamesIgnoreCaseValuesDoNot) {
  EXPECT_EQ(CoalesceKey(WithHeaders("/a", {{"Authorization", "Bearer t"}})),
            CoalesceKey(WithHeaders("/a", {{"AUTHORIZATION", "Bearer t"}})));
  EXPECT_NE(CoalesceKey(WithHeaders("/a", {{"Authorization", "Bearer t"}})),
            CoalesceKey(WithHeaders("/a", {{"Authorization", "bearer t"}})));
  EXPECT_NE(CoalesceKey(WithHeaders("/a", {{"Cookie", "s=1"}})),
            CoalesceKey(WithHeaders("/a", {{"Cookie", "s=2"}})));
  EXPECT_NE(CoalesceKey(WithHeaders("/a", {{"Cookie", "s=1"}})),
            CoalesceKey(Read("/a")));
}

TEST(CoalesceKeyTest, HeaderOrderAndDuplicatesCount) {
  EXPECT_NE(CoalesceKey(WithHeaders("/a", {{"A", "1"}, {"B", "2"}})),
            CoalesceKey(WithHeaders("/a", {{"B", "2"}, {"A", "1"}})));
  EXPECT_NE(CoalesceKey(WithHeaders("/a", {{"A", "1"}})),
            CoalesceKey(WithHeaders("/a", {{"A", "1"}, {"A", "1"}})));
}

// Length prefixes: no split of the same bytes into other fields collides.
TEST(CoalesceKeyTest, FieldsCannotBeShifted) {
  EXPECT_NE(CoalesceKey(WithHeaders("/a", {{"ab", "c"}})),
            CoalesceKey(WithHeaders("/a", {{"a", "bc"}})));
  EXPECT_NE(CoalesceKey(WithHeaders("/a", {{"x", "1:y"}})),
            CoalesceKey(WithHeaders("/a", {{"x", "1"}, {"y", ""}})));
}

TEST(CoalesceKeyTest, HedgeOptionsCount) {
  EngineRead disabled = Read("/a");
  disabled.hedge_disabled = true;
  EngineRead own_delay = Read("/a");
  own_delay.hedge_delay = absl::Milliseconds(5);
  EngineRead other_delay = Read("/a");
  other_delay.hedge_delay = absl::Milliseconds(6);
  EXPECT_NE(CoalesceKey(disabled), CoalesceKey(Read("/a")));
  EXPECT_NE(CoalesceKey(own_delay), CoalesceKey(Read("/a")));
  EXPECT_NE(CoalesceKey(own_delay), CoalesceKey(other_delay));
}

TEST(CoalesceKeyTest, TenantDoesNotCount) {
  EngineRead a = Read("/a");
  a.tenant = "a";
  EngineRead b = Read("/a");
  b.tenant = "b";
  EXPECT_EQ(CoalesceKey(a), CoalesceKey(b));
}

}  // namespace
}  // namespace tailgate::hedge::transport
