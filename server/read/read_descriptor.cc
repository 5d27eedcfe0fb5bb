#include "server/read/read_descriptor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hedge/hygiene/http_hygiene.h"
#include "hedge/tenants/tenant_table.h"

namespace tailgate::server {
namespace {

// google.protobuf.Duration's documented range.
constexpr int64_t kMaxDurationSeconds = 315'576'000'000;

absl::StatusOr<absl::Duration> FromProto(const google::protobuf::Duration& d) {
  const bool in_range = d.seconds() >= -kMaxDurationSeconds &&
                        d.seconds() <= kMaxDurationSeconds &&
                        d.nanos() > -1'000'000'000 && d.nanos() < 1'000'000'000;
  const bool same_sign = (d.seconds() <= 0 && d.nanos() <= 0) ||
                         (d.seconds() >= 0 && d.nanos() >= 0);
  if (!in_range || !same_sign) {
    return absl::InvalidArgumentError(
        absl::StrCat("hedge.delay is not a valid Duration (seconds ",
                     d.seconds(), ", nanos ", d.nanos(), ")"));
  }
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// Unset or zero: the server's delay.
absl::StatusOr<std::optional<absl::Duration>> HedgeDelay(
    const v1::ReadRequest& request, absl::Duration timeout) {
  if (!request.hedge().has_delay()) return std::nullopt;
  absl::StatusOr<absl::Duration> delay = FromProto(request.hedge().delay());
  if (!delay.ok()) return delay.status();
  if (*delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("hedge.delay must not be negative, got ",
                     absl::FormatDuration(*delay)));
  }
  if (*delay >= timeout) {
    return absl::InvalidArgumentError(
        absl::StrCat("hedge.delay must be less than the server's timeout (",
                     absl::FormatDuration(timeout), "), got ",
                     absl::FormatDuration(*delay)));
  }
  if (*delay == absl::ZeroDuration()) return std::nullopt;
  return *delay;
}

}  // namespace

absl::StatusOr<hedge::EngineRead> EngineReadFromRequest(
    const v1::ReadRequest& request, absl::Duration timeout) {
  hedge::EngineRead read;
  if (absl::Status path = hygiene::ValidateRequestTarget(request.path());
      !path.ok()) {
    return path;
  }
  read.target = request.path();

  switch (request.method()) {
    case v1::METHOD_UNSPECIFIED:
    case v1::METHOD_GET:
      break;
    case v1::METHOD_HEAD:
      read.head = true;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("method has unknown value ", request.method(),
                       " (want METHOD_GET or METHOD_HEAD)"));
  }

  std::vector<hygiene::HttpHeader> headers;
  headers.reserve(request.headers_size());
  for (const v1::Header& header : request.headers()) {
    headers.push_back({header.name(), header.value()});
  }
  absl::StatusOr<std::vector<hygiene::HttpHeader>> sanitized =
      hygiene::SanitizeRequestHeaders(headers);
  if (!sanitized.ok()) return sanitized.status();
  read.headers = *std::move(sanitized);

  read.upstream = request.upstream();
  if (absl::Status tenant = hedge::ValidateTenantName(request.tenant());
      !tenant.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tenant: ", tenant.message()));
  }
  read.tenant = request.tenant();
  read.hedge_disabled = request.hedge().disable();
  absl::StatusOr<std::optional<absl::Duration>> delay =
      HedgeDelay(request, timeout);
  if (!delay.ok()) return delay.status();
  read.hedge_delay = *delay;
  return read;
}

absl::Time EngineDeadline(absl::Time call_deadline, absl::Time wall_now,
                          absl::Time engine_now) {
  return engine_now + (call_deadline - wall_now);
}

void FillReadResponse(hedge::EngineResponse engine_response,
                      v1::ReadResponse* response) {
  response->set_status(engine_response.status);
  response->mutable_headers()->Reserve(engine_response.headers.size());
  for (hygiene::HttpHeader& header : engine_response.headers) {
    v1::Header* out = response->add_headers();
    out->set_name(std::move(header.name));
    out->set_value(std::move(header.value));
  }
  response->set_body(std::move(engine_response.body));

  const hedge::ReadTrace& trace = engine_response.trace;
  v1::ReadTrace* out = response->mutable_trace();
  out->set_attempts(static_cast<uint32_t>(trace.attempts));
  out->set_hedged(trace.hedged);
  out->set_hedge_won(trace.hedge_won);
  out->set_replica(trace.replica);
  const int64_t nanos = absl::ToInt64Nanoseconds(trace.latency);
  out->mutable_latency()->set_seconds(nanos / 1'000'000'000);
  out->mutable_latency()->set_nanos(
      static_cast<int32_t>(nanos % 1'000'000'000));
}

}  // namespace tailgate::server
