// FakeSidecar: an in-process tailgate.v1.HedgedRead + Admin server on the
// callback API, scripted by the request path, for testing clients.
//
// Read answers by path:
//   /status/N     HTTP status N, body "status N\n"
//   /grpc/CODE    gRPC error CODE (a name such as RESOURCE_EXHAUSTED) with
//                 the message "fake CODE"
//   /hang         no answer until the call is cancelled or its deadline
//                 passes
//   /binary       200, a body holding every byte value 0..255 once
//   /hedged       200, body "hedged\n", the trace of a won hedge
//                 (kHedgedTrace)
//   anything else 200, body "hello from PATH\n" (empty for HEAD)
// Every 2xx answer carries the headers content-type: text/plain and
// x-fake: yes.
// ReadMany answers each read as Read would (a gRPC error becomes its item's
// code and message), and sends the items last read first, so that item
// order is never request order. A batch holding /hang sends the other items,
// then no more until the call is cancelled or its deadline passes. A read
// of /bad-index gets an item whose index is past the batch's end. More than
// kMaxBatchReads reads fail the call with INVALID_ARGUMENT naming the limit.
// Every read's trace, unless said otherwise, is one unhedged attempt on
// kPrimaryReplica taking 3ms. GetStats returns CannedStats(), GetMetrics
// kMetricsText.
//
// Example:
//   std::unique_ptr<FakeSidecar> fake = FakeSidecar::Start();
//   auto client = tailgate::Client::Connect(fake->target());
//
// Thread safety: safe from any thread; gRPC serves calls on its threads.

#ifndef TAILGATE_CLIENT_TESTING_FAKE_SIDECAR_H_
#define TAILGATE_CLIENT_TESTING_FAKE_SIDECAR_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "proto/tailgate/v1/tailgate.pb.h"

namespace tailgate::testing {

inline constexpr char kPrimaryReplica[] = "http://replica-a:8001";
inline constexpr char kHedgeReplica[] = "http://replica-b:8002";
inline constexpr char kMetricsText[] =
    "# TYPE tailgate_requests_total counter\ntailgate_requests_total 7\n";
inline constexpr int kMaxBatchReads = 1000;
inline constexpr char kMetricsContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

// The trace /hedged answers with.
v1::ReadTrace HedgedTrace();

// What GetStats answers.
v1::GetStatsResponse CannedStats();

class FakeSidecar {
 public:
  // Listens on `address` ("127.0.0.1:0", "unix:/path"); null on failure.
  static std::unique_ptr<FakeSidecar> Start(
      const std::string& address = "127.0.0.1:0");

  // Shuts the server down, cancelling hanging calls.
  ~FakeSidecar();

  // A target for Client::Connect (and AdminClient::Connect: both services
  // share the one listener).
  const std::string& target() const { return target_; }

  // The descriptor of the last Read received (empty before any).
  v1::ReadRequest last_request() const;
  // The peer address of the connection it came on ("ipv4:127.0.0.1:PORT").
  std::string last_peer() const;
  // The last ReadMany request received (empty before any).
  v1::ReadManyRequest last_read_many() const;

 private:
  class Services;
  FakeSidecar(std::unique_ptr<Services> services,
              std::unique_ptr<grpc::Server> server, std::string target);

  // Constant after construction.
  const std::unique_ptr<Services> services_;
  const std::unique_ptr<grpc::Server> server_;
  const std::string target_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_CLIENT_TESTING_FAKE_SIDECAR_H_
