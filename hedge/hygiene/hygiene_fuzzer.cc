// libFuzzer target for the HTTP hygiene of a forwarded read: request target
// validation, request and response header sanitising, replica URL parsing
// and the attempt URL.
//
// Each function is checked against a small reference model written here
// from the contract in http_hygiene.h and replica_url.h, not from the code:
// a target or a header list is accepted exactly when the model accepts it,
// and sanitising keeps exactly the headers the model keeps. So the fuzzer
// finds wrong rejections as well as unsafe acceptances. On top of that:
// an accepted target never moves the attempt URL off the replica's
// authority nor, decoded and resolved as a replica might, above its base
// path, and no error message carries a raw control byte.
//
// Input: the first byte is a separator; the rest, split on it, is the path
// followed by one header per record as "name:value" (one space after the
// colon is dropped; a record without a colon is a name with an empty value).
// Choosing the separator per input lets every byte, CR and LF included,
// appear inside a path, name or value. Seed: "|/a%2Fb?q=1|Accept: */*".
// The path record is also parsed as a replica URL and as a --backends
// list.
//
// Build, then run for ten minutes (new inputs go to the first directory, the
// seeds stay as they are; an indented line continues the command above it):
//   bazel build --config=fuzz //hedge/hygiene:hygiene_fuzzer
//   mkdir -p /tmp/hygiene_corpus
//   nice -n 19 bazel-bin/hedge/hygiene_fuzzer -max_total_time=600
//       /tmp/hygiene_corpus hedge/hygiene/testdata/hygiene_corpus
// The same source runs over the seed corpus as
// //hedge/hygiene:hygiene_fuzzer_corpus_test.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "hedge/hygiene/http_hygiene.h"
#include "hedge/hygiene/utf8.h"
#include "hedge/hygiene/replica_url.h"

namespace tailgate::hygiene {
namespace {

// An invariant broke: say which, then crash so libFuzzer keeps the input.
void Check(bool ok, absl::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "hygiene_fuzzer: invariant failed: %.*s\n",
               static_cast<int>(what.size()), what.data());
  std::abort();
}

bool IsControl(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// Rejections are INVALID_ARGUMENT, name the field first, and quote caller
// bytes escaped: a message can go to a log line as it is.
void CheckRejection(const absl::Status& status, absl::string_view field) {
  Check(status.code() == absl::StatusCode::kInvalidArgument,
        "rejections are INVALID_ARGUMENT");
  Check(absl::StartsWith(status.message(), field),
        "a rejection names its field first");
  Check(
      std::none_of(status.message().begin(), status.message().end(), IsControl),
      "error messages carry no raw control byte");
}

// ---- The reference model ----

bool ModelIsTargetByte(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f && c != '#';
}

// The segments of the path part of `target` as a replica that decodes
// escaped dots, slashes and backslashes, reads "\\" as "/" and strips path
// parameters would see them. The first is the empty one before the
// leading "/".
std::vector<std::string> ModelDecodedSegments(absl::string_view target) {
  const std::vector<std::pair<absl::string_view, absl::string_view>> decoded = {
      {"%2e", "."}, {"%2E", "."}, {"%2f", "/"}, {"%2F", "/"},
      {"%5c", "/"}, {"%5C", "/"}, {"\\", "/"}};
  const std::string path =
      absl::StrReplaceAll(target.substr(0, target.find('?')), decoded);
  std::vector<std::string> segments = absl::StrSplit(path, '/');
  for (std::string& segment : segments) {
    segment = segment.substr(0, segment.find(';'));
  }
  return segments;
}

bool ModelHasDotSegment(absl::string_view target) {
  const std::vector<std::string> segments = ModelDecodedSegments(target);
  return std::any_of(
      segments.begin(), segments.end(),
      [](const std::string& s) { return s == "." || s == ".."; });
}

// Origin-form without dot segments, as http_hygiene.h defines it.
bool ModelAcceptsTarget(absl::string_view path) {
  return path.size() <= kMaxRequestTargetBytes && absl::StartsWith(path, "/") &&
         !absl::StartsWith(path, "//") &&
         std::all_of(path.begin(), path.end(), ModelIsTargetByte) &&
         !ModelHasDotSegment(path);
}

// True when `target`, under the base path "/base", stays under it once a
// replica decodes it (ModelDecodedSegments) and resolves its dot segments
// (RFC 3986 section 5.2.4).
bool ModelStaysUnderBase(absl::string_view target) {
  std::vector<std::string> resolved = {"", "base"};
  const std::vector<std::string> segments = ModelDecodedSegments(target);
  for (size_t i = 1; i < segments.size(); ++i) {
    if (segments[i] == "..") {
      if (resolved.size() > 1) resolved.pop_back();
    } else if (segments[i] != ".") {
      resolved.push_back(segments[i]);
    }
  }
  return resolved.size() >= 2 && resolved[1] == "base";
}

bool ModelIsTokenByte(char c) {
  return absl::ascii_isalnum(c) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) !=
             absl::string_view::npos;
}

bool ModelIsForbidden(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return lower == "host" || lower == "content-length" ||
         lower == "transfer-encoding" || lower == "expect";
}

bool ModelIsHopByHop(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return absl::StartsWith(lower, "proxy-") || lower == "connection" ||
         lower == "keep-alive" || lower == "te" || lower == "trailer" ||
         lower == "transfer-encoding" || lower == "upgrade";
}

bool ModelAcceptsHeader(const HttpHeader& header) {
  const std::string& name = header.name;
  const std::string& value = header.value;
  return !name.empty() && name.size() <= kMaxHeaderNameBytes &&
         std::all_of(name.begin(), name.end(), ModelIsTokenByte) &&
         value.size() <= kMaxHeaderValueBytes &&
         std::none_of(value.begin(), value.end(),
                      [](char c) { return IsControl(c) && c != '\t'; }) &&
         !ModelIsForbidden(name);
}

bool ModelAcceptsHeaders(absl::Span<const HttpHeader> headers) {
  size_t total = 0;
  for (const HttpHeader& header : headers) {
    total += header.name.size() + header.value.size();
  }
  return headers.size() <= kMaxRequestHeaders &&
         total <= kMaxRequestHeaderBytes &&
         std::all_of(headers.begin(), headers.end(), ModelAcceptsHeader);
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

// What sanitising keeps, in either direction: every header that is neither
// hop-by-hop nor named by a Connection header, in order, duplicates kept.
std::vector<HttpHeader> ModelKept(absl::Span<const HttpHeader> headers) {
  std::vector<HttpHeader> kept;
  for (const HttpHeader& header : headers) {
    if (!ModelIsHopByHop(header.name) &&
        !NamedByConnection(headers, header.name)) {
      kept.push_back(header);
    }
  }
  return kept;
}

bool SameHeaders(absl::Span<const HttpHeader> a,
                 absl::Span<const HttpHeader> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const HttpHeader& x, const HttpHeader& y) {
                      return x.name == y.name && x.value == y.value;
                    });
}

