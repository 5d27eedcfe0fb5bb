// Resolver: what a replica name stands for — the addresses a `resolve`
// replica (hygiene::ReplicaUrl::resolve) fans out to, such as the pods
// behind a Kubernetes headless Service.
//
// Two implementations:
//  - SystemResolver: getaddrinfo(3), so the system's configuration
//    (/etc/hosts, DNS, nsswitch) answers. It blocks for as long as the
//    system's lookup takes: never call it on the engine loop.
//  - HostsFileResolver: reads a file in /etc/hosts format on every call
//    ("ADDRESS NAME [NAME...]", "#" comments). The testing seam: a test
//    rewrites the file to change the answer, and nothing leaves the
//    machine.
//
// Example:
//   absl::StatusOr<std::vector<std::string>> addresses =
//       SystemResolver().Resolve("catalog.shop.svc.cluster.local");
//   // {"10.1.0.7", "10.1.3.2"}: sorted, distinct; IPv6 in brackets.
//
// An answer with no address is NOT_FOUND, never an empty list.
//
// Thread safety: Resolve is safe from any thread.

#ifndef TAILGATE_HEDGE_DISCOVERY_RESOLVER_H_
#define TAILGATE_HEDGE_DISCOVERY_RESOLVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tailgate::hedge::discovery {

class Resolver {
 public:
  virtual ~Resolver() = default;
  // Every address `name` resolves to: sorted, without duplicates, IPv4 as
  // "a.b.c.d" and IPv6 as "[...]". NOT_FOUND when there is none; another
  // error when the lookup itself failed. May block.
  virtual absl::StatusOr<std::vector<std::string>> Resolve(
      absl::string_view name) = 0;
};

// getaddrinfo(3) for TCP, IPv4 and IPv6.
class SystemResolver final : public Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> Resolve(
      absl::string_view name) override;
};

// The addresses listed for `name` in a hosts-format file, read anew on
// every call (a missing or unreadable file is UNAVAILABLE).
class HostsFileResolver final : public Resolver {
 public:
  explicit HostsFileResolver(std::string path) : path_(std::move(path)) {}
  absl::StatusOr<std::vector<std::string>> Resolve(
      absl::string_view name) override;

 private:
  const std::string path_;
};

// The environment variable that points the sidecar's resolver at a hosts
// file (HostsFileResolver) instead of the system's: a testing seam, for
// end-to-end tests that must change what a name resolves to.
inline constexpr char kTestingHostsFileVariable[] =
    "TAILGATE_TESTING_HOSTS_FILE";

}  // namespace tailgate::hedge::discovery

#endif  // TAILGATE_HEDGE_DISCOVERY_RESOLVER_H_
