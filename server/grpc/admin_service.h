// AdminService: tailgate.v1.Admin on the gRPC callback API.
//
//   GetStats    totals since start from the engine's snapshot plus the
//               server's rejections; amplification = attempts / requests
//               (0 before any read).
//   GetMetrics  the Prometheus exposition, the same text as GET /metrics.
//
// Both answer inline: a snapshot is a few atomic loads, so the gRPC thread
// is never held.
//
// Thread safety: gRPC calls the methods from any of its threads. The engine
// and rejections must outlive the service.

#ifndef TAILGATE_SERVER_GRPC_ADMIN_SERVICE_H_
#define TAILGATE_SERVER_GRPC_ADMIN_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <functional>

#include "hedge/transport/engine.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/observability/metrics.h"
#include "server/read/rejections.h"
#include "server/version/build_info.h"

namespace tailgate::server {

class AdminService final : public v1::Admin::CallbackService {
 public:
  // `reloads` (may be empty: none counted) gives the configuration
  // reload counts; called from gRPC threads. `build` is what
  // tailgate_build_info says.
  AdminService(const hedge::Engine& engine, const Rejections& rejections,
               std::function<ReloadSnapshot()> reloads = nullptr,
               BuildInfo build = {});

  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const v1::GetStatsRequest* request,
                                     v1::GetStatsResponse* response) override;
  grpc::ServerUnaryReactor* GetMetrics(
      grpc::CallbackServerContext* context,
      const v1::GetMetricsRequest* request,
      v1::GetMetricsResponse* response) override;

 private:
  // Constant after construction.
  const hedge::Engine& engine_;
  const Rejections& rejections_;
  const std::function<ReloadSnapshot()> reloads_;
  const BuildInfo build_;

  ReloadSnapshot Reloads() const {
    return reloads_ ? reloads_() : ReloadSnapshot();
  }
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_GRPC_ADMIN_SERVICE_H_
