#include "server/read_door/read_response_wire.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/time/time.h"
#include "server/read_door/grpc_wire.h"

namespace tailgate::server::read_door {
namespace {

// Wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

// tailgate.v1.ReadResponse.
constexpr uint32_t kStatus = 1, kHeaders = 2, kBody = 3, kTrace = 4;
// tailgate.v1.Header.
constexpr uint32_t kName = 1, kValue = 2;
// tailgate.v1.ReadTrace.
constexpr uint32_t kAttempts = 1, kHedged = 2, kHedgeWon = 3, kReplica = 4,
                   kLatency = 5;
// google.protobuf.Duration.
constexpr uint32_t kSeconds = 1, kNanos = 2;
// tailgate.v1.ReadManyItem.
constexpr uint32_t kIndex = 1, kResponse = 2, kCode = 3, kMessage = 4;

size_t VarintSize(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

void PutVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void PutTag(uint32_t field, uint32_t wire_type, std::string* out) {
  PutVarint(field << 3 | wire_type, out);
}

// An int32 or int64 field's varint: negative values sign-extended to 64
// bits, as protobuf does.
uint64_t Signed(int64_t value) { return static_cast<uint64_t>(value); }

// Every field number here is under 16: one byte of tag.
size_t VarintFieldSize(uint64_t value) {
  return value == 0 ? 0 : 1 + VarintSize(value);
}

size_t BytesFieldSize(size_t length) {
  return length == 0 ? 0 : 1 + VarintSize(length) + length;
}

size_t MessageFieldSize(size_t length) {
  return 1 + VarintSize(length) + length;  // present even when empty
}

void PutVarintField(uint32_t field, uint64_t value, std::string* out) {
  if (value == 0) return;
  PutTag(field, kVarint, out);
  PutVarint(value, out);
}

// The tag and length of a bytes field; nothing for an empty one.
void PutBytesFieldHeader(uint32_t field, size_t length, std::string* out) {
  if (length == 0) return;
  PutTag(field, kLengthDelimited, out);
  PutVarint(length, out);
}

void PutBytesField(uint32_t field, const std::string& bytes, std::string* out) {
  PutBytesFieldHeader(field, bytes.size(), out);
  out->append(bytes);
}

void PutMessageHeader(uint32_t field, size_t length, std::string* out) {
  PutTag(field, kLengthDelimited, out);
  PutVarint(length, out);
}

}  // namespace

size_t FramedReadResponse::CopyOut(size_t offset, uint8_t* out,
                                   size_t length) const {
  size_t copied = 0;
  for (const std::string* piece : {&head, &body, &tail}) {
    if (offset >= piece->size()) {
      offset -= piece->size();
      continue;
    }
    const size_t n = std::min(length - copied, piece->size() - offset);
    std::memcpy(out + copied, piece->data() + offset, n);
    copied += n;
    offset = 0;
    if (copied == length) break;
  }
  return copied;
}

FramedReadResponse FrameReadResponse(hedge::EngineResponse response) {
  const hedge::ReadTrace& trace = response.trace;
  const int64_t nanos = absl::ToInt64Nanoseconds(trace.latency);
  const int64_t latency_seconds = nanos / 1'000'000'000;
  const int64_t latency_nanos = nanos % 1'000'000'000;
  const size_t latency_size = VarintFieldSize(Signed(latency_seconds)) +
                              VarintFieldSize(Signed(latency_nanos));
  const uint64_t attempts = static_cast<uint32_t>(trace.attempts);
  const size_t trace_size =
      VarintFieldSize(attempts) + VarintFieldSize(trace.hedged ? 1 : 0) +
      VarintFieldSize(trace.hedge_won ? 1 : 0) +
      BytesFieldSize(trace.replica.size()) + MessageFieldSize(latency_size);
  size_t head_size =
      kMessagePrefixBytes + VarintFieldSize(Signed(response.status)) +
      BytesFieldSize(response.body.size()) - response.body.size();
  for (const hygiene::HttpHeader& header : response.headers) {
    head_size += MessageFieldSize(BytesFieldSize(header.name.size()) +
                                  BytesFieldSize(header.value.size()));
  }

  // Fields in number order, as protobuf serializes them.
  FramedReadResponse framed;
  std::string& head = framed.head;
  head.reserve(head_size);
  head.assign(kMessagePrefixBytes, '\0');
  PutVarintField(kStatus, Signed(response.status), &head);
  for (const hygiene::HttpHeader& header : response.headers) {
    PutMessageHeader(kHeaders,
                     BytesFieldSize(header.name.size()) +
                         BytesFieldSize(header.value.size()),
                     &head);
    PutBytesField(kName, header.name, &head);
    PutBytesField(kValue, header.value, &head);
  }
  PutBytesFieldHeader(kBody, response.body.size(), &head);
  framed.body = std::move(response.body);
  std::string& tail = framed.tail;
  tail.reserve(MessageFieldSize(trace_size));
  PutMessageHeader(kTrace, trace_size, &tail);
  PutVarintField(kAttempts, attempts, &tail);
  PutVarintField(kHedged, trace.hedged ? 1 : 0, &tail);
  PutVarintField(kHedgeWon, trace.hedge_won ? 1 : 0, &tail);
  PutBytesField(kReplica, trace.replica, &tail);
  PutMessageHeader(kLatency, latency_size, &tail);
  PutVarintField(kSeconds, Signed(latency_seconds), &tail);
  PutVarintField(kNanos, Signed(latency_nanos), &tail);
  PutMessagePrefix(static_cast<uint32_t>(framed.size() - kMessagePrefixBytes),
                   head.data());
  return framed;
}

FramedReadResponse FrameReadManyItem(uint32_t index,
                                     hedge::EngineResponse response) {
  FramedReadResponse framed = FrameReadResponse(std::move(response));
  const size_t response_size = framed.size() - kMessagePrefixBytes;
  // The ReadResponse becomes field 2 of the item, after its index.
  std::string head(kMessagePrefixBytes, '\0');
  PutVarintField(kIndex, index, &head);
  PutMessageHeader(kResponse, response_size, &head);
  head.append(framed.head, kMessagePrefixBytes, std::string::npos);
  framed.head = std::move(head);
  PutMessagePrefix(static_cast<uint32_t>(framed.size() - kMessagePrefixBytes),
                   framed.head.data());
  return framed;
}

FramedReadResponse FrameReadManyFailure(uint32_t index,
                                        const absl::Status& status) {
  FramedReadResponse framed;
  std::string& head = framed.head;
  head.assign(kMessagePrefixBytes, '\0');
  PutVarintField(kIndex, index, &head);
  PutVarintField(kCode, Signed(static_cast<int>(status.code())), &head);
  PutBytesField(kMessage, std::string(status.message()), &head);
  PutMessagePrefix(static_cast<uint32_t>(head.size() - kMessagePrefixBytes),
                   head.data());
  return framed;
}

}  // namespace tailgate::server::read_door
