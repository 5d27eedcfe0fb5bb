#include "server/services/reflection_calls.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"

namespace tailgate::server::services {
namespace {

namespace reflection = ::grpc::reflection::v1;
using ::google::protobuf::Descriptor;
using ::google::protobuf::DescriptorPool;
using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::FileDescriptor;
using Request = reflection::ServerReflectionRequest;

// google.rpc.Code values, as error_response carries them.
constexpr int kNotFound = 5;
constexpr int kUnimplemented = 12;

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

void SetError(int code, std::string message,
              reflection::ServerReflectionResponse& response) {
  reflection::ErrorResponse* error = response.mutable_error_response();
  error->set_error_code(code);
  error->set_error_message(std::move(message));
}

// The file a file_* request asks for; null, with the error set, if the pool
// has none.
const FileDescriptor* FileAskedFor(
    const Request& request, reflection::ServerReflectionResponse& response) {
  const DescriptorPool& pool = *DescriptorPool::generated_pool();
  switch (request.message_request_case()) {
    case Request::kFileByFilename: {
      const FileDescriptor* file =
          pool.FindFileByName(request.file_by_filename());
      if (file == nullptr) SetError(kNotFound, "File not found.", response);
      return file;
    }
    case Request::kFileContainingSymbol: {
      const FileDescriptor* file =
          pool.FindFileContainingSymbol(request.file_containing_symbol());
      if (file == nullptr) SetError(kNotFound, "Symbol not found.", response);
      return file;
    }
    case Request::kFileContainingExtension: {
      const auto& wanted = request.file_containing_extension();
      const Descriptor* type =
          pool.FindMessageTypeByName(wanted.containing_type());
      if (type == nullptr) {
        SetError(kNotFound, "Type not found.", response);
        return nullptr;
      }
      const FieldDescriptor* extension =
          pool.FindExtensionByNumber(type, wanted.extension_number());
      if (extension == nullptr) {
        SetError(kNotFound, "Extension not found.", response);
        return nullptr;
      }
      return extension->file();
    }
    default:
      return nullptr;
  }
}

void AnswerExtensionNumbers(const std::string& type_name,
                            reflection::ServerReflectionResponse& response) {
  const DescriptorPool& pool = *DescriptorPool::generated_pool();
  const Descriptor* type = pool.FindMessageTypeByName(type_name);
  if (type == nullptr) {
    SetError(kNotFound, "Type not found.", response);
    return;
  }
  std::vector<const FieldDescriptor*> extensions;
  pool.FindAllExtensions(type, &extensions);
  auto* numbers = response.mutable_all_extension_numbers_response();
  numbers->set_base_type_name(type->full_name());
  for (const FieldDescriptor* extension : extensions) {
    numbers->add_extension_number(extension->number());
  }
}

}  // namespace

reflection::ServerReflectionResponse AnswerReflection(
    const Request& request, absl::Span<const std::string> services) {
  reflection::ServerReflectionResponse response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  switch (request.message_request_case()) {
    case Request::kListServices:
      for (const std::string& name : services) {
        response.mutable_list_services_response()->add_service()->set_name(
            name);
      }
      break;
    case Request::kAllExtensionNumbersOfType:
      AnswerExtensionNumbers(request.all_extension_numbers_of_type(),
                             response);
      break;
    case Request::kFileByFilename:
    case Request::kFileContainingSymbol:
    case Request::kFileContainingExtension:
      if (const FileDescriptor* file = FileAskedFor(request, response)) {
        absl::flat_hash_set<const FileDescriptor*> seen;
        AddFileWithDependencies(file, seen,
                                *response.mutable_file_descriptor_response());
      }
      break;
    case Request::MESSAGE_REQUEST_NOT_SET:
      SetError(kUnimplemented, "The request is not implemented.", response);
      break;
  }
  return response;
}

absl::StatusOr<std::string> AnswerReflection(
    absl::string_view request, absl::Span<const std::string> services) {
  Request parsed;
  if (!parsed.ParseFromArray(request.data(), static_cast<int>(request.size()))) {
    return absl::InvalidArgumentError(
        "the request message is not a ServerReflectionRequest");
  }
  return AnswerReflection(parsed, services).SerializeAsString();
}

}  // namespace tailgate::server::services
