// The read door (--read_listen) through the real binary, with a grpc++
// HedgedRead stub, against loopback replicas: its answers and its error
// statuses are the --listen server's, field for field and message for
// message; what it does not serve is UNIMPLEMENTED; its request limits.
// Limits in flight, cancels, concurrency and the drain are in
// read_door_limits_e2e_test.cc.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/testing/raw_grpc.h"
#include "tests/e2e/read_door_fixture.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

using ::tailgate::server::testing::HealthCheck;
using ::tailgate::server::testing::kServing;

// `response` without what differs between two reads of the same thing:
// the measured latency and the replica's Date header.
std::string Comparable(v1::ReadResponse response) {
  response.mutable_trace()->clear_latency();
  v1::ReadResponse kept = response;
  kept.clear_headers();
  for (const v1::Header& header : response.headers()) {
    if (!absl::EqualsIgnoreCase(header.name(), "Date")) {
      *kept.add_headers() = header;
    }
  }
  return kept.DebugString();
}

TEST_F(ReadDoorE2eTest, GetAndHeadAreAnsweredAsTheListenDoorAnswersThem) {
  ReplicaResponse answer = Body("0123456789");
  answer.status = 203;
  answer.headers = {{"X-Replica", "one"}, {"Cache-Control", "max-age=5"}};
  Replica& replica = AddReplica(Always(answer));
  StartDoor({"--hedge_fraction=0"});

  for (const v1::Method method : {v1::METHOD_GET, v1::METHOD_HEAD}) {
    SCOPED_TRACE(v1::Method_Name(method));
    v1::ReadRequest request;
    request.set_path("/item?id=7");
    request.set_method(method);
    v1::Header* header = request.add_headers();
    header->set_name("X-Trace");
    header->set_value("abc");
    v1::ReadResponse from_door, from_listen;
    const grpc::Status door = DoorRead(request, &from_door);
    ASSERT_TRUE(door.ok()) << door.error_code() << " " << door.error_message();
    const grpc::Status listen = Read(request, &from_listen);
    ASSERT_TRUE(listen.ok()) << listen.error_message();

    EXPECT_EQ(from_door.status(), 203);
    EXPECT_EQ(from_door.body(), method == v1::METHOD_HEAD ? "" : "0123456789");
    EXPECT_EQ(from_door.trace().attempts(), 1u);
    EXPECT_EQ(from_door.trace().replica(), replica.url());
    EXPECT_GT(from_door.trace().latency().nanos() +
                  from_door.trace().latency().seconds(),
              0);
    bool forwarded = false;
    for (const v1::Header& h : from_door.headers()) {
      forwarded = forwarded || (absl::EqualsIgnoreCase(h.name(), "X-Replica") &&
                                h.value() == "one");
    }
    EXPECT_TRUE(forwarded) << from_door.DebugString();
    EXPECT_EQ(Comparable(from_door), Comparable(from_listen));
  }
  // Each door's read reached the replica as asked.
  const std::vector<ReplicaRequest> seen = replica.requests();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[2].method, "HEAD");
  for (const ReplicaRequest& request : seen) {
    EXPECT_EQ(request.uri, "/item?id=7");
    bool trace = false;
    for (const auto& [name, value] : request.headers) {
      trace = trace || (name == "X-Trace" && value == "abc");
    }
    EXPECT_TRUE(trace);
  }
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.requests(), 4u);
  EXPECT_EQ(stats.in_flight(), 0);
}

