// ResolvedNames: the refresh schedule and the last good answers of one
// replica set's resolved names, and ExpandReplicas, which turns the set's
// configured replicas into the replicas the engine talks to.
//
// Rules:
//  - A name newly tracked is due at once; after each answer, successful
//    or not, it is due again `interval` later.
//  - A good answer (at least one address) replaces the name's addresses;
//    Record says whether the set of addresses changed.
//  - A failed lookup, or an answer with no address, keeps the last good
//    addresses and counts a failure (tailgate_dns_refresh_failures_total):
//    a DNS outage never empties a replica set.
//  - A name dropped by Track (a reload) is forgotten.
//
// Example (the refresher thread):
//   for (const std::string& name : names.Due(clock.Now())) {
//     if (names.Record(name, resolver.Resolve(name), clock.Now())) rebuild...
//   }
//   wait until names.NextDue();
//
// Pure: no I/O, no clock of its own (time is passed in).
// Thread safety: not thread-safe; its owner serialises calls.

#ifndef TAILGATE_HEDGE_DISCOVERY_RESOLVED_NAMES_H_
#define TAILGATE_HEDGE_DISCOVERY_RESOLVED_NAMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hedge/hygiene/replica_url.h"

namespace tailgate::hedge::discovery {

class ResolvedNames {
 public:
  // Keeps `names` resolved every `interval`: new ones are due at `now`,
  // known ones keep their addresses and due time (capped at now +
  // interval), others are forgotten.
  void Track(const std::vector<std::string>& names, absl::Duration interval,
             absl::Time now);

  // The names due at `now`, in name order.
  std::vector<std::string> Due(absl::Time now) const;
  // When the next name is due; InfiniteFuture with no names.
  absl::Time NextDue() const;

  // The answer of a lookup of `name` made at `now` (ignored for a name not
  // tracked). True when the name's addresses changed.
  bool Record(const std::string& name,
              const absl::StatusOr<std::vector<std::string>>& answer,
              absl::Time now);

  // The last good addresses of `name`: empty before its first good answer.
  const std::vector<std::string>& Addresses(const std::string& name) const;

  // Failed or empty lookups so far, over every name ever tracked.
  uint64_t failures() const { return failures_; }

 private:
  struct Name {
    std::vector<std::string> addresses;  // last good answer
    absl::Time due;
  };
  absl::Duration interval_ = absl::Seconds(5);
  absl::btree_map<std::string, Name> names_;
  uint64_t failures_ = 0;
};

// The hosts of the `resolve` replicas among `replicas`.
std::vector<std::string> ResolvedHosts(
    const std::vector<hygiene::ReplicaUrl>& replicas);

// `replicas` with each `resolve` replica replaced by one replica per
// address of its host (ReplicaUrl::address set), in address order; a
// resolved host with no address yet contributes none.
std::vector<hygiene::ReplicaUrl> ExpandReplicas(
    const std::vector<hygiene::ReplicaUrl>& replicas,
    const ResolvedNames& names);

}  // namespace tailgate::hedge::discovery

#endif  // TAILGATE_HEDGE_DISCOVERY_RESOLVED_NAMES_H_
