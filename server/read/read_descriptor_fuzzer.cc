// libFuzzer target for the read descriptor exactly as the server takes it:
// any ReadRequest (the input is its wire format) through
// EngineReadFromRequest, then the attempt URL of an accepted read as libcurl
// itself parses it (hedge/hygiene_fuzzer.cc checks the hygiene functions
// against a model; this one checks what the server builds from them).
//
// Properties:
//  - a rejection is INVALID_ARGUMENT and names the first invalid field, in
//    the order path, method, headers, hedge.delay;
//  - an accepted read carries the path byte for byte, the sanitised headers
//    (no Host, framing or hop-by-hop header), the upstream name as given
//    and a hedge delay in (0, timeout);
//  - libcurl, parsing the attempt URL with the flags a transfer uses, sees
//    the replica's scheme, host and port, no userinfo or fragment, and
//    sends base path + target as the request target.
//
// Seeds are wire-format ReadRequests, written from text format on stdin
// (e.g. 'path: "/a\r\nb"') by this command, run from the workspace root:
//   protoc --encode=tailgate.v1.ReadRequest -I.
//       proto/tailgate/v1/tailgate.proto
// Build, then run for ten minutes (new inputs go to the first directory, the
// seeds stay as they are; an indented line continues the command above it):
//   bazel build --config=fuzz //server/read:read_descriptor_fuzzer
//   mkdir -p /tmp/descriptor_corpus
//   nice -n 19 bazel-bin/server/read/read_descriptor_fuzzer -max_total_time=600
//       /tmp/descriptor_corpus server/read/testdata/read_descriptor_corpus
// The seeds run as //server/read:read_descriptor_fuzzer_corpus_test.

#include <curl/curl.h>
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "hedge/hygiene/http_hygiene.h"
#include "hedge/hygiene/replica_url.h"
#include "proto/tailgate/v1/tailgate.pb.h"
#include "server/read/read_descriptor.h"

namespace tailgate::server {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(1);

// With and without a base path, IPv4 and bracketed IPv6.
constexpr absl::string_view kReplicas[] = {
    "http://127.0.0.1:8080/base",
    "https://[::1]",
};

// An invariant broke: say which, then crash so libFuzzer keeps the input.
void Check(bool ok, absl::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "read_descriptor_fuzzer: invariant failed: %.*s\n",
               static_cast<int>(what.size()), what.data());
  std::abort();
}

const std::vector<hygiene::ReplicaUrl>& Replicas() {
  static const std::vector<hygiene::ReplicaUrl>* const replicas = [] {
    auto* parsed = new std::vector<hygiene::ReplicaUrl>;
    for (const absl::string_view url : kReplicas) {
      absl::StatusOr<hygiene::ReplicaUrl> replica =
          hygiene::ParseReplicaUrl(url);
      Check(replica.ok(), "the fixed replica URLs parse");
      parsed->push_back(*replica);
    }
    return parsed;
  }();
  return *replicas;
}

std::vector<hygiene::HttpHeader> Headers(const v1::ReadRequest& request) {
  std::vector<hygiene::HttpHeader> headers;
  for (const v1::Header& header : request.headers()) {
    headers.push_back({header.name(), header.value()});
  }
  return headers;
}

bool KnownMethod(v1::Method method) {
  return method == v1::METHOD_UNSPECIFIED || method == v1::METHOD_GET ||
         method == v1::METHOD_HEAD;
}

// The field EngineReadFromRequest must name: the first invalid one.
absl::string_view FirstInvalidField(const v1::ReadRequest& request) {
  if (!hygiene::ValidateRequestTarget(request.path()).ok()) return "path ";
  if (!KnownMethod(request.method())) return "method ";
  if (!hygiene::SanitizeRequestHeaders(Headers(request)).ok()) return "headers";
  return "hedge.delay ";
}

void CheckRejection(const v1::ReadRequest& request,
                    const absl::Status& status) {
  Check(status.code() == absl::StatusCode::kInvalidArgument,
        "rejections are INVALID_ARGUMENT");
  const absl::string_view field = FirstInvalidField(request);
  Check(absl::StartsWith(status.message(), field),
        "a rejection names the first invalid field");
  Check(field != "hedge.delay " || request.hedge().has_delay(),
        "only a set hedge.delay can be invalid");
}

