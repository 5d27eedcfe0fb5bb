#include "client/client.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "client/admin_client.h"
#include "client/testing/fake_sidecar.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate {
namespace {

using ::testing::ElementsAre;
using testing::FakeSidecar;
using ::testing::HasSubstr;

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = FakeSidecar::Start();
    ASSERT_NE(fake_, nullptr);
    absl::StatusOr<std::unique_ptr<Client>> client =
        Client::Connect(fake_->target());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  std::unique_ptr<FakeSidecar> fake_;
  std::unique_ptr<Client> client_;
};

ReadRequest Get(std::string path) {
  ReadRequest request;
  request.path = std::move(path);
  return request;
}

TEST_F(ClientTest, ReadReturnsTheUpstreamAnswer) {
  absl::StatusOr<ReadResponse> response = client_->Read(Get("/hello"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "hello from /hello\n");
  EXPECT_THAT(response->headers,
              ElementsAre(Header{"content-type", "text/plain"},
                          Header{"x-fake", "yes"}));
  EXPECT_EQ(response->trace.attempts, 1u);
  EXPECT_FALSE(response->trace.hedged);
  EXPECT_FALSE(response->trace.hedge_won);
  EXPECT_EQ(response->trace.replica, testing::kPrimaryReplica);
  EXPECT_EQ(response->trace.latency, absl::Milliseconds(3));
}

TEST_F(ClientTest, ReadReturnsTheTraceOfAHedge) {
  absl::StatusOr<ReadResponse> response = client_->Read(Get("/hedged"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->trace.attempts, 2u);
  EXPECT_TRUE(response->trace.hedged);
  EXPECT_TRUE(response->trace.hedge_won);
  EXPECT_EQ(response->trace.replica, testing::kHedgeReplica);
  EXPECT_EQ(response->trace.latency, absl::Microseconds(12500));
}

TEST_F(ClientTest, BodyIsBinarySafe) {
  absl::StatusOr<ReadResponse> response = client_->Read(Get("/binary"));
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->body.size(), 256u);
  for (int byte = 0; byte < 256; ++byte) {
    EXPECT_EQ(static_cast<unsigned char>(response->body[byte]), byte);
  }
}

TEST_F(ClientTest, HttpErrorsAreAnswersNotStatuses) {
  for (int status : {404, 503}) {
    absl::StatusOr<ReadResponse> response =
        client_->Read(Get(absl::StrCat("/status/", status)));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, status);
    EXPECT_EQ(response->body, absl::StrCat("status ", status, "\n"));
  }
}

TEST_F(ClientTest, ReadSendsTheWholeDescriptor) {
  ReadRequest request = Get("/p/a%2Fb?q=1");
  request.method = Method::kHead;
  request.headers = {{"Accept", "text/plain"}, {"X-Trace", "abc"}};
  request.upstream = "eu";
  request.disable_hedge = true;
  request.hedge_delay = absl::Milliseconds(1500);
  ASSERT_TRUE(client_->Read(request).ok());

  const v1::ReadRequest sent = fake_->last_request();
  EXPECT_EQ(sent.path(), "/p/a%2Fb?q=1");
  EXPECT_EQ(sent.method(), v1::METHOD_HEAD);
  ASSERT_EQ(sent.headers_size(), 2);
  EXPECT_EQ(sent.headers(0).name(), "Accept");
  EXPECT_EQ(sent.headers(0).value(), "text/plain");
  EXPECT_EQ(sent.headers(1).name(), "X-Trace");
  EXPECT_EQ(sent.headers(1).value(), "abc");
  EXPECT_EQ(sent.upstream(), "eu");
  EXPECT_TRUE(sent.hedge().disable());
  EXPECT_EQ(sent.hedge().delay().seconds(), 1);
  EXPECT_EQ(sent.hedge().delay().nanos(), 500000000);
}

TEST_F(ClientTest, DefaultsLeaveHedgeOptionsUnset) {
  ASSERT_TRUE(client_->Read(Get("/x")).ok());
  const v1::ReadRequest sent = fake_->last_request();
  EXPECT_EQ(sent.method(), v1::METHOD_GET);
  EXPECT_FALSE(sent.has_hedge());
  EXPECT_EQ(sent.upstream(), "");
}

