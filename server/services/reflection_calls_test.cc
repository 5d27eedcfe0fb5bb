#include "server/services/reflection_calls.h"

#include <google/protobuf/descriptor.pb.h>

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/tailgate/v1/tailgate.pb.h"

namespace tailgate::server::services {
namespace {

namespace reflection = ::grpc::reflection::v1;
using ::testing::ElementsAre;

const std::vector<std::string> kServices = {"tailgate.v1.HedgedRead",
                                            "grpc.health.v1.Health"};

std::vector<std::string> FileNames(
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

TEST(ReflectionCallsTest, ListsTheServicesGivenAndEchoesTheRequest) {
  reflection::ServerReflectionRequest list;
  list.set_host("sidecar");
  list.set_list_services("");
  const reflection::ServerReflectionResponse answer =
      AnswerReflection(list, kServices);
  EXPECT_EQ(answer.valid_host(), "sidecar");
  EXPECT_TRUE(answer.original_request().has_list_services());
  std::vector<std::string> names;
  for (const auto& service : answer.list_services_response().service()) {
    names.push_back(service.name());
  }
  EXPECT_EQ(names, kServices);
}

TEST(ReflectionCallsTest, DescribesFilesWithTheFilesTheyImportFirst) {
  // Linked in, so in the generated pool.
  v1::ReadRequest linked;
  (void)linked;
  reflection::ServerReflectionRequest by_symbol;
  by_symbol.set_file_containing_symbol("tailgate.v1.HedgedRead");
  reflection::ServerReflectionRequest by_name;
  by_name.set_file_by_filename("proto/tailgate/v1/tailgate.proto");
  reflection::ServerReflectionRequest by_field;
  by_field.set_file_containing_symbol("tailgate.v1.ReadTrace.latency");
  for (const auto& request : {by_symbol, by_name, by_field}) {
    EXPECT_THAT(FileNames(AnswerReflection(request, kServices)),
                ElementsAre("google/protobuf/duration.proto",
                            "proto/tailgate/v1/tailgate.proto"));
  }
}

TEST(ReflectionCallsTest, MissesAreAnsweredWithTheLibrarysCodesAndWords) {
  const auto error = [](const reflection::ServerReflectionRequest& request) {
    const reflection::ServerReflectionResponse answer =
        AnswerReflection(request, kServices);
    return std::make_pair(answer.error_response().error_code(),
                          answer.error_response().error_message());
  };
  reflection::ServerReflectionRequest request;
  request.set_file_containing_symbol("no.such.Service");
  EXPECT_EQ(error(request), std::make_pair(5, std::string("Symbol not found.")));
  request.set_file_by_filename("no/such.proto");
  EXPECT_EQ(error(request), std::make_pair(5, std::string("File not found.")));
  request.mutable_file_containing_extension()->set_containing_type("no.Such");
  EXPECT_EQ(error(request), std::make_pair(5, std::string("Type not found.")));
  request.mutable_file_containing_extension()->set_containing_type(
      "tailgate.v1.ReadRequest");
  request.mutable_file_containing_extension()->set_extension_number(100);
  EXPECT_EQ(error(request),
            std::make_pair(5, std::string("Extension not found.")));
  request.set_all_extension_numbers_of_type("no.Such");
  EXPECT_EQ(error(request), std::make_pair(5, std::string("Type not found.")));
  EXPECT_EQ(error(reflection::ServerReflectionRequest()),
            std::make_pair(12, std::string("The request is not implemented.")));
}

TEST(ReflectionCallsTest, ExtensionNumbersOfAKnownType) {
  reflection::ServerReflectionRequest request;
  request.set_all_extension_numbers_of_type("tailgate.v1.ReadRequest");
  const auto answer = AnswerReflection(request, kServices);
  EXPECT_EQ(answer.all_extension_numbers_response().base_type_name(),
            "tailgate.v1.ReadRequest");
  EXPECT_EQ(answer.all_extension_numbers_response().extension_number_size(), 0);
}

TEST(ReflectionCallsTest, SerializedRequestsAreAnsweredSerialized) {
  reflection::ServerReflectionRequest request;
  request.set_list_services("");
  absl::StatusOr<std::string> answer =
      AnswerReflection(request.SerializeAsString(), kServices);
  ASSERT_TRUE(answer.ok()) << answer.status();
  reflection::ServerReflectionResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(*answer));
  EXPECT_EQ(parsed.list_services_response().service_size(), 2);
  EXPECT_EQ(AnswerReflection("\xff", kServices).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tailgate::server::services
