#include "server/grpc/reflection_v1.h"

#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/impl/server_initializer.h>

#include <memory>
#include <string>
#include <vector>

#include "proto/grpc/reflection/v1/reflection.grpc.pb.h"
#include "server/services/reflection_calls.h"

namespace tailgate::server {
namespace {

namespace reflection = ::grpc::reflection::v1;

// One stream: read a request, write its answer, until the client is done.
class ReflectionStream final
    : public grpc::ServerBidiReactor<reflection::ServerReflectionRequest,
                                     reflection::ServerReflectionResponse> {
 public:
  explicit ReflectionStream(const std::vector<std::string>& services)
      : services_(services) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client half-closed, or the call ended
      Finish(grpc::Status::OK);
      return;
    }
    response_ = services::AnswerReflection(request_, services_);
    StartWrite(&response_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"));
      return;
    }
    StartRead(&request_);
  }

  void OnDone() override { delete this; }

 private:
  const std::vector<std::string>& services_;
  reflection::ServerReflectionRequest request_;
  reflection::ServerReflectionResponse response_;
};

class ReflectionV1Service final
    : public reflection::ServerReflection::CallbackService {
 public:
  // Called by BuildAndStart, before the server accepts a call.
  void SetServices(const std::vector<std::string>& services) {
    services_ = services;
  }

  grpc::ServerBidiReactor<reflection::ServerReflectionRequest,
                          reflection::ServerReflectionResponse>*
  ServerReflectionInfo(grpc::CallbackServerContext* /*context*/) override {
    return new ReflectionStream(services_);
  }

 private:
  std::vector<std::string> services_;
};

// Registers the service when the server is created and hands it the list of
// registered services once BuildAndStart has registered them all.
class ReflectionV1Plugin final : public grpc::ServerBuilderPlugin {
 public:
  std::string name() override { return "tailgate_reflection_v1"; }
  void InitServer(grpc::ServerInitializer* server) override {
    server->RegisterService(service_);
  }
  void Finish(grpc::ServerInitializer* server) override {
    service_->SetServices(*server->GetServiceList());
  }
  void ChangeArguments(const std::string& /*name*/, void* /*value*/) override {
  }

 private:
  std::shared_ptr<ReflectionV1Service> service_ =
      std::make_shared<ReflectionV1Service>();
};

class ReflectionV1Option final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(
      std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins)
      override {
    plugins->push_back(std::make_unique<ReflectionV1Plugin>());
  }
};

}  // namespace

void AddReflectionV1(grpc::ServerBuilder& builder) {
  builder.SetOption(std::make_unique<ReflectionV1Option>());
}

}  // namespace tailgate::server