TEST_F(ClientTest, InfiniteHedgeDelayIsRejectedBeforeSending) {
  ReadRequest request = Get("/never-sent");
  request.hedge_delay = absl::InfiniteDuration();
  absl::StatusOr<ReadResponse> response = client_->Read(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(response.status().message(), HasSubstr("hedge_delay"));
  EXPECT_EQ(fake_->last_request().path(), "");
}

class ErrorMappingTest
    : public ClientTest,
      public ::testing::WithParamInterface<absl::StatusCode> {};

TEST_P(ErrorMappingTest, KeepsCodeAndMessage) {
  const std::string name = absl::StatusCodeToString(GetParam());
  absl::StatusOr<ReadResponse> response =
      client_->Read(Get(absl::StrCat("/grpc/", name)));
  EXPECT_EQ(response.status(),
            absl::Status(GetParam(), absl::StrCat("fake ", name)));
}

INSTANTIATE_TEST_SUITE_P(
    AllErrorClasses, ErrorMappingTest,
    ::testing::Values(
        absl::StatusCode::kInvalidArgument, absl::StatusCode::kNotFound,
        absl::StatusCode::kResourceExhausted, absl::StatusCode::kUnavailable,
        absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kCancelled,
        absl::StatusCode::kInternal, absl::StatusCode::kUnknown),
    [](const ::testing::TestParamInfo<absl::StatusCode>& info) {
      return absl::StatusCodeToString(info.param);
    });

TEST_F(ClientTest, PerCallDeadlineEndsAHangingRead) {
  ReadRequest request = Get("/hang");
  request.deadline = absl::Milliseconds(100);
  const absl::Time start = absl::Now();
  absl::StatusOr<ReadResponse> response = client_->Read(request);
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded);
  // gRPC 1.51 keeps its timers in whole milliseconds on its own clock, and
  // a deadline has been seen to expire 0.8 ms before absl::Now() says it
  // should (under ASan): allow 2 ms. A wrong deadline (the 5 s default, or
  // none) still fails one bound or the other.
  constexpr absl::Duration kGrpcTimerSlack = absl::Milliseconds(2);
  EXPECT_GE(elapsed, request.deadline - kGrpcTimerSlack);
  EXPECT_LT(elapsed, absl::Seconds(3));
}

TEST_F(ClientTest, DefaultDeadlineAppliesWhenTheRequestSetsNone) {
  ClientOptions options;
  options.default_deadline = absl::Milliseconds(50);
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(fake_->target(), options);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->Read(Get("/hang")).status().code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST_F(ClientTest, ReadAsyncRunsTheCallbackOnAnotherThread) {
  absl::Notification done;
  absl::StatusOr<ReadResponse> result;
  std::thread::id callback_thread;
  client_->ReadAsync(Get("/async"), [&](absl::StatusOr<ReadResponse> r) {
    result = std::move(r);
    callback_thread = std::this_thread::get_id();
    done.Notify();
  });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->body, "hello from /async\n");
  EXPECT_NE(callback_thread, std::this_thread::get_id());
}

TEST_F(ClientTest, ManyConcurrentAsyncReadsEachCompleteOnce) {
  constexpr int kReads = 64;
  absl::BlockingCounter remaining(kReads);
  std::atomic<int> ok{0};
  for (int i = 0; i < kReads; ++i) {
    const std::string path = absl::StrCat("/r/", i);
    client_->ReadAsync(Get(path), [&, path](absl::StatusOr<ReadResponse> r) {
      if (r.ok() && r->body == absl::StrCat("hello from ", path, "\n")) ++ok;
      remaining.DecrementCount();
    });
  }
  remaining.Wait();
  EXPECT_EQ(ok.load(), kReads);
}

TEST_F(ClientTest, AsyncErrorsKeepTheirCode) {
  absl::Notification done;
  absl::Status status;
  client_->ReadAsync(Get("/grpc/RESOURCE_EXHAUSTED"),
                     [&](absl::StatusOr<ReadResponse> r) {
                       status = r.status();
                       done.Notify();
                     });
  done.WaitForNotification();
  EXPECT_EQ(status, absl::ResourceExhaustedError("fake RESOURCE_EXHAUSTED"));
}