// Every error class a read can end in: the door's code and message are the
// --listen server's, and they are the ones tailgate.proto promises.
TEST_F(ReadDoorE2eTest, ErrorsCarryTheListenDoorsCodeAndMessage) {
  AddReplica([](const ReplicaRequest& request) {
    ReplicaResponse response = Body(std::string(100, 'x'));
    if (request.uri == "/hang") response.fault = ReplicaResponse::Fault::kHang;
    if (request.uri == "/reset") {
      response.fault = ReplicaResponse::Fault::kResetAtOnce;
    }
    return response;
  });
  StartDoor({"--hedge_fraction=0", "--max_response_bytes=50", "--timeout=300ms",
             "--failure_threshold=1000"});
  struct Case {
    std::string label;
    v1::ReadRequest request;
    grpc::StatusCode code;
    std::string message_has;
  };
  std::vector<Case> cases;
  const auto add = [&cases](std::string label, std::string path,
                            grpc::StatusCode code, std::string has) {
    Case c{std::move(label), {}, code, std::move(has)};
    c.request.set_path(std::move(path));
    cases.push_back(std::move(c));
    return &cases.back().request;
  };
  add("no leading slash", "no-slash", grpc::StatusCode::INVALID_ARGUMENT,
      "path must start with \"/\"");
  add("LF in path", "/a\nb", grpc::StatusCode::INVALID_ARGUMENT,
      "path contains a control character");
  add("space in path", "/a b", grpc::StatusCode::INVALID_ARGUMENT,
      "path contains a space");
  v1::Header* host =
      add("Host header", "/ok", grpc::StatusCode::INVALID_ARGUMENT,
          "headers[0] \"Host\" is not allowed")
          ->add_headers();
  host->set_name("Host");
  host->set_value("elsewhere");
  add("method out of range", "/ok", grpc::StatusCode::INVALID_ARGUMENT,
      "method has unknown value 7")
      ->set_method(static_cast<v1::Method>(7));
  add("bad tenant", "/ok", grpc::StatusCode::INVALID_ARGUMENT, "tenant")
      ->set_tenant("no spaces allowed");
  add("unknown upstream", "/ok", grpc::StatusCode::NOT_FOUND,
      "unknown upstream \"nowhere\"")
      ->set_upstream("nowhere");
  add("over max_response_bytes", "/big", grpc::StatusCode::RESOURCE_EXHAUSTED,
      "max_response_bytes (50)");
  add("every attempt failed", "/reset", grpc::StatusCode::UNAVAILABLE,
      "every attempt failed");
  add("the sidecar's timeout", "/hang", grpc::StatusCode::DEADLINE_EXCEEDED,
      "the sidecar's timeout (300ms)");

  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    v1::ReadResponse from_door, from_listen;
    const grpc::Status door = DoorRead(c.request, &from_door);
    const grpc::Status listen = Read(c.request, &from_listen);
    EXPECT_EQ(door.error_code(), c.code) << door.error_message();
    EXPECT_TRUE(absl::StrContains(door.error_message(), c.message_has))
        << door.error_message();
    EXPECT_EQ(door.error_code(), listen.error_code());
    EXPECT_EQ(door.error_message(), listen.error_message());
  }
  // Both doors' refusals were counted, the same way.
  const v1::GetStatsResponse stats = Stats();
  EXPECT_EQ(stats.rejected(), 2u * 7u);  // six invalid, one unknown upstream
  EXPECT_EQ(stats.timeouts(), 2u);
}

// A client deadline shorter than the replica's answer: the door hands the
// deadline (grpc-timeout) to the engine, which ends the read as a timeout;
// the client's cancel at its own deadline is not taken for a caller's
// cancel, and the attempt is aborted.
TEST_F(ReadDoorE2eTest, AShortClientDeadlineIsATimeout) {
  Replica& replica = AddReplica(Always(Body("late", absl::Seconds(20))));
  StartDoor({"--hedge_fraction=0", "--timeout=30s"});
  v1::ReadRequest request;
  request.set_path("/slow");
  v1::ReadResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status =
      DoorRead(request, &response, absl::Milliseconds(300));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << status.error_message();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(replica.WaitForDisconnectsBeforeResponse(1, kWait));
  const v1::GetStatsResponse stats = StatsWhen(
      [](const v1::GetStatsResponse& s) { return s.in_flight() == 0; });
  EXPECT_EQ(stats.in_flight(), 0);
  EXPECT_EQ(stats.timeouts(), 1u);
  EXPECT_EQ(stats.cancelled(), 0u);
}

