#include "server/grpc/reflection_v1.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/impl/server_initializer.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "proto/grpc/reflection/v1/reflection.grpc.pb.h"

namespace tailgate::server {
namespace {

namespace reflection = ::grpc::reflection::v1;
using ::google::protobuf::Descriptor;
using ::google::protobuf::DescriptorPool;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::FileDescriptor;

// Adds `file` and, before it, every file it imports (each once) to `out`.
void AddFileWithDependencies(const FileDescriptor* file,
                             absl::flat_hash_set<const FileDescriptor*>& seen,
                             reflection::FileDescriptorResponse& out) {
  if (!seen.insert(file).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) {
    AddFileWithDependencies(file->dependency(i), seen, out);
  }
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(out.add_file_descriptor_proto());
}

void SetError(grpc::StatusCode code, std::string message,
              reflection::ServerReflectionResponse& response) {
  reflection::ErrorResponse* error = response.mutable_error_response();
  error->set_error_code(code);
  error->set_error_message(std::move(message));
}

// The answer to one request. `services`: the server's registered services.
reflection::ServerReflectionResponse Answer(
    const reflection::ServerReflectionRequest& request,
    const std::vector<std::string>& services) {
  const DescriptorPool& pool = *DescriptorPool::generated_pool();
  reflection::ServerReflectionResponse response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  const FileDescriptor* file = nullptr;
  using Request = reflection::ServerReflectionRequest;
  switch (request.message_request_case()) {
    case Request::kListServices:
      for (const std::string& name : services) {
        response.mutable_list_services_response()->add_service()->set_name(
            name);
      }
      return response;
    case Request::kFileByFilename:
      file = pool.FindFileByName(request.file_by_filename());
      if (file == nullptr) {
        SetError(grpc::NOT_FOUND,
                 absl::StrCat("no file ", request.file_by_filename()),
                 response);
        return response;
      }
      break;
    case Request::kFileContainingSymbol:
      file = pool.FindFileContainingSymbol(request.file_containing_symbol());
      if (file == nullptr) {
        SetError(grpc::NOT_FOUND,
                 absl::StrCat("no symbol ", request.file_containing_symbol()),
                 response);
        return response;
      }
      break;
    case Request::kFileContainingExtension: {
      const auto& wanted = request.file_containing_extension();
      const Descriptor* type = pool.FindMessageTypeByName(
          wanted.containing_type());
      const FieldDescriptor* extension =
          type == nullptr ? nullptr
                          : pool.FindExtensionByNumber(
                                type, wanted.extension_number());
      if (extension == nullptr) {
        SetError(grpc::NOT_FOUND,
                 absl::StrCat("no extension ", wanted.extension_number(),
                              " of ", wanted.containing_type()),
                 response);
        return response;
      }
      file = extension->file();
      break;
    }
    case Request::kAllExtensionNumbersOfType: {
      const Descriptor* type =
          pool.FindMessageTypeByName(request.all_extension_numbers_of_type());
      if (type == nullptr) {
        SetError(grpc::NOT_FOUND,
                 absl::StrCat("no type ",
                              request.all_extension_numbers_of_type()),
                 response);
        return response;
      }
      std::vector<const FieldDescriptor*> extensions;
      pool.FindAllExtensions(type, &extensions);
      auto* numbers = response.mutable_all_extension_numbers_response();
      numbers->set_base_type_name(type->full_name());
      for (const FieldDescriptor* extension : extensions) {
        numbers->add_extension_number(extension->number());
      }
      return response;
    }
    case Request::MESSAGE_REQUEST_NOT_SET:
      SetError(grpc::INVALID_ARGUMENT, "empty ServerReflectionRequest",
               response);
      return response;
  }
  absl::flat_hash_set<const FileDescriptor*> seen;
  AddFileWithDependencies(file, seen,
                          *response.mutable_file_descriptor_response());
  return response;
}

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
    response_ = Answer(request_, services_);
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
