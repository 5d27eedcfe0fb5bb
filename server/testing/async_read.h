// AsyncRead: one HedgedRead.Read call on the client callback API, so a test
// can keep a call in flight while it cancels it, drains the server, or
// completes the engine side.
//
// Example:
//   AsyncRead call;
//   call.request.set_path("/item");
//   call.Start(*stub);
//   ... ASSERT_TRUE(call.Wait()); EXPECT_TRUE(call.status.ok());
//
// Thread safety: Start once; read status/response only after Wait returned
// true.

#ifndef TAILGATE_SERVER_TESTING_ASYNC_READ_H_
#define TAILGATE_SERVER_TESTING_ASYNC_READ_H_

#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"

namespace tailgate::server::testing {

struct AsyncRead {
  void Start(v1::HedgedRead::Stub& stub) {
    stub.async()->Read(&context, &request, &response,
                       [this](grpc::Status result) {
                         status = std::move(result);
                         done.Notify();
                       });
  }

  // True once the call has ended.
  bool Wait(absl::Duration timeout = absl::Seconds(10)) {
    return done.WaitForNotificationWithTimeout(timeout);
  }

  grpc::ClientContext context;
  v1::ReadRequest request;
  v1::ReadResponse response;
  grpc::Status status;
  absl::Notification done;
};

}  // namespace tailgate::server::testing

#endif  // TAILGATE_SERVER_TESTING_ASYNC_READ_H_
