#include "server/http_door/http_mapping.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "flags/flag_values.h"
#include "hedge/tenants/tenant_table.h"

namespace tailgate::server::http_door {
namespace {

constexpr absl::string_view kControlPrefix = "Tailgate-";
constexpr char kTextPlain[] = "text/plain; charset=utf-8";

bool Is(absl::string_view name, absl::string_view wanted) {
  return absl::EqualsIgnoreCase(name, wanted);
}

absl::Status Invalid(absl::string_view header, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(header, ": ", problem));
}

// The value of the only `name` control header; an error if it is repeated.
struct Controls {
  std::optional<std::string> upstream;
  std::optional<std::string> tenant;
  std::optional<std::string> hedge;
  std::optional<std::string> timeout;
};

absl::Status SetOnce(std::optional<std::string>& slot, absl::string_view name,
                     const std::string& value) {
  if (slot.has_value()) return Invalid(name, "given more than once");
  slot = value;
  return absl::OkStatus();
}

absl::Status TakeControl(const hygiene::HttpHeader& header,
                         Controls& controls) {
  const std::string& name = header.name;
  if (Is(name, "Tailgate-Upstream")) {
    return SetOnce(controls.upstream, "Tailgate-Upstream", header.value);
  }
  if (Is(name, "Tailgate-Tenant")) {
    return SetOnce(controls.tenant, "Tailgate-Tenant", header.value);
  }
  if (Is(name, "Tailgate-Hedge")) {
    return SetOnce(controls.hedge, "Tailgate-Hedge", header.value);
  }
  if (Is(name, "Tailgate-Timeout")) {
    return SetOnce(controls.timeout, "Tailgate-Timeout", header.value);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown control header ", name,
      " (known: Tailgate-Upstream, Tailgate-Tenant, Tailgate-Hedge, "
      "Tailgate-Timeout)"));
}

absl::Status ApplyControls(const Controls& controls, DoorRead& read) {
  if (controls.upstream.has_value()) {
    read.request.set_upstream(*controls.upstream);
  }
  if (controls.tenant.has_value()) {
    if (controls.tenant->empty()) {
      return Invalid("Tailgate-Tenant", "must not be empty");
    }
    if (absl::Status s = hedge::ValidateTenantName(*controls.tenant); !s.ok()) {
      return Invalid("Tailgate-Tenant", s.message());
    }
    read.request.set_tenant(*controls.tenant);
  }
  if (controls.hedge.has_value()) {
    const std::string value(absl::StripAsciiWhitespace(*controls.hedge));
    if (absl::EqualsIgnoreCase(value, "off")) {
      read.request.mutable_hedge()->set_disable(true);
    } else {
      absl::StatusOr<absl::Duration> delay = flags::ParseDuration(value);
      if (!delay.ok()) {
        return Invalid("Tailgate-Hedge",
                       absl::StrCat("want off or ", delay.status().message()));
      }
      if (*delay <= absl::ZeroDuration()) {
        return Invalid("Tailgate-Hedge",
                       absl::StrCat("must be positive, got ", value));
      }
      const int64_t nanos = absl::ToInt64Nanoseconds(*delay);
      google::protobuf::Duration* out =
          read.request.mutable_hedge()->mutable_delay();
      out->set_seconds(nanos / 1'000'000'000);
      out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
    }
  }
  if (controls.timeout.has_value()) {
    const std::string value(absl::StripAsciiWhitespace(*controls.timeout));
    absl::StatusOr<absl::Duration> timeout = flags::ParseDuration(value);
    if (!timeout.ok())
      return Invalid("Tailgate-Timeout", timeout.status().message());
    if (*timeout <= absl::ZeroDuration()) {
      return Invalid("Tailgate-Timeout",
                     absl::StrCat("must be positive, got ", value));
    }
    read.timeout = *timeout;
  }
  return absl::OkStatus();
}

// Refuses framing that could make a body, or a second request, out of
// bytes the parser did not take as this request's; drops a harmless
// "Content-Length: 0". Returns whether `header` is consumed.
absl::StatusOr<bool> CheckFraming(const hygiene::HttpHeader& header,
                                  int& content_lengths) {
  if (Is(header.name, "Transfer-Encoding")) {
    return absl::InvalidArgumentError(
        "Transfer-Encoding is not accepted: GET and HEAD carry no body");
  }
  if (!Is(header.name, "Content-Length")) return false;
  if (++content_lengths > 1) {
    return absl::InvalidArgumentError("Content-Length given more than once");
  }
  if (absl::StripAsciiWhitespace(header.value) != "0") {
    return absl::InvalidArgumentError(
        "Content-Length must be 0: GET and HEAD carry no body");
  }
  return true;
}

std::string OneLine(absl::string_view message) {
  std::string line = absl::StrReplaceAll(message, {{"\r", " "}, {"\n", " "}});
  line.push_back('\n');
  return line;
}

void SetText(HttpReply& reply, int status, absl::string_view code_name,
             absl::string_view message) {
  reply.status = status;
  reply.headers.push_back({"Tailgate-Error", std::string(code_name)});
  reply.headers.push_back({"Content-Type", kTextPlain});
  reply.headers.push_back({"Cache-Control", "no-store"});
  reply.body = OneLine(message);
}

}  // namespace

