// A differential test of --listen's two fronts: the same cases against the
// loop front (--listen_front=loop, the door's own HTTP/2 and services) and
// the gRPC library's server (--listen_front=grpc, the reference), each
// answer decoded and compared: status codes, messages where the library's
// are fixed by the protocol or by its code, and the decoded answers. Read,
// health Check and Watch, server reflection v1 and v1alpha (every kind of
// request), and methods neither serves.
//
// Where the two are known to differ on purpose, the case says so and
// compares only what must agree.

#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/grpc/health/v1/health.pb.h"
#include "proto/grpc/reflection/v1/reflection.pb.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "tests/e2e/tailgate_e2e_fixture.h"
#include "tests/process/tailgate_process.h"
#include "tests/replica/replica.h"

namespace tailgate::testing {
namespace {

namespace health = ::grpc::health::v1;
namespace reflection = ::grpc::reflection::v1;

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

// What one call came to: its status, and its answers as bytes.
struct Outcome {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
  std::vector<std::string> answers;
};

// A call of `method` that sends `requests`, half-closes, and reads up to
// `reads` answers (a Watch never ends by itself: it is cancelled after
// them).
Outcome Call(const std::shared_ptr<grpc::Channel>& channel,
             const std::string& method,
             const std::vector<std::string>& requests, int reads) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kWait));
  grpc::CompletionQueue cq;
  void* const tag = reinterpret_cast<void*>(1);
  const auto await = [&cq] {
    void* got = nullptr;
    bool ok = false;
    return cq.Next(&got, &ok) && ok;
  };
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, method, &cq);
  call->StartCall(tag);
  bool ok = await();
  for (const std::string& request : requests) {
    if (!ok) break;
    call->Write(Buffer(request), tag);
    ok = await();
  }
  if (ok) {
    call->WritesDone(tag);
    ok = await();
  }
  Outcome outcome;
  for (int i = 0; ok && i < reads; ++i) {
    grpc::ByteBuffer answer;
    call->Read(&answer, tag);
    ok = await();
    if (ok) outcome.answers.push_back(Bytes(answer));
  }
  if (ok && static_cast<int>(outcome.answers.size()) == reads) {
    context.TryCancel();  // a stream that goes on (a Watch)
  }
  grpc::Status status;
  call->Finish(&status, tag);
  await();
  outcome.code = status.error_code();
  outcome.message = status.error_message();
  return outcome;
}

std::string HealthRequest(const std::string& service) {
  health::HealthCheckRequest request;
  request.set_service(service);
  return request.SerializeAsString();
}

std::string HealthAnswers(const Outcome& outcome) {
  std::vector<std::string> statuses;
  for (const std::string& bytes : outcome.answers) {
    health::HealthCheckResponse response;
    statuses.push_back(response.ParseFromString(bytes)
                           ? health::HealthCheckResponse::ServingStatus_Name(
                                 response.status())
                           : "unparsed");
  }
  return absl::StrJoin(statuses, ",");
}

// A reflection answer, decoded, with what may come in any order sorted:
// the services listed and the files of a descriptor answer (the library
// sends a file before its imports, the door after them).
std::string ReflectionAnswer(const std::string& bytes) {
  reflection::ServerReflectionResponse response;
  if (!response.ParseFromString(bytes)) return "unparsed";
  std::vector<std::string> items;
  for (const auto& service : response.list_services_response().service()) {
    items.push_back(service.name());
  }
  for (const std::string& file :
       response.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto proto;
    items.push_back(proto.ParseFromString(file)
                        ? absl::StrCat(proto.name(), "(", file.size(), "B)")
                        : "unparsed file");
  }
  // The library's v1alpha repeats, in later answers on a stream, files it
  // sent before (and a file once per request that named it); the door
  // sends a file once per answer. What is listed must agree, not how often.
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  // A request that asks nothing: both answer UNIMPLEMENTED; the library's
  // v1alpha without words, the door saying what is not implemented.
  const int code = response.error_response().error_code();
  const std::string words =
      code == grpc::StatusCode::UNIMPLEMENTED
          ? std::string()
          : response.error_response().error_message();
  const auto& numbers = response.all_extension_numbers_response();
  return absl::StrCat(
      "host=", response.valid_host(),
      " asked=", response.original_request().ShortDebugString(),
      " error=", code, ":", words, " items=",
      absl::StrJoin(items, ","), " extensions_of=", numbers.base_type_name(),
      ":", absl::StrJoin(numbers.extension_number(), ","));
}

std::string ReflectionAnswers(const Outcome& outcome) {
  std::vector<std::string> answers;
  for (const std::string& bytes : outcome.answers) {
    answers.push_back(ReflectionAnswer(bytes));
  }
  return absl::StrJoin(answers, " | ");
}

std::string ReadAnswers(const Outcome& outcome) {
  std::vector<std::string> answers;
  for (const std::string& bytes : outcome.answers) {
    v1::ReadResponse response;
    answers.push_back(response.ParseFromString(bytes)
                          ? absl::StrCat(response.status(), " ",
                                         response.body())
                          : "unparsed");
  }
  return absl::StrJoin(answers, ",");
}

// One case: a call, and how its answers are decoded.
struct Case {
  std::string name;
  std::string method;
  std::vector<std::string> requests;
  int reads;
  std::function<std::string(const Outcome&)> decode;
  bool compare_message = true;
};

std::string Reflect(const std::function<void(reflection::ServerReflectionRequest&)>& fill) {
  reflection::ServerReflectionRequest request;
  request.set_host("sidecar");
  fill(request);
  return request.SerializeAsString();
}