// ---- Targets and attempt URLs ----

// A configured replica and what every attempt URL built on it starts with.
struct FixedReplica {
  absl::string_view configured;
  absl::string_view prefix;     // origin + base path
  absl::string_view authority;  // host:port as an HTTP client reads it
};

constexpr FixedReplica kFixedReplicas[] = {
    {"http://Replica.Internal:8080/base/", "http://replica.internal:8080/base",
     "replica.internal:8080"},
    {"https://[0:0::1]", "https://[::1]:443", "[::1]:443"},
    {"http://10.0.0.7/", "http://10.0.0.7:80", "10.0.0.7:80"},
};

const std::vector<ReplicaUrl>& ParsedFixedReplicas() {
  static const std::vector<ReplicaUrl>* const replicas = [] {
    auto* parsed = new std::vector<ReplicaUrl>;
    for (const FixedReplica& fixed : kFixedReplicas) {
      absl::StatusOr<ReplicaUrl> replica = ParseReplicaUrl(fixed.configured);
      Check(replica.ok(), "the fixed replica URLs parse");
      parsed->push_back(*std::move(replica));
    }
    return parsed;
  }();
  return *replicas;
}

// The authority of `url` as RFC 3986 and WHATWG parsers both read it: from
// "://" to the first "/", "?", "#" or (WHATWG) "\".
absl::string_view AuthorityOf(absl::string_view url) {
  const size_t start = url.find("://");
  if (start == absl::string_view::npos) return "";
  const absl::string_view rest = url.substr(start + 3);
  return rest.substr(0, rest.find_first_of("/?#\\"));
}

void CheckTarget(absl::string_view path) {
  const absl::Status status = ValidateRequestTarget(path);
  Check(status.ok() == ModelAcceptsTarget(path),
        "a target is accepted exactly when it is origin-form without dot "
        "segments");
  if (!status.ok()) {
    CheckRejection(status, "path ");
    return;
  }
  Check(ModelStaysUnderBase(path),
        "an accepted target never resolves above the base path");
  const std::vector<ReplicaUrl>& replicas = ParsedFixedReplicas();
  for (size_t i = 0; i < replicas.size(); ++i) {
    const std::string url = BuildAttemptUrl(replicas[i], path);
    Check(url == absl::StrCat(kFixedReplicas[i].prefix, path),
          "attempt URL is exactly origin + base path + target");
    Check(AuthorityOf(url) == kFixedReplicas[i].authority,
          "the target never changes the attempt's authority");
  }
}