absl::StatusOr<DoorRead> ReadFromHttp(const HttpRequestIn& in) {
  DoorRead read;
  read.request.set_path(in.target);
  read.request.set_method(in.method == HttpMethod::kHead ? v1::METHOD_HEAD
                                                         : v1::METHOD_GET);
  Controls controls;
  int content_lengths = 0;
  for (const hygiene::HttpHeader& header : in.headers) {
    absl::StatusOr<bool> framing = CheckFraming(header, content_lengths);
    if (!framing.ok()) return framing.status();
    if (*framing || Is(header.name, "Host")) continue;
    if (absl::StartsWithIgnoreCase(header.name, kControlPrefix)) {
      if (absl::Status taken = TakeControl(header, controls); !taken.ok()) {
        return taken;
      }
      continue;
    }
    v1::Header* out = read.request.add_headers();
    out->set_name(header.name);
    out->set_value(header.value);
  }
  if (absl::Status applied = ApplyControls(controls, read); !applied.ok()) {
    return applied;
  }
  return read;
}

absl::Status NulRefusal(absl::string_view line) {
  const size_t colon = line.find(':');
  const absl::string_view name = line.substr(0, colon);
  if (colon == absl::string_view::npos ||
      !hygiene::ValidateHeaderName(name).ok()) {
    return absl::InvalidArgumentError(
        "the request line or a header name contains NUL");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("header \"", name, "\" contains NUL"));
}

HttpReply ReplyForResponse(hedge::EngineResponse response, bool head) {
  HttpReply reply;
  reply.status = response.status;
  reply.headers.reserve(response.headers.size() + 3);
  for (hygiene::HttpHeader& header : response.headers) {
    if (absl::StartsWithIgnoreCase(header.name, kControlPrefix)) continue;
    if (!head && Is(header.name, "Content-Length")) continue;
    reply.headers.push_back(std::move(header));
  }
  const hedge::ReadTrace& trace = response.trace;
  reply.headers.push_back({"Tailgate-Attempts", absl::StrCat(trace.attempts)});
  reply.headers.push_back({"Tailgate-Hedged", trace.hedged ? "true" : "false"});
  reply.headers.push_back(
      {"Tailgate-Hedge-Won", trace.hedge_won ? "true" : "false"});
  if (!head) reply.body = std::move(response.body);
  return reply;
}

HttpReply ReplyForError(const ReadError& error) {
  HttpReply reply;
  int status = 500;
  switch (error.end) {
    case ReadEnd::kInvalidArgument:
      status = 400;
      reply.close = true;
      break;
    case ReadEnd::kUnknownUpstream:
      status = 404;
      break;
    case ReadEnd::kTooManyCalls:
    case ReadEnd::kBufferFull:
    case ReadEnd::kOverloaded:
      status = 503;
      reply.headers.push_back({"Retry-After", "1"});
      break;
    case ReadEnd::kDraining:
    case ReadEnd::kShuttingDown:
    case ReadEnd::kNoAddress:
      status = 503;
      break;
    case ReadEnd::kNoReplica:
    case ReadEnd::kTooLarge:
    case ReadEnd::kUpstreamFailure:
      status = 502;
      break;
    case ReadEnd::kDeadlineExceeded:
      status = 504;
      break;
    case ReadEnd::kCancelled:
      status = 499;
      reply.close = true;
      break;
    case ReadEnd::kInternal:
      break;
  }
  SetText(reply, status, absl::StatusCodeToString(error.status.code()),
          error.status.message());
  return reply;
}

HttpReply MethodNotAllowed() {
  HttpReply reply;
  SetText(reply, 405,
          absl::StatusCodeToString(absl::StatusCode::kInvalidArgument),
          "method not allowed: only GET and HEAD are reads");
  reply.headers.push_back({"Allow", "GET, HEAD"});
  reply.close = true;
  return reply;
}

}  // namespace tailgate::server::http_door
