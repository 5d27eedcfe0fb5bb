#include "experiment/measure/gateway_metrics.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tailgate::experiment {
namespace {

// The whole number after "key": in a flat JSON object.
absl::StatusOr<uint64_t> Counter(absl::string_view json,
                                 absl::string_view key) {
  const std::string quoted = absl::StrCat("\"", key, "\"");
  size_t at = json.find(quoted);
  if (at == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("the gateway's metrics have no \"", key, "\""));
  }
  absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(json.substr(at + quoted.size()));
  if (rest.empty() || rest.front() != ':') {
    return absl::InvalidArgumentError(
        absl::StrCat("the gateway's \"", key, "\" has no value"));
  }
  rest = absl::StripLeadingAsciiWhitespace(rest.substr(1));
  const size_t end = rest.find_first_not_of("0123456789");
  uint64_t value = 0;
  if (!absl::SimpleAtoi(rest.substr(0, end), &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the gateway's \"", key, "\" is not a whole number"));
  }
  return value;
}

}  // namespace

absl::StatusOr<GatewayCounters> ParseGatewayMetrics(absl::string_view json) {
  absl::StatusOr<uint64_t> requests = Counter(json, "requests");
  if (!requests.ok()) return requests.status();
  absl::StatusOr<uint64_t> attempts = Counter(json, "attempts");
  if (!attempts.ok()) return attempts.status();
  return GatewayCounters{*requests, *attempts};
}

}  // namespace tailgate::experiment