// A replica URL that parses is normalised, carries no userinfo, and every
// attempt URL built on it keeps its authority.
void CheckReplicaUrl(absl::string_view url) {
  absl::StatusOr<ReplicaUrl> replica = ParseReplicaUrl(url);
  if (!replica.ok()) {
    CheckRejection(replica.status(), "backend ");
    return;
  }
  Check(replica->configured == url, "configured is kept as given");
  Check(replica->scheme == "http" || replica->scheme == "https",
        "scheme is http or https");
  Check(replica->port >= 1 && replica->port <= 65535, "port in range");
  Check(!absl::StrContains(AuthorityOf(url), "@"), "no userinfo accepted");
  const std::string authority = absl::StrCat(replica->host, ":", replica->port);
  Check(replica->origin == absl::StrCat(replica->scheme, "://", authority),
        "origin is scheme://host:port");
  Check(!absl::EndsWith(replica->base_path, "/"), "no trailing slash");
  Check(AuthorityOf(BuildAttemptUrl(*replica, "/t?q=1")) == authority,
        "attempt URLs keep the replica's authority");
  absl::StatusOr<ReplicaUrl> again =
      ParseReplicaUrl(absl::StrCat(replica->origin, replica->base_path));
  Check(again.ok() && again->origin == replica->origin &&
            again->base_path == replica->base_path,
        "normalised replica URL parses to itself");
}

// A --backends list that parses has one replica per comma-separated entry,
// parsed from the trimmed entry, and no replica twice.
void CheckReplicaList(absl::string_view list) {
  absl::StatusOr<std::vector<ReplicaUrl>> replicas = ParseReplicaList(list);
  if (!replicas.ok()) {
    CheckRejection(replicas.status(), "backend");
    return;
  }
  const std::vector<absl::string_view> entries = absl::StrSplit(list, ',');
  Check(replicas->size() == entries.size(), "one replica per entry");
  absl::flat_hash_set<std::string> identities;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ReplicaUrl& replica = (*replicas)[i];
    Check(replica.configured == absl::StripAsciiWhitespace(entries[i]),
          "each replica is parsed from its trimmed entry");
    Check(identities.insert(absl::StrCat(replica.origin, replica.base_path))
              .second,
          "no replica is listed twice");
  }
}

// ---- Headers ----

void CheckRequestHeaders(const std::vector<HttpHeader>& headers) {
  absl::StatusOr<std::vector<HttpHeader>> sanitized =
      SanitizeRequestHeaders(headers);
  Check(sanitized.ok() == ModelAcceptsHeaders(headers),
        "request headers are accepted exactly when the model accepts them");
  if (!sanitized.ok()) {
    CheckRejection(sanitized.status(), "headers");
    return;
  }
  Check(SameHeaders(*sanitized, ModelKept(headers)),
        "request sanitising keeps exactly the end-to-end headers");
  for (const HttpHeader& header : *sanitized) {
    Check(!ModelIsForbidden(header.name) && !ModelIsHopByHop(header.name),
          "no Host, framing or hop-by-hop header goes upstream");
  }
}

void CheckResponseHeaders(const std::vector<HttpHeader>& headers) {
  std::vector<HttpHeader> kept;
  for (HttpHeader header : ModelKept(headers)) {
    if (header.name.empty() ||
        !std::all_of(header.name.begin(), header.name.end(),
                     ModelIsTokenByte)) {
      continue;
    }
    absl::AsciiStrToLower(&header.name);
    if (!IsValidUtf8(header.value)) header.value = Latin1ToUtf8(header.value);
    kept.push_back(std::move(header));
  }
  const std::vector<HttpHeader> sanitized = SanitizeResponseHeaders(headers);
  Check(SameHeaders(sanitized, kept),
        "response sanitising keeps exactly the end-to-end headers with "
        "token names, lower-cased, values in UTF-8");
  for (const HttpHeader& header : sanitized) {
    Check(IsValidUtf8(header.name) && IsValidUtf8(header.value),
          "every response header fits a proto3 string");
  }
}

std::vector<HttpHeader> ParseHeaders(
    absl::Span<const absl::string_view> records) {
  std::vector<HttpHeader> headers;
  for (const absl::string_view record : records) {
    const size_t colon = std::min(record.find(':'), record.size());
    absl::string_view value = record.substr(std::min(colon + 1, record.size()));
    absl::ConsumePrefix(&value, " ");
    headers.push_back(
        {std::string(record.substr(0, colon)), std::string(value)});
  }
  return headers;
}

void FuzzOneInput(absl::string_view input) {
  if (input.empty()) return;
  const std::vector<absl::string_view> records =
      absl::StrSplit(input.substr(1), input[0]);
  CheckTarget(records[0]);
  CheckReplicaUrl(records[0]);
  CheckReplicaList(records[0]);
  const std::vector<HttpHeader> headers =
      ParseHeaders(absl::MakeConstSpan(records).subspan(1));
  CheckRequestHeaders(headers);
  CheckResponseHeaders(headers);
}

}  // namespace
}  // namespace tailgate::hygiene

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tailgate::hygiene::FuzzOneInput(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
