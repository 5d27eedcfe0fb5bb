// ReplicaUrl: one configured HTTP replica ("http://10.0.0.7:8080/base"),
// parsed and normalised once at start-up, and the URL of each attempt built
// from it.
//
//   absl::StatusOr<std::vector<ReplicaUrl>> replicas =
//       ParseReplicaList("http://a:8080, https://b/api");
//   // replicas->at(1).origin == "https://b:443", base_path == "/api"
//   BuildAttemptUrl(replicas->at(1), "/a%2Fb?q=1");
//   // == "https://b:443/api/a%2Fb?q=1"
//
// Thread safety: pure functions over values; safe from any thread.

#ifndef TAILGATE_HEDGE_HYGIENE_REPLICA_URL_H_
#define TAILGATE_HEDGE_HYGIENE_REPLICA_URL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::hygiene {

// A replica URL after validation. Two replicas are the same replica when
// their `origin` and `base_path` are equal.
struct ReplicaUrl {
  // Exactly as configured; what traces and stats report.
  std::string configured;
  // "http" or "https", lower case.
  std::string scheme;
  // Lower case. An IPv6 literal keeps its brackets: "[::1]".
  std::string host;
  // The explicit port, else 80 for http and 443 for https.
  int port = 0;
  // "" or "/base", never with a trailing slash.
  std::string base_path;
  // "scheme://host:port", always with the port; the replica's identity and
  // the prefix of every attempt URL.
  std::string origin;
  // The host is a name standing for every address it resolves to (a
  // headless Service): configured as "dns://" (an http replica) or by its
  // replica set's `resolve`. The transport never connects to such a
  // replica itself, only to the addresses found for it.
  bool resolve = false;
  // One address found for a `resolve` replica ("10.0.0.7", "[fd00::7]"):
  // attempts connect there, with Host still host:port. Empty otherwise.
  std::string address;
};

// What stats, metrics and traces call the replica: `configured`, or
// "NAME@ADDRESS" for an address found for a resolved name.
std::string ReplicaLabel(const ReplicaUrl& replica);

// Parses one replica URL: http or https (or dns, which is http with
// `resolve` set), a host (DNS name, IPv4, or a
// bracketed IPv6 literal without zone), an optional port in 1..65535 and an
// optional origin-form base path without "." or ".." segments. Rejects
// userinfo, query, fragment, backslashes, whitespace, control characters and
// non-ASCII bytes. Errors are INVALID_ARGUMENT and quote the URL:
//   backend "ftp://x": unsupported scheme "ftp" (want http or https)
absl::StatusOr<ReplicaUrl> ParseReplicaUrl(absl::string_view url);

// Parses a comma-separated list of replica URLs (the --backends flag),
// trimming ASCII whitespace around each entry. Rejects an empty list, empty
// entries, and two entries naming the same replica after normalisation
// ("http://A:80" and "http://a/"); that message quotes both spellings.
absl::StatusOr<std::vector<ReplicaUrl>> ParseReplicaList(
    absl::string_view comma_list);

// The URL of one attempt: origin + base_path + target, byte for byte. Nothing
// is decoded or normalised, so "/a%2Fb?q=1" reaches the replica as sent (the
// transport must not let its HTTP client squash dot segments either). The
// base path is a boundary: a valid target has no dot segment that a replica
// could resolve above it.
// REQUIRES: ValidateRequestTarget(target).ok() (http_hygiene.h).
std::string BuildAttemptUrl(const ReplicaUrl& replica,
                            absl::string_view target);

}  // namespace tailgate::hygiene

#endif  // TAILGATE_HEDGE_HYGIENE_REPLICA_URL_H_
