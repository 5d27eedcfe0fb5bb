// FaultyEndpoint: one misbehaving replica of a fault-injection test, which
// the test can heal.
//
// For Fault::kRefuse it is a loopback port where nothing listens, so every
// connect is refused; healing starts a Replica on that port. For every other
// fault it is a Replica running FaultHandler(fault); healing swaps its
// handler, so requests from then on get the healthy answer.
//
// Example:
//   absl::StatusOr<std::unique_ptr<FaultyEndpoint>> endpoint =
//       FaultyEndpoint::Start(Fault::kHang);
//   ... --backends=(*endpoint)->url() ...
//   ASSERT_TRUE((*endpoint)->Heal(Always(Healthy())).ok());
//   EXPECT_EQ((*endpoint)->replica()->requests_received(), 0);
//
// Thread safety: for one thread (the test's main thread). The Replica that
// replica() returns is itself safe from any thread.

#ifndef TAILGATE_TESTS_FAULTS_FAULTY_ENDPOINT_H_
#define TAILGATE_TESTS_FAULTS_FAULTY_ENDPOINT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/faults/fault_case.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {

class FaultyEndpoint {
 public:
  static absl::StatusOr<std::unique_ptr<FaultyEndpoint>> Start(Fault fault);

  FaultyEndpoint(const FaultyEndpoint&) = delete;
  FaultyEndpoint& operator=(const FaultyEndpoint&) = delete;

  // "http://127.0.0.1:PORT"; stays the same when healed.
  const std::string& url() const { return url_; }

  // From now on, requests get `handler`. For kRefuse, starts the replica on
  // the endpoint's port (which another process could have taken since).
  absl::Status Heal(Handler handler);

  // The replica behind the endpoint; nullptr while connections are refused.
  Replica* replica() const { return replica_.get(); }

 private:
  FaultyEndpoint(int port, std::unique_ptr<Replica> replica);

  const int port_;
  const std::string url_;
  std::unique_ptr<Replica> replica_;
};

}  // namespace tailgate::testing

#endif  // TAILGATE_TESTS_FAULTS_FAULTY_ENDPOINT_H_
