#include "hedge/discovery/resolved_names.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace tailgate::hedge::discovery {

void ResolvedNames::Track(const std::vector<std::string>& names,
                          absl::Duration interval, absl::Time now) {
  interval_ = interval;
  absl::btree_map<std::string, Name> kept;
  for (const std::string& name : names) {
    auto it = names_.find(name);
    if (it == names_.end()) {
      kept[name] = Name{{}, now};
    } else {
      Name& known = kept[name] = std::move(it->second);
      known.due = std::min(known.due, now + interval);
    }
  }
  names_ = std::move(kept);
}

std::vector<std::string> ResolvedNames::Due(absl::Time now) const {
  std::vector<std::string> due;
  for (const auto& [name, state] : names_) {
    if (state.due <= now) due.push_back(name);
  }
  return due;
}

absl::Time ResolvedNames::NextDue() const {
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [name, state] : names_) next = std::min(next, state.due);
  return next;
}

bool ResolvedNames::Record(
    const std::string& name,
    const absl::StatusOr<std::vector<std::string>>& answer, absl::Time now) {
  auto it = names_.find(name);
  if (it == names_.end()) return false;
  Name& state = it->second;
  state.due = now + interval_;
  if (!answer.ok() || answer->empty()) {
    ++failures_;
    return false;
  }
  std::vector<std::string> addresses = *answer;
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()),
                  addresses.end());
  if (addresses == state.addresses) return false;
  state.addresses = std::move(addresses);
  return true;
}

const std::vector<std::string>& ResolvedNames::Addresses(
    const std::string& name) const {
  static const std::vector<std::string> kNone;
  auto it = names_.find(name);
  return it == names_.end() ? kNone : it->second.addresses;
}

std::vector<std::string> ResolvedHosts(
    const std::vector<hygiene::ReplicaUrl>& replicas) {
  std::vector<std::string> hosts;
  for (const hygiene::ReplicaUrl& replica : replicas) {
    if (replica.resolve) hosts.push_back(replica.host);
  }
  return hosts;
}

std::vector<hygiene::ReplicaUrl> ExpandReplicas(
    const std::vector<hygiene::ReplicaUrl>& replicas,
    const ResolvedNames& names) {
  std::vector<hygiene::ReplicaUrl> expanded;
  for (const hygiene::ReplicaUrl& replica : replicas) {
    if (!replica.resolve) {
      expanded.push_back(replica);
      continue;
    }
    for (const std::string& address : names.Addresses(replica.host)) {
      hygiene::ReplicaUrl one = replica;
      one.address = address;
      expanded.push_back(std::move(one));
    }
  }
  return expanded;
}

}  // namespace tailgate::hedge::discovery