TEST_F(ClientTest, DestroyingTheClientCancelsReadsInFlight) {
  absl::Notification done;
  absl::Status status;
  ReadRequest request = Get("/hang");
  request.deadline = absl::InfiniteDuration();
  client_->ReadAsync(request, [&](absl::StatusOr<ReadResponse> r) {
    status = r.status();
    done.Notify();
  });
  client_.reset();  // returns only after the callback has run
  EXPECT_TRUE(done.HasBeenNotified());
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

TEST(ConnectTest, RejectsAnEmptyTarget) {
  EXPECT_EQ(Client::Connect("").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AdminClient::Connect(" ").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The client port the fake saw the read of `client` come from.
std::string PeerOf(Client& client, const FakeSidecar& fake) {
  ReadRequest request;
  request.path = "/peer";
  EXPECT_TRUE(client.Read(request).ok());
  return fake.last_peer();
}

TEST(ConnectTest, OwnConnectionIsNotSharedWithOtherClients) {
  std::unique_ptr<FakeSidecar> fake = FakeSidecar::Start();
  ASSERT_NE(fake, nullptr);
  ClientOptions shared;
  absl::StatusOr<std::unique_ptr<Client>> a =
      Client::Connect(fake->target(), shared);
  absl::StatusOr<std::unique_ptr<Client>> b =
      Client::Connect(fake->target(), shared);
  ASSERT_TRUE(a.ok() && b.ok());
  // gRPC's default: the same connection.
  EXPECT_EQ(PeerOf(**a, *fake), PeerOf(**b, *fake));

  ClientOptions own;
  own.own_connection = true;
  absl::StatusOr<std::unique_ptr<Client>> c =
      Client::Connect(fake->target(), own);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(PeerOf(**c, *fake), PeerOf(**a, *fake));
  EXPECT_EQ(PeerOf(**c, *fake), PeerOf(**c, *fake));
}

// A loopback port nobody listens on.
std::string ClosedTarget() {
  std::unique_ptr<FakeSidecar> fake = FakeSidecar::Start();
  return fake->target();  // closed once `fake` is gone
}

TEST(ConnectTest, ConnectTimeoutFailsWithUnavailable) {
  ClientOptions options;
  options.connect_timeout = absl::Milliseconds(200);
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(ClosedTarget(), options);
  EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(client.status().message(), HasSubstr("could not connect"));
}

TEST(ConnectTest, LazyConnectFailsTheReadWithUnavailable) {
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(ClosedTarget());
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->Read(Get("/x")).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(ConnectTest, ReadsOverAUnixSocket) {
  // Not under TEST_TMPDIR: a socket path is limited to 107 bytes.
  char dir[] = "/tmp/tailgate-client-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string socket_path = absl::StrCat(dir, "/sidecar.sock");
  const std::string address = absl::StrCat("unix:", socket_path);
  std::unique_ptr<FakeSidecar> fake = FakeSidecar::Start(address);
  ASSERT_NE(fake, nullptr);
  ClientOptions options;
  options.connect_timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(address, options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ReadResponse> response = (*client)->Read(Get("/unix"));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "hello from /unix\n");
  client->reset();
  fake.reset();
  unlink(socket_path.c_str());
  rmdir(dir);
}

ReadManyRequest Batch(const std::vector<std::string>& paths) {
  ReadManyRequest batch;
  for (const std::string& path : paths) batch.reads.push_back(Get(path));
  return batch;
}

// Runs `batch` to its end: the items in the order they arrived, and the
// call's status.
absl::Status CollectReadMany(Client& client, const ReadManyRequest& batch,
                             std::vector<ReadManyItem>& items) {
  return client.ReadMany(
      batch, [&](ReadManyItem item) { items.push_back(std::move(item)); });
}

TEST_F(ClientTest, ReadManyGivesEachReadItsOwnItem) {
  std::vector<ReadManyItem> items;
  const absl::Status status = CollectReadMany(
      *client_, Batch({"/a", "/status/503", "/grpc/NOT_FOUND", "/binary"}),
      items);
  ASSERT_TRUE(status.ok()) << status;
  // The fake sends the last read first: items come in completion order,
  // and the index says which read each one is.
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].index, 3u);
  EXPECT_EQ(items[3].index, 0u);
  std::vector<const ReadManyItem*> by_index(4, nullptr);
  for (const ReadManyItem& item : items) by_index[item.index] = &item;
  ASSERT_TRUE(by_index[0]->response.ok()) << by_index[0]->response.status();
  EXPECT_EQ(by_index[0]->response->status, 200);
  EXPECT_EQ(by_index[0]->response->body, "hello from /a\n");
  EXPECT_EQ(by_index[0]->response->trace.replica, testing::kPrimaryReplica);
  EXPECT_EQ(by_index[0]->response->trace.latency, absl::Milliseconds(3));
  ASSERT_TRUE(by_index[1]->response.ok());
  EXPECT_EQ(by_index[1]->response->status, 503);  // an answer, not an error
  EXPECT_EQ(by_index[2]->response.status(),
            absl::NotFoundError("fake NOT_FOUND"));
  ASSERT_TRUE(by_index[3]->response.ok());
  EXPECT_EQ(by_index[3]->response->body.size(), 256u);
}

TEST_F(ClientTest, ReadManySendsEveryDescriptorAndTheConcurrencyBound) {
  ReadManyRequest batch = Batch({"/x", "/y"});
  batch.reads[1].method = Method::kHead;
  batch.reads[1].upstream = "eu";
  batch.reads[1].headers = {{"Accept", "text/plain"}};
  batch.reads[1].hedge_delay = absl::Milliseconds(1500);
  batch.max_in_flight = 7;
  std::vector<ReadManyItem> items;
  ASSERT_TRUE(CollectReadMany(*client_, batch, items).ok());
  EXPECT_EQ(items.size(), 2u);
  const v1::ReadManyRequest sent = fake_->last_read_many();
  EXPECT_EQ(sent.max_in_flight(), 7u);
  ASSERT_EQ(sent.reads_size(), 2);
  EXPECT_EQ(sent.reads(0).path(), "/x");
  EXPECT_FALSE(sent.reads(0).has_hedge());
  EXPECT_EQ(sent.reads(1).path(), "/y");
  EXPECT_EQ(sent.reads(1).method(), v1::METHOD_HEAD);
  EXPECT_EQ(sent.reads(1).upstream(), "eu");
  ASSERT_EQ(sent.reads(1).headers_size(), 1);
  EXPECT_EQ(sent.reads(1).headers(0).value(), "text/plain");
  EXPECT_EQ(sent.reads(1).hedge().delay().seconds(), 1);
  EXPECT_EQ(sent.reads(1).hedge().delay().nanos(), 500000000);
}

TEST_F(ClientTest, ReadManyOfNoReadsIsOkWithNoItems) {
  std::vector<ReadManyItem> items;
  EXPECT_TRUE(CollectReadMany(*client_, ReadManyRequest(), items).ok());
  EXPECT_TRUE(items.empty());
}

TEST_F(ClientTest, ReadManyOverTheBatchLimitFailsTheCall) {
  std::vector<std::string> paths(testing::kMaxBatchReads + 1, "/k");
  std::vector<ReadManyItem> items;
  const absl::Status status = CollectReadMany(*client_, Batch(paths), items);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("max_batch_reads"));
  EXPECT_TRUE(items.empty());
}

TEST_F(ClientTest, ReadManyRejectsABadReadBeforeSendingAndNamesIt) {
  ReadManyRequest batch = Batch({"/ok", "/never-sent"});
  batch.reads[1].hedge_delay = absl::InfiniteDuration();
  std::vector<ReadManyItem> items;
  const absl::Status status = CollectReadMany(*client_, batch, items);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("reads[1]: hedge_delay"));
  EXPECT_TRUE(items.empty());
  EXPECT_EQ(fake_->last_read_many().reads_size(), 0);
}