std::vector<Case> Cases() {
  constexpr char kCheck[] = "/grpc.health.v1.Health/Check";
  constexpr char kWatch[] = "/grpc.health.v1.Health/Watch";
  std::vector<Case> cases = {
      {"check_sidecar", kCheck, {HealthRequest("")}, 1, HealthAnswers},
      {"check_hedged_read", kCheck, {HealthRequest("tailgate.v1.HedgedRead")},
       1, HealthAnswers},
      {"check_unknown", kCheck, {HealthRequest("no.such.Service")}, 1,
       HealthAnswers},
      {"check_admin_is_not_here", kCheck, {HealthRequest("tailgate.v1.Admin")},
       1, HealthAnswers},
      {"check_name_over_200_bytes", kCheck,
       {HealthRequest(std::string(201, 's'))}, 1, HealthAnswers},
      {"check_unparsable", kCheck, {"\xff"}, 1, HealthAnswers},
      {"watch_sidecar", kWatch, {HealthRequest("")}, 1, HealthAnswers},
      {"watch_hedged_read", kWatch, {HealthRequest("tailgate.v1.HedgedRead")},
       1, HealthAnswers},
      {"watch_unknown", kWatch, {HealthRequest("no.such.Service")}, 1,
       HealthAnswers},
      {"read", "/tailgate.v1.HedgedRead/Read",
       {[] {
         v1::ReadRequest request;
         request.set_path("/conformance");
         return request.SerializeAsString();
       }()},
       1, ReadAnswers},
      // The two word this differently (both name the field).
      {"read_without_path", "/tailgate.v1.HedgedRead/Read", {""}, 1,
       ReadAnswers, /*compare_message=*/false},
      {"unknown_method", "/tailgate.v1.Nope/Nothing", {""}, 1, ReadAnswers,
       false},
      {"admin_is_not_here", "/tailgate.v1.Admin/GetStats", {""}, 1,
       ReadAnswers, false},
  };
  const std::vector<std::pair<std::string, std::string>> reflections = {
      {"list", Reflect([](auto& r) { r.set_list_services(""); })},
      {"symbol", Reflect([](auto& r) {
         r.set_file_containing_symbol("tailgate.v1.HedgedRead");
       })},
      {"method", Reflect([](auto& r) {
         r.set_file_containing_symbol("tailgate.v1.HedgedRead.Read");
       })},
      {"file", Reflect([](auto& r) {
         r.set_file_by_filename("proto/tailgate/v1/tailgate.proto");
       })},
      {"no_symbol",
       Reflect([](auto& r) { r.set_file_containing_symbol("no.Such"); })},
      {"no_file", Reflect([](auto& r) { r.set_file_by_filename("no.proto"); })},
      {"extension_of_no_type", Reflect([](auto& r) {
         r.mutable_file_containing_extension()->set_containing_type("no.Such");
       })},
      {"no_extension", Reflect([](auto& r) {
         auto* wanted = r.mutable_file_containing_extension();
         wanted->set_containing_type("tailgate.v1.ReadRequest");
         wanted->set_extension_number(100);
       })},
      {"extension_numbers", Reflect([](auto& r) {
         r.set_all_extension_numbers_of_type("tailgate.v1.ReadRequest");
       })},
      {"extension_numbers_of_no_type", Reflect([](auto& r) {
         r.set_all_extension_numbers_of_type("no.Such");
       })},
      {"nothing_asked", Reflect([](auto&) {})},
  };
  for (const char* version : {"v1", "v1alpha"}) {
    const std::string method = absl::StrCat(
        "/grpc.reflection.", version, ".ServerReflection/ServerReflectionInfo");
    std::vector<std::string> all;
    for (const auto& [name, request] : reflections) {
      cases.push_back({absl::StrCat("reflection_", version, "_", name), method,
                       {request}, 1, ReflectionAnswers});
      all.push_back(request);
    }
    // Every request on one stream, answered in order.
    cases.push_back({absl::StrCat("reflection_", version, "_one_stream"),
                     method, all, static_cast<int>(all.size()) + 1,
                     ReflectionAnswers});
  }
  return cases;
}

class FrontConformanceE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Replica>> replica =
        Replica::Start(Always(Body("ok")));
    ASSERT_TRUE(replica.ok()) << replica.status();
    replica_ = *std::move(replica);
    for (const char* front : {"loop", "grpc"}) {
      absl::StatusOr<std::unique_ptr<TailgateProcess>> process =
          TailgateProcess::Start(
              TailgateBinary(),
              {absl::StrCat("--backends=", replica_->url()),
               "--hedge_fraction=0", absl::StrCat("--listen_front=", front)});
      ASSERT_TRUE(process.ok()) << process.status();
      channels_.push_back(grpc::CreateChannel(
          (*process)->grpc_address(), grpc::InsecureChannelCredentials()));
      fronts_.push_back(*std::move(process));
    }
  }

  std::unique_ptr<Replica> replica_;
  std::vector<std::unique_ptr<TailgateProcess>> fronts_;  // loop, grpc
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
};

TEST_F(FrontConformanceE2eTest, BothFrontsAnswerEveryCaseAlike) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const Outcome loop = Call(channels_[0], c.method, c.requests, c.reads);
    const Outcome library = Call(channels_[1], c.method, c.requests, c.reads);
    EXPECT_EQ(loop.code, library.code)
        << c.name << ": loop \"" << loop.message << "\", grpc \""
        << library.message << "\"";
    if (c.compare_message) {
      EXPECT_EQ(loop.message, library.message) << c.name;
    }
    EXPECT_EQ(c.decode(loop), c.decode(library)) << c.name;
  }
}

}  // namespace
}  // namespace tailgate::testing
