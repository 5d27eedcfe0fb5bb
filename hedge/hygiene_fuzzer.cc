// libFuzzer target for the HTTP hygiene of a forwarded read: request target
// validation, request and response header sanitising, and the attempt URL.
//
// Input: the first byte is a separator; the rest, split on it, is the path
// followed by one header per record as "name:value" (one space after the
// colon is dropped; a record without a colon is a name with an empty value).
// Choosing the separator per input lets every byte, CR and LF included,
// appear inside a path, name or value. Seed: "|/a%2Fb?q=1|Accept: */*".
// The path record is also parsed as a replica URL.
//
// Build and run (new inputs go to the first directory, not the seeds):
//   CC=clang bazel build --config=fuzz //hedge:hygiene_fuzzer
//   mkdir -p /tmp/hygiene_corpus && bazel-bin/hedge/hygiene_fuzzer \
//       -max_total_time=60 /tmp/hygiene_corpus hedge/testdata/hygiene_corpus
// The same source runs over the seed corpus as
// //hedge:hygiene_fuzzer_corpus_test.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "hedge/http_hygiene.h"
#include "hedge/replica_url.h"

namespace tailgate::hedge {
namespace {

constexpr absl::string_view kReplica = "http://Replica.Internal:8080/base/";
constexpr absl::string_view kReplicaPrefix =
    "http://replica.internal:8080/base";

// An invariant broke: say which, then crash so libFuzzer keeps the input.
void Check(bool ok, absl::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "hygiene_fuzzer: invariant failed: %.*s\n",
               static_cast<int>(what.size()), what.data());
  std::abort();
}

bool HasAny(absl::string_view text, absl::string_view bytes) {
  return text.find_first_of(bytes) != absl::string_view::npos;
}

const ReplicaUrl& FixedReplica() {
  static const ReplicaUrl* const replica = [] {
    absl::StatusOr<ReplicaUrl> parsed = ParseReplicaUrl(kReplica);
    Check(parsed.ok(), "the fixed replica URL parses");
    return new ReplicaUrl(*std::move(parsed));
  }();
  return *replica;
}

void CheckTarget(absl::string_view path) {
  if (!ValidateRequestTarget(path).ok()) return;
  Check(absl::StartsWith(path, "/"), "accepted path starts with /");
  Check(!absl::StartsWith(path, "//"), "accepted path does not start with //");
  Check(path.size() <= kMaxRequestTargetBytes, "accepted path within limit");
  Check(!HasAny(path, absl::string_view("\r\n\0 #", 5)),
        "accepted path has no CR, LF, NUL, space or #");
  for (const char c : path) {
    Check(absl::ascii_isgraph(c), "accepted path is printable ASCII");
  }

  const ReplicaUrl& replica = FixedReplica();
  const std::string url = BuildAttemptUrl(replica, path);
  Check(absl::StartsWith(url, kReplicaPrefix),
        "attempt URL starts with the replica origin and base path");
  Check(absl::EndsWith(url, path), "attempt URL ends with the target");
  Check(url.size() == kReplicaPrefix.size() + path.size(),
        "attempt URL is exactly prefix + target");
  // The target can never move the request to another authority: the first
  // "/" after "://" is still where the base path starts.
  const size_t authority = url.find("://") + 3;
  Check(url.substr(authority, url.find('/', authority) - authority) ==
            "replica.internal:8080",
        "attempt URL keeps the replica's authority");
}

bool NamedByConnection(absl::Span<const HttpHeader> headers,
                       absl::string_view name) {
  for (const HttpHeader& header : headers) {
    if (!absl::EqualsIgnoreCase(header.name, "Connection")) continue;
    for (const absl::string_view option : absl::StrSplit(header.value, ',')) {
      const absl::string_view trimmed = absl::StripAsciiWhitespace(option);
      // Empty list elements name nothing, not the (invalid) empty name.
      if (!trimmed.empty() && absl::EqualsIgnoreCase(trimmed, name)) {
        return true;
      }
    }
  }
  return false;
}

// `out` is what sanitising `in` kept: in order, a subsequence of `in`, and
// free of hop-by-hop and Connection-named headers.
void CheckKept(absl::Span<const HttpHeader> in,
               absl::Span<const HttpHeader> out) {
  size_t next = 0;
  for (const HttpHeader& header : out) {
    Check(!IsHopByHop(header.name), "no hop-by-hop header kept");
    Check(!NamedByConnection(in, header.name),
          "no Connection-named header kept");
    while (next < in.size() &&
           (in[next].name != header.name || in[next].value != header.value)) {
      ++next;
    }
    Check(next < in.size(), "kept headers are an in-order subsequence");
    ++next;
  }
}

void CheckRequestHeaders(const std::vector<HttpHeader>& headers) {
  absl::StatusOr<std::vector<HttpHeader>> sanitized =
      SanitizeRequestHeaders(headers);
  if (!sanitized.ok()) {
    Check(sanitized.status().code() == absl::StatusCode::kInvalidArgument,
          "rejections are INVALID_ARGUMENT");
    return;
  }
  Check(headers.size() <= kMaxRequestHeaders, "accepted count within limit");
  for (const absl::string_view forbidden :
       {"Host", "Content-Length", "Transfer-Encoding", "Expect"}) {
    Check(!HasHeader(headers, forbidden), "smuggling headers are rejected");
  }
  CheckKept(headers, *sanitized);
  for (const HttpHeader& header : *sanitized) {
    Check(ValidateHeaderName(header.name).ok(), "kept names are tokens");
    Check(!HasAny(header.value, absl::string_view("\r\n\0", 3)),
          "kept values have no CR, LF or NUL");
  }
}

std::vector<HttpHeader> ParseHeaders(
    const std::vector<absl::string_view>& records) {
  std::vector<HttpHeader> headers;
  for (size_t i = 1; i < records.size(); ++i) {
    const absl::string_view record = records[i];
    const size_t colon = std::min(record.find(':'), record.size());
    absl::string_view value = record.substr(std::min(colon + 1, record.size()));
    absl::ConsumePrefix(&value, " ");
    headers.push_back(
        {std::string(record.substr(0, colon)), std::string(value)});
  }
  return headers;
}

// A replica URL that parses is normalised: parsing its origin + base path
// again gives the same replica.
void CheckReplicaUrl(absl::string_view url) {
  absl::StatusOr<ReplicaUrl> replica = ParseReplicaUrl(url);
  if (!replica.ok()) return;
  Check(replica->configured == url, "configured is kept as given");
  Check(replica->port >= 1 && replica->port <= 65535, "port in range");
  Check(!absl::EndsWith(replica->base_path, "/"), "no trailing slash");
  absl::StatusOr<ReplicaUrl> again =
      ParseReplicaUrl(absl::StrCat(replica->origin, replica->base_path));
  Check(again.ok() && again->origin == replica->origin &&
            again->base_path == replica->base_path,
        "normalised replica URL parses to itself");
}

void FuzzOneInput(absl::string_view input) {
  if (input.empty()) return;
  const std::vector<absl::string_view> records =
      absl::StrSplit(input.substr(1), input[0]);
  CheckTarget(records[0]);
  CheckReplicaUrl(records[0]);
  const std::vector<HttpHeader> headers = ParseHeaders(records);
  CheckRequestHeaders(headers);
  CheckKept(headers, SanitizeResponseHeaders(headers));
}

}  // namespace
}  // namespace tailgate::hedge

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tailgate::hedge::FuzzOneInput(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