// The door serves HedgedRead/Read only: health, Admin and anything else
// are UNIMPLEMENTED, on a connection that goes on serving reads.
TEST_F(ReadDoorE2eTest, OtherMethodsAreUnimplemented) {
  Replica& replica = AddReplica(Always(Body("ok")));
  StartDoor({"--hedge_fraction=0"});
  // The same questions on --listen are answered: it is the door that says
  // no.
  absl::StatusOr<int> listen_health = HealthCheck(channel_, "");
  ASSERT_TRUE(listen_health.ok()) << listen_health.status();
  EXPECT_EQ(*listen_health, kServing);

  const absl::StatusOr<int> health = HealthCheck(door_channel_, "");
  EXPECT_EQ(health.status().code(), absl::StatusCode::kUnimplemented)
      << health.status();

  std::unique_ptr<v1::Admin::Stub> admin = v1::Admin::NewStub(door_channel_);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  v1::GetStatsResponse stats;
  const grpc::Status status = admin->GetStats(&context, {}, &stats);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_TRUE(
      absl::StrContains(status.error_message(), "/tailgate.v1.Admin/GetStats"))
      << status.error_message();

  v1::ReadResponse response;
  const grpc::Status read = DoorRead("/after", &response);
  ASSERT_TRUE(read.ok()) << read.error_message();
  EXPECT_EQ(response.body(), "ok");
  EXPECT_EQ(replica.requests_received(), 1);
  EXPECT_EQ(Stats().requests(), 1u);
}

// A ReadRequest over 64 KiB (a huge header value) is refused before it
// becomes a read, on both doors, naming the limit; the connection goes on.
TEST_F(ReadDoorE2eTest, ARequestMessageOver64KibIsResourceExhausted) {
  Replica& replica = AddReplica(Always(Body("ok")));
  StartDoor({"--hedge_fraction=0"});
  v1::ReadRequest request;
  request.set_path("/x");
  v1::Header* header = request.add_headers();
  header->set_name("X-Huge");
  header->set_value(std::string(70 * 1024, 'h'));
  ASSERT_GT(request.ByteSizeLong(), 64u * 1024);
  v1::ReadResponse response;
  const grpc::Status door = DoorRead(request, &response);
  EXPECT_EQ(door.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << door.error_message();
  EXPECT_TRUE(absl::StrContains(door.error_message(), "65536"))
      << door.error_message();
  const grpc::Status listen = Read(request, &response);
  EXPECT_EQ(listen.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  // Just under the limit the message is read and judged as a descriptor:
  // too many header bytes for a read (INVALID_ARGUMENT), as on --listen.
  header->set_value(std::string(60 * 1024, 'h'));
  const grpc::Status under = DoorRead(request, &response);
  EXPECT_EQ(under.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << under.error_message();
  const grpc::Status listen_under = Read(request, &response);
  EXPECT_EQ(listen_under.error_code(), under.error_code());
  EXPECT_EQ(listen_under.error_message(), under.error_message());
  // And a large descriptor within every limit (four 7 KiB headers) is a
  // read, every header carried to the replica.
  v1::ReadRequest large;
  large.set_path("/x");
  for (int i = 0; i < 4; ++i) {
    v1::Header* big = large.add_headers();
    big->set_name(absl::StrCat("X-Big-", i));
    big->set_value(std::string(7 * 1024, 'a' + i));
  }
  const grpc::Status read = DoorRead(large, &response);
  ASSERT_TRUE(read.ok()) << read.error_message();
  EXPECT_EQ(response.body(), "ok");
  const std::vector<ReplicaRequest> seen = replica.requests();
  ASSERT_EQ(seen.size(), 1u);
  int carried = 0;
  for (const auto& [name, value] : seen[0].headers) {
    if (absl::StartsWith(name, "X-Big-") && value.size() == 7 * 1024) {
      ++carried;
    }
  }
  EXPECT_EQ(carried, 4);
}

// Request metadata over 16 KiB is refused before it becomes a read.
TEST_F(ReadDoorE2eTest, RequestMetadataOver16KibIsRefused) {
  Replica& replica = AddReplica(Always(Body("ok")));
  StartDoor({"--hedge_fraction=0"});
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  context.AddMetadata("x-big", std::string(20 * 1024, 'm'));
  v1::ReadRequest request;
  request.set_path("/x");
  v1::ReadResponse response;
  const grpc::Status status = door_->Read(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  EXPECT_EQ(replica.requests_received(), 0);
  // Small metadata is fine, on the same channel.
  grpc::ClientContext small;
  small.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  small.AddMetadata("x-small", "s");
  const grpc::Status ok = door_->Read(&small, request, &response);
  ASSERT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(replica.requests_received(), 1);
}

}  // namespace
}  // namespace tailgate::testing
