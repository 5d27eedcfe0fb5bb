#include "experiment/report/json_line.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

TEST(JsonObjectTest, EmptyObject) { EXPECT_EQ(JsonObject().ToString(), "{}"); }

TEST(JsonObjectTest, MembersInInsertionOrder) {
  JsonObject metrics;
  metrics.AddUint("requests", 2000).AddInt("in_flight", -1);
  JsonObject line;
  line.AddString("mode", "hedged")
      .AddBool("warm", true)
      .AddDouble("attempts_per_request", 1.2086, 3)
      .AddMillis("p99_ms", absl::Microseconds(9040))
      .AddNull("p999_ms")
      .AddObject("metrics", metrics);
  EXPECT_EQ(line.ToString(),
            "{\"mode\":\"hedged\",\"warm\":true,"
            "\"attempts_per_request\":1.209,\"p99_ms\":9.040,"
            "\"p999_ms\":null,"
            "\"metrics\":{\"requests\":2000,\"in_flight\":-1}}");
}

TEST(JsonObjectTest, IntegerLists) {
  JsonObject line;
  line.AddIntList("none", {}).AddIntList("some", {3, -1, 0});
  EXPECT_EQ(line.ToString(), "{\"none\":[],\"some\":[3,-1,0]}");
}

TEST(JsonObjectTest, NumberAndObjectLists) {
  JsonObject first;
  first.AddInt("t", 0);
  JsonObject line;
  line.AddDoubleList("shares", {0.5, std::nan(""), 1}, 2)
      .AddDoubleList("none", {}, 3)
      .AddObjectList("per_second", {first, JsonObject()})
      .AddObjectList("empty", {});
  EXPECT_EQ(line.ToString(),
            "{\"shares\":[0.50,null,1.00],\"none\":[],"
            "\"per_second\":[{\"t\":0},{}],\"empty\":[]}");
}

TEST(JsonObjectTest, NonFiniteNumbersAreNull) {
  JsonObject line;
  line.AddDouble("nan", std::numeric_limits<double>::quiet_NaN(), 3)
      .AddDouble("inf", std::numeric_limits<double>::infinity(), 3);
  EXPECT_EQ(line.ToString(), "{\"nan\":null,\"inf\":null}");
}

TEST(JsonObjectTest, StringsAreEscaped) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

}  // namespace
}  // namespace tailgate::experiment
