#include "server/testing/raw_grpc.h"

#include <grpcpp/generic/generic_stub.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::server::testing {
namespace {

constexpr absl::Duration kCallTimeout = absl::Seconds(10);
// Each helper runs one operation at a time, so one tag serves them all.
void* const kTag = reinterpret_cast<void*>(1);

// Protobuf wire format, the subset these messages use.
std::string LengthDelimited(int field, absl::string_view bytes) {
  std::string out(1, static_cast<char>(field << 3 | 2));
  out.push_back(static_cast<char>(bytes.size()));  // REQUIRES: < 128
  out.append(bytes.data(), bytes.size());
  return out;
}

bool ReadVarint(absl::string_view& in, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

struct Field {
  int number = 0;
  uint64_t varint = 0;      // wire type 0
  absl::string_view bytes;  // wire type 2
};

// The fields of one message, viewing into `in`; false when malformed or of
// another wire type.
bool ParseFields(absl::string_view in, std::vector<Field>& fields) {
  while (!in.empty()) {
    uint64_t key = 0;
    if (!ReadVarint(in, key)) return false;
    Field field;
    field.number = static_cast<int>(key >> 3);
    if ((key & 7) == 0) {
      if (!ReadVarint(in, field.varint)) return false;
    } else if ((key & 7) == 2) {
      uint64_t size = 0;
      if (!ReadVarint(in, size) || size > in.size()) return false;
      field.bytes = in.substr(0, size);
      in.remove_prefix(size);
    } else {
      return false;
    }
    fields.push_back(field);
  }
  return true;
}

grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string FromByteBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + kCallTimeout));
}

// Runs one async operation on `cq` and waits for it.
bool Await(grpc::CompletionQueue& cq) {
  void* tag = nullptr;
  bool ok = false;
  return cq.Next(&tag, &ok) && ok;
}

}  // namespace

absl::StatusOr<int> HealthCheck(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& service) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::CompletionQueue cq;
  const grpc::ByteBuffer request = ToByteBuffer(LengthDelimited(1, service));
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request,
                            &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, kTag);
  Await(cq);
  if (!status.ok()) return FromGrpc(status);
  const std::string bytes = FromByteBuffer(response);
  std::vector<Field> fields;
  if (!ParseFields(bytes, fields)) {
    return absl::DataLossError("malformed HealthCheckResponse");
  }
  for (const Field& field : fields) {
    if (field.number == 1) return static_cast<int>(field.varint);
  }
  return 0;  // UNKNOWN: proto3 leaves the default value out
}

absl::StatusOr<std::vector<std::string>> ReflectionListServices(
    const std::shared_ptr<grpc::Channel>& channel, absl::string_view version) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context,
                       absl::StrCat("/grpc.reflection.", version,
                                    ".ServerReflection/ServerReflectionInfo"),
                       &cq);
  grpc::ByteBuffer response;
  grpc::Status status;
  // ServerReflectionRequest{list_services: ""} is field 7.
  call->StartCall(kTag);
  bool ok = Await(cq);
  if (ok) {
    call->Write(ToByteBuffer(LengthDelimited(7, "")), kTag);
    ok = Await(cq);
  }
  if (ok) {
    call->WritesDone(kTag);
    ok = Await(cq);
  }
  if (ok) {
    call->Read(&response, kTag);
    ok = Await(cq);
  }
  call->Finish(&status, kTag);
  Await(cq);
  if (!status.ok()) return FromGrpc(status);
  if (!ok) return absl::DataLossError("no ServerReflectionResponse");

  // ServerReflectionResponse.list_services_response (6) ->
  // ListServiceResponse.service (1, repeated) -> ServiceResponse.name (1).
  const std::string bytes = FromByteBuffer(response);
  std::vector<Field> top;
  if (!ParseFields(bytes, top)) {
    return absl::DataLossError("malformed ServerReflectionResponse");
  }
  std::vector<std::string> names;
  for (const Field& list : top) {
    if (list.number != 6) continue;
    std::vector<Field> services;
    if (!ParseFields(list.bytes, services)) {
      return absl::DataLossError("malformed ListServiceResponse");
    }
    for (const Field& service : services) {
      std::vector<Field> name;
      if (!ParseFields(service.bytes, name)) {
        return absl::DataLossError("malformed ServiceResponse");
      }
      for (const Field& n : name) {
        if (n.number == 1) names.emplace_back(n.bytes);
      }
    }
  }
  return names;
}

HealthWatch::HealthWatch(const std::shared_ptr<grpc::Channel>& channel,
                         const std::string& service)
    : stub_(channel) {
  call_ = stub_.PrepareCall(&context_, "/grpc.health.v1.Health/Watch", &cq_);
  call_->StartCall(kTag);
  bool ok = Await(cq_);
  if (ok) {
    call_->Write(ToByteBuffer(LengthDelimited(1, service)), kTag);
    ok = Await(cq_);
  }
  if (ok) {
    call_->WritesDone(kTag);
    ok = Await(cq_);
  }
  if (!ok) ended_ = true;
}

HealthWatch::~HealthWatch() { Cancel(); }

absl::StatusOr<int> HealthWatch::Next(absl::Duration wait) {
  if (ended_) return Finish();
  if (!reading_) {
    call_->Read(&response_, kTag);
    reading_ = true;
  }
  void* tag = nullptr;
  bool ok = false;
  const grpc::CompletionQueue::NextStatus next =
      cq_.AsyncNext(&tag, &ok, absl::ToChronoTime(absl::Now() + wait));
  if (next == grpc::CompletionQueue::TIMEOUT) {
    return absl::DeadlineExceededError("no health status within the wait");
  }
  reading_ = false;
  if (next != grpc::CompletionQueue::GOT_EVENT || !ok) {
    ended_ = true;
    return Finish();
  }
  std::vector<Field> fields;
  if (!ParseFields(FromByteBuffer(response_), fields)) {
    return absl::DataLossError("malformed HealthCheckResponse");
  }
  for (const Field& field : fields) {
    if (field.number == 1) return static_cast<int>(field.varint);
  }
  return 0;
}

void HealthWatch::Cancel() {
  if (call_ == nullptr) return;
  context_.TryCancel();
  if (reading_) {
    Await(cq_);
    reading_ = false;
  }
  ended_ = true;
  Finish().IgnoreError();
  call_.reset();
  cq_.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq_.Next(&tag, &ok)) {
  }
}

absl::Status HealthWatch::Finish() {
  if (finished_) return end_;
  finished_ = true;
  grpc::Status status;
  call_->Finish(&status, kTag);
  Await(cq_);
  end_ = status.ok() ? absl::AbortedError("the watch ended with OK")
                     : FromGrpc(status);
  return end_;
}

}  // namespace tailgate::server::testing