TEST_F(ClientTest, ReadManyDeadlineEndsTheCallAfterTheItemsThatCame) {
  ReadManyRequest batch = Batch({"/hang", "/fast"});
  batch.deadline = absl::Milliseconds(100);
  std::vector<ReadManyItem> items;
  const absl::Time start = absl::Now();
  const absl::Status status = CollectReadMany(*client_, batch, items);
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].index, 1u);
  // The slack of PerCallDeadlineEndsAHangingRead.
  EXPECT_GE(elapsed, batch.deadline - absl::Milliseconds(2));
  EXPECT_LT(elapsed, absl::Seconds(3));
}

TEST_F(ClientTest, ReadManyDefaultDeadlineAppliesWhenTheRequestSetsNone) {
  ClientOptions options;
  options.default_deadline = absl::Milliseconds(50);
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(fake_->target(), options);
  ASSERT_TRUE(client.ok());
  std::vector<ReadManyItem> items;
  EXPECT_EQ(CollectReadMany(**client, Batch({"/hang"}), items).code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST_F(ClientTest, ReadManyItemCallbackCanCancelTheRest) {
  // Items are handed over as they arrive: the first one comes while the
  // /hang read still holds the call open, and cancelling from its callback
  // ends the call.
  Cancellation cancellation;
  ReadManyRequest batch = Batch({"/hang", "/first"});
  batch.deadline = absl::InfiniteDuration();
  batch.cancellation = &cancellation;
  std::vector<size_t> indexes;
  const absl::Status status = client_->ReadMany(batch, [&](ReadManyItem item) {
    indexes.push_back(item.index);
    cancellation.Cancel();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(indexes, ElementsAre(1u));
  EXPECT_TRUE(cancellation.cancelled());
}

TEST_F(ClientTest, ReadManyIsCancelledFromAnotherThread) {
  Cancellation cancellation;
  ReadManyRequest batch = Batch({"/hang"});
  batch.deadline = absl::InfiniteDuration();
  batch.cancellation = &cancellation;
  std::thread canceller([&] {
    // Once the fake has the batch: the call is under way.
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (fake_->last_read_many().reads_size() == 0 && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    cancellation.Cancel();
  });
  std::vector<ReadManyItem> items;
  const absl::Status status = CollectReadMany(*client_, batch, items);
  canceller.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(items.empty());
}

TEST_F(ClientTest, ReadManyWithACancelledCancellationSendsNothing) {
  Cancellation cancellation;
  cancellation.Cancel();
  ReadManyRequest batch = Batch({"/x"});
  batch.cancellation = &cancellation;
  std::vector<ReadManyItem> items;
  EXPECT_EQ(CollectReadMany(*client_, batch, items).code(),
            absl::StatusCode::kCancelled);
  EXPECT_TRUE(items.empty());
  EXPECT_EQ(fake_->last_read_many().reads_size(), 0);
}

TEST_F(ClientTest, ReadManyItemOutsideTheBatchIsInternal) {
  std::vector<ReadManyItem> items;
  const absl::Status status =
      CollectReadMany(*client_, Batch({"/a", "/bad-index"}), items);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("read 2 of a batch of 2"));
}

TEST(ConnectTest, ReadManyOnAClosedPortIsUnavailable) {
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Connect(ClosedTarget());
  ASSERT_TRUE(client.ok());
  std::vector<ReadManyItem> items;
  EXPECT_EQ(CollectReadMany(**client, Batch({"/x"}), items).code(),
            absl::StatusCode::kUnavailable);
}

class AdminClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = FakeSidecar::Start();
    ASSERT_NE(fake_, nullptr);
    absl::StatusOr<std::unique_ptr<AdminClient>> admin =
        AdminClient::Connect(fake_->target());
    ASSERT_TRUE(admin.ok()) << admin.status();
    admin_ = *std::move(admin);
  }

  std::unique_ptr<FakeSidecar> fake_;
  std::unique_ptr<AdminClient> admin_;
};

TEST_F(AdminClientTest, GetStatsMapsEveryField) {
  absl::StatusOr<SidecarStats> stats = admin_->GetStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->requests, 10u);
  EXPECT_EQ(stats->rejected, 1u);
  EXPECT_EQ(stats->attempts, 12u);
  EXPECT_EQ(stats->hedges, 2u);
  EXPECT_EQ(stats->hedge_wins, 1u);
  EXPECT_EQ(stats->timeouts, 3u);
  EXPECT_EQ(stats->backend_failures, 4u);
  EXPECT_EQ(stats->in_flight, 5);
  EXPECT_DOUBLE_EQ(stats->amplification, 1.2);
  EXPECT_DOUBLE_EQ(stats->hedge_credits, 2.5);
  EXPECT_EQ(stats->cancelled, 6u);
  EXPECT_EQ(stats->hedges_skipped, 7u);
  ASSERT_EQ(stats->replicas.size(), 2u);
  const ReplicaStats& b = stats->replicas[1];
  EXPECT_EQ(b.url, testing::kHedgeReplica);
  EXPECT_EQ(b.circuit, CircuitState::kHalfOpen);
  EXPECT_EQ(b.generation, 2u);
  EXPECT_EQ(b.attempts, 4u);
  EXPECT_EQ(b.failures, 3u);
  EXPECT_EQ(b.in_flight, 0);
  EXPECT_EQ(b.state, ReplicaState::kProbing);
  EXPECT_EQ(b.ejections_consecutive, 1u);
  EXPECT_EQ(b.ejections_failure_rate, 2u);
  EXPECT_EQ(b.ejections_probe, 3u);
  EXPECT_EQ(b.give_ups, 4u);
  EXPECT_EQ(b.probes_passed, 1u);
  EXPECT_EQ(b.probes_failed, 3u);
  EXPECT_DOUBLE_EQ(b.weight, 0.25);
  EXPECT_DOUBLE_EQ(b.cost_seconds, 0.5);
  EXPECT_EQ(b.latency, absl::Milliseconds(40));
  EXPECT_DOUBLE_EQ(b.failure_rate, 0.75);
  EXPECT_EQ(b.ejected_for, absl::Seconds(4));
  EXPECT_TRUE(b.backed_off);
  EXPECT_EQ(b.back_off_remaining, absl::Seconds(3));
  EXPECT_EQ(b.overload_answers_429, 5u);
  EXPECT_EQ(b.overload_answers_503, 6u);
  EXPECT_FALSE(stats->replicas[0].backed_off);
  EXPECT_EQ(stats->replicas[0].circuit, CircuitState::kClosed);
  // Sent with its circuit only (as an older sidecar does): the state is
  // the circuit's.
  EXPECT_EQ(stats->replicas[0].state, ReplicaState::kServing);
  ASSERT_EQ(stats->upstreams.size(), 1u);
  EXPECT_EQ(stats->upstreams[0].name, "");
  EXPECT_EQ(stats->upstreams[0].give_up_after, absl::Milliseconds(60));
  EXPECT_TRUE(stats->upstreams[0].give_up_learned);
  EXPECT_EQ(stats->upstreams[0].give_up_fallbacks, 6u);
}

TEST_F(AdminClientTest, GetMetricsReturnsThePrometheusText) {
  absl::StatusOr<MetricsText> metrics = admin_->GetMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->content_type, testing::kMetricsContentType);
  EXPECT_EQ(metrics->text, testing::kMetricsText);
}

TEST(AdminConnectTest, UnreachableAdminIsUnavailable) {
  absl::StatusOr<std::unique_ptr<AdminClient>> admin =
      AdminClient::Connect(ClosedTarget());
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ((*admin)->GetStats().status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(ReplicaStateNameTest, NamesEveryState) {
  EXPECT_EQ(ReplicaStateName(ReplicaState::kServing), "serving");
  EXPECT_EQ(ReplicaStateName(ReplicaState::kEjected), "ejected");
  EXPECT_EQ(ReplicaStateName(ReplicaState::kProbing), "probing");
  EXPECT_EQ(ReplicaStateName(ReplicaState::kUnspecified), "unspecified");
}

TEST(CircuitStateNameTest, NamesEveryState) {
  EXPECT_EQ(CircuitStateName(CircuitState::kClosed), "closed");
  EXPECT_EQ(CircuitStateName(CircuitState::kOpen), "open");
  EXPECT_EQ(CircuitStateName(CircuitState::kHalfOpen), "half-open");
  EXPECT_EQ(CircuitStateName(CircuitState::kUnspecified), "unspecified");
}

}  // namespace
}  // namespace tailgate
