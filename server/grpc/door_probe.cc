#include "server/grpc/door_probe.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tailgate::server {
namespace {

constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";
// HealthCheckResponse{status: SERVING (1)} and {status: NOT_SERVING (2)}.
constexpr char kServing[] = "\x08\x01";
constexpr char kNotServing[] = "\x08\x02";

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

}  // namespace

DoorProbe::DoorProbe(ListenAddress door, absl::Duration deadline,
                     absl::Duration min_interval)
    : target_(door.ToString()),
      deadline_(deadline),
      min_interval_(min_interval) {}

absl::Status DoorProbe::Check() {
  hedge::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (now - last_probe_ < min_interval_) return last_;
  last_ = Probe();
  last_probe_ = absl::Now();
  return last_;
}

absl::Status DoorProbe::Probe() {
  // A channel of its own with its own subchannel pool: a new connection,
  // as a new client would make, not one the process already holds.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      target_, grpc::InsecureChannelCredentials(), args);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  context.set_wait_for_ready(true);  // connecting is part of the check
  // HealthCheckRequest{service: ""}: no bytes, but a buffer (a ByteBuffer
  // without one is not a message).
  grpc::Slice no_bytes;
  grpc::ByteBuffer request(&no_bytes, 1);
  grpc::ByteBuffer response;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&context, kHealthCheck, grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) {
                   std::lock_guard<std::mutex> guard(mu);
                   status = std::move(s);
                   done = true;
                   done_cv.notify_one();
                 });
  {
    std::unique_lock<std::mutex> guard(mu);
    done_cv.wait(guard, [&] { return done; });
  }
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the gRPC door on ", target_,
                     " did not answer a health check: ",
                     status.error_message()));
  }
  const std::string answer = Bytes(response);
  if (answer != kServing && answer != kNotServing) {
    return absl::UnavailableError(absl::StrCat(
        "the gRPC door on ", target_, " answered a health check oddly"));
  }
  return absl::OkStatus();
}

}  // namespace tailgate::server