// One part of `url` as libcurl reads it; nullopt when the URL has none.
std::optional<std::string> Part(CURLU* url, CURLUPart part,
                                unsigned int flags = 0) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, flags) != CURLUE_OK) return std::nullopt;
  std::string copy(text);
  curl_free(text);
  return copy;
}

// libcurl connects to the replica and nowhere else, and sends the target as
// built: the parse flags are those of CURLOPT_URL with CURLOPT_PATH_AS_IS.
void CheckCurlReadsTheReplica(const hygiene::ReplicaUrl& replica,
                              absl::string_view target) {
  const std::string attempt = hygiene::BuildAttemptUrl(replica, target);
  CURLU* url = curl_url();
  Check(url != nullptr, "curl_url allocates");
  Check(curl_url_set(url, CURLUPART_URL, attempt.c_str(),
                     CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME |
                         CURLU_PATH_AS_IS) == CURLUE_OK,
        "libcurl parses every attempt URL");
  Check(Part(url, CURLUPART_SCHEME) == replica.scheme,
        "libcurl sees the replica's scheme");
  Check(Part(url, CURLUPART_HOST) == replica.host,
        "libcurl sees the replica's host");
  Check(Part(url, CURLUPART_PORT, CURLU_DEFAULT_PORT) ==
            absl::StrCat(replica.port),
        "libcurl sees the replica's port");
  Check(!Part(url, CURLUPART_USER) && !Part(url, CURLUPART_PASSWORD) &&
            !Part(url, CURLUPART_OPTIONS) && !Part(url, CURLUPART_FRAGMENT),
        "libcurl sees no userinfo, login options or fragment");
  const std::optional<std::string> query = Part(url, CURLUPART_QUERY);
  Check(absl::StrCat(Part(url, CURLUPART_PATH).value_or(""),
                     query ? absl::StrCat("?", *query) : "") ==
            absl::StrCat(replica.base_path, target),
        "libcurl sends base path + target byte for byte");
  curl_url_cleanup(url);
}

void CheckAccepted(const v1::ReadRequest& request,
                   const hedge::EngineRead& read) {
  Check(read.target == request.path(), "the path is kept byte for byte");
  Check(read.head == (request.method() == v1::METHOD_HEAD),
        "HEAD exactly when asked");
  absl::StatusOr<std::vector<hygiene::HttpHeader>> sanitized =
      hygiene::SanitizeRequestHeaders(Headers(request));
  Check(sanitized.ok() && sanitized->size() == read.headers.size(),
        "the headers are the sanitised headers");
  for (size_t i = 0; i < read.headers.size(); ++i) {
    const hygiene::HttpHeader& header = read.headers[i];
    Check(header.name == (*sanitized)[i].name &&
              header.value == (*sanitized)[i].value,
          "the headers are the sanitised headers, in order");
    Check(!hygiene::IsHopByHop(header.name) &&
              !absl::EqualsIgnoreCase(header.name, "Host") &&
              !absl::EqualsIgnoreCase(header.name, "Content-Length") &&
              !absl::EqualsIgnoreCase(header.name, "Expect"),
          "no Host, framing or hop-by-hop header goes upstream");
  }
  Check(read.upstream == request.upstream(), "the upstream name is as given");
  Check(read.hedge_disabled == request.hedge().disable(),
        "hedge.disable is as given");
  Check(!read.hedge_delay.has_value() ||
            (*read.hedge_delay > absl::ZeroDuration() &&
             *read.hedge_delay < kTimeout),
        "a hedge delay is positive and below the timeout");
  Check(read.deadline == absl::InfiniteFuture(),
        "the deadline is left to EngineDeadline");
  for (const hygiene::ReplicaUrl& replica : Replicas()) {
    CheckCurlReadsTheReplica(replica, read.target);
  }
}

void FuzzOneInput(const uint8_t* data, size_t size) {
  // Strings that are not UTF-8 fail the parse (gRPC would refuse them
  // before the server sees them); protobuf would log each one.
  const google::protobuf::LogSilencer quiet;
  v1::ReadRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  absl::StatusOr<hedge::EngineRead> read =
      EngineReadFromRequest(request, kTimeout);
  if (read.ok()) {
    CheckAccepted(request, *read);
  } else {
    CheckRejection(request, read.status());
  }
}

}  // namespace
}  // namespace tailgate::server

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tailgate::server::FuzzOneInput(data, size);
  return 0;
}
