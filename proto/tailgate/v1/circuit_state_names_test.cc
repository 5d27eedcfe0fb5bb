// CircuitState's two names per value: callers of either name, in code, JSON
// or on the wire, read the same state, and what the sidecar prints in JSON is
// the name existing readers know.
#include <google/protobuf/util/json_util.h>

#include <string>

#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.pb.h"

namespace tailgate::v1 {
namespace {

TEST(CircuitStateNamesTest, BothNamesAreOneNumber) {
  EXPECT_EQ(CIRCUIT_STATE_CLOSED, 1);
  EXPECT_EQ(CIRCUIT_STATE_OPEN, 2);
  EXPECT_EQ(CIRCUIT_STATE_HALF_OPEN, 3);
  EXPECT_EQ(CircuitState_Name(CIRCUIT_STATE_OPEN), "CIRCUIT_OPEN");
}

TEST(CircuitStateNamesTest, JsonPrintsTheFirstNameAndParsesBoth) {
  ReplicaStats stats;
  stats.set_circuit(CIRCUIT_STATE_HALF_OPEN);
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(stats, &json).ok());
  EXPECT_NE(json.find("\"circuit\":\"CIRCUIT_HALF_OPEN\""), std::string::npos)
      << json;
  for (const char* text :
       {R"({"circuit":"CIRCUIT_OPEN"})", R"({"circuit":"CIRCUIT_STATE_OPEN"})",
        R"({"circuit":2})"}) {
    ReplicaStats parsed;
    ASSERT_TRUE(
        google::protobuf::util::JsonStringToMessage(text, &parsed).ok())
        << text;
    EXPECT_EQ(parsed.circuit(), CIRCUIT_STATE_OPEN) << text;
  }
}

TEST(CircuitStateNamesTest, WireFormIsTheNumber) {
  ReplicaStats stats;
  stats.set_circuit(CIRCUIT_STATE_CLOSED);
  std::string bytes = stats.SerializeAsString();
  ReplicaStats parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(parsed.circuit(), 1);
}

// ReplicaState names the same states for operators, with the same numbers.
TEST(CircuitStateNamesTest, ReplicaStateHasTheCircuitNumbers) {
  EXPECT_EQ(static_cast<int>(REPLICA_STATE_SERVING),
            static_cast<int>(CIRCUIT_STATE_CLOSED));
  EXPECT_EQ(static_cast<int>(REPLICA_STATE_EJECTED),
            static_cast<int>(CIRCUIT_STATE_OPEN));
  EXPECT_EQ(static_cast<int>(REPLICA_STATE_PROBING),
            static_cast<int>(CIRCUIT_STATE_HALF_OPEN));
}

}  // namespace
}  // namespace tailgate::v1
