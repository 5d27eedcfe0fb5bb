// Reflection v1 through a real loopback server started by StartGrpcServer,
// asked with the v1 stubs as grpcurl would.
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/grpc/reflection/v1/reflection.grpc.pb.h"
#include "proto/tailgate/v1/tailgate.grpc.pb.h"
#include "server/grpc/grpc_server.h"

namespace tailgate::server {
namespace {

namespace reflection = ::grpc::reflection::v1;
using ::testing::ElementsAre;
using ::testing::IsSupersetOf;

class ReflectionV1Test : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<GrpcListener> listener =
        StartGrpcServer(*ParseListenAddress("127.0.0.1:0"), {&service_});
    ASSERT_TRUE(listener.ok()) << listener.status();
    listener_ = *std::move(listener);
    stub_ = reflection::ServerReflection::NewStub(
        grpc::CreateChannel(listener_.address.ToString(),
                            grpc::InsecureChannelCredentials()));
  }

  // Sends every request on one stream; returns the answers in order.
  std::vector<reflection::ServerReflectionResponse> Ask(
      const std::vector<reflection::ServerReflectionRequest>& requests) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    auto stream = stub_->ServerReflectionInfo(&context);
    std::vector<reflection::ServerReflectionResponse> answers;
    for (const auto& request : requests) {
      EXPECT_TRUE(stream->Write(request));
      reflection::ServerReflectionResponse answer;
      EXPECT_TRUE(stream->Read(&answer));
      answers.push_back(std::move(answer));
    }
    stream->WritesDone();
    grpc::Status status = stream->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    return answers;
  }

  static std::vector<std::string> FileNames(
      const reflection::ServerReflectionResponse& answer) {
    std::vector<std::string> names;
    for (const std::string& bytes :
         answer.file_descriptor_response().file_descriptor_proto()) {
      google::protobuf::FileDescriptorProto file;
      EXPECT_TRUE(file.ParseFromString(bytes));
      names.push_back(file.name());
    }
    return names;
  }

  v1::HedgedRead::CallbackService service_;
  GrpcListener listener_;
  std::unique_ptr<reflection::ServerReflection::Stub> stub_;
};

TEST_F(ReflectionV1Test, ListsTheRegisteredServicesWithBothReflections) {
  reflection::ServerReflectionRequest list;
  list.set_host("sidecar");
  list.set_list_services("");
  std::vector<reflection::ServerReflectionResponse> answers = Ask({list});
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].valid_host(), "sidecar");
  EXPECT_TRUE(answers[0].original_request().has_list_services());
  std::vector<std::string> names;
  for (const auto& service : answers[0].list_services_response().service()) {
    names.push_back(service.name());
  }
  EXPECT_THAT(names, IsSupersetOf({"tailgate.v1.HedgedRead",
                                   "grpc.health.v1.Health",
                                   "grpc.reflection.v1.ServerReflection",
                                   "grpc.reflection.v1alpha.ServerReflection"}));
  // Admin is compiled in but not registered on this server.
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("tailgate.v1.Admin")));
}

TEST_F(ReflectionV1Test, DescribesASymbolWithTheFilesItImportsFirst) {
  reflection::ServerReflectionRequest by_symbol;
  by_symbol.set_file_containing_symbol("tailgate.v1.HedgedRead");
  reflection::ServerReflectionRequest by_name;
  by_name.set_file_by_filename("proto/tailgate/v1/tailgate.proto");
  reflection::ServerReflectionRequest by_message;
  by_message.set_file_containing_symbol("tailgate.v1.ReadTrace.latency");
  for (const auto& answer : Ask({by_symbol, by_name, by_message})) {
    EXPECT_THAT(FileNames(answer),
                ElementsAre("google/protobuf/duration.proto",
                            "proto/tailgate/v1/tailgate.proto"));
  }
}

TEST_F(ReflectionV1Test, UnknownNamesAreNotFoundAndTheStreamGoesOn) {
  reflection::ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol("no.such.Service");
  reflection::ServerReflectionRequest file;
  file.set_file_by_filename("no/such.proto");
  reflection::ServerReflectionRequest extension;
  extension.mutable_file_containing_extension()->set_containing_type(
      "tailgate.v1.ReadRequest");
  extension.mutable_file_containing_extension()->set_extension_number(100);
  reflection::ServerReflectionRequest empty;
  reflection::ServerReflectionRequest numbers;
  numbers.set_all_extension_numbers_of_type("tailgate.v1.ReadRequest");
  std::vector<reflection::ServerReflectionResponse> answers =
      Ask({symbol, file, extension, empty, numbers});
  ASSERT_EQ(answers.size(), 5u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(answers[i].error_response().error_code(), grpc::NOT_FOUND) << i;
  }
  // The library's v1alpha words, so that both versions answer alike.
  EXPECT_EQ(answers[0].error_response().error_message(), "Symbol not found.");
  EXPECT_EQ(answers[3].error_response().error_code(), grpc::UNIMPLEMENTED);
  // The last answer is a normal one: errors do not end the stream.
  EXPECT_EQ(answers[4].all_extension_numbers_response().base_type_name(),
            "tailgate.v1.ReadRequest");
  EXPECT_EQ(answers[4].all_extension_numbers_response().extension_number_size(),
            0);
}

}  // namespace
}  // namespace tailgate::server
