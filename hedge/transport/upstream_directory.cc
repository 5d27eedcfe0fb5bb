#include "hedge/transport/upstream_directory.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"

namespace tailgate::hedge::transport {
namespace {

// What a lookup says: an answer with no address failed as well.
absl::Status LookupStatus(
    const absl::StatusOr<std::vector<std::string>>& answer) {
  if (answer.ok() && answer->empty()) {
    return absl::NotFoundError("no address");
  }
  return answer.status();
}

}  // namespace

UpstreamDirectory::UpstreamDirectory(const EngineConfig& engine, Clock& clock,
                                     EngineObserver* observer,
                                     discovery::Resolver& resolver)
    : engine_(engine),
      clock_(clock),
      observer_(observer),
      resolver_(resolver) {}

UpstreamDirectory::~UpstreamDirectory() {
  {
    MutexLock lock(&wake_mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  if (refresher_.joinable()) refresher_.join();
}

void UpstreamDirectory::Replace(const std::vector<UpstreamConfig>& upstreams) {
  std::vector<Looked> looked;
  {
    MutexLock lock(&update_mu_);
    sources_ = upstreams;
    const absl::Time now = clock_.Now();
    absl::flat_hash_map<std::string, discovery::ResolvedNames> names;
    for (const UpstreamConfig& upstream : sources_) {
      std::vector<std::string> hosts =
          discovery::ResolvedHosts(upstream.replicas);
      if (hosts.empty()) continue;
      discovery::ResolvedNames& tracked = names[upstream.name];
      if (auto it = names_.find(upstream.name); it != names_.end()) {
        tracked = std::move(it->second);
      }
      tracked.Track(hosts, upstream.refresh_interval, now);
      // New names now, so that their upstream comes with its replicas.
      for (const std::string& host : hosts) {
        if (tracked.Addresses(host).empty()) {
          absl::StatusOr<std::vector<std::string>> answer =
              resolver_.Resolve(host);
          tracked.Record(host, answer, clock_.Now());
          looked.push_back({upstream.name,
                            host,
                            {LookupStatus(answer), tracked.Addresses(host)}});
        }
      }
    }
    names_ = std::move(names);
    {
      MutexLock counters(&current_mu_);
      for (const auto& [name, tracked] : names_) {
        dns_failures_[name] = tracked.failures();
      }
    }
    Publish();
  }
  Tell(looked);
  {
    MutexLock lock(&wake_mu_);
    kicked_ = true;
  }
  wake_.SignalAll();
}

void UpstreamDirectory::Publish() {
  std::vector<UpstreamConfig> expanded = sources_;
  for (UpstreamConfig& upstream : expanded) {
    auto it = names_.find(upstream.name);
    if (it != names_.end()) {
      upstream.replicas =
          discovery::ExpandReplicas(upstream.replicas, it->second);
    }
  }
  std::shared_ptr<const UpstreamSet> previous = Current();
  auto next = std::make_shared<const UpstreamSet>(
      expanded, engine_, clock_, observer_, previous.get());
  MutexLock lock(&current_mu_);
  current_ = std::move(next);
}

bool UpstreamDirectory::Record(
    const std::string& upstream, const std::string& host,
    const absl::StatusOr<std::vector<std::string>>& answer,
    std::vector<Looked>& looked) {
  auto it = names_.find(upstream);
  if (it == names_.end()) return false;  // gone with a Replace meanwhile
  const bool changed = it->second.Record(host, answer, clock_.Now());
  looked.push_back(
      {upstream, host, {LookupStatus(answer), it->second.Addresses(host)}});
  MutexLock lock(&current_mu_);
  dns_failures_[upstream] = it->second.failures();
  return changed;
}

void UpstreamDirectory::Tell(const std::vector<Looked>& looked) const {
  if (observer_ == nullptr) return;
  for (const Looked& one : looked) {
    observer_->OnNameLookup(one.upstream, one.host, one.lookup);
  }
}

bool UpstreamDirectory::RefreshDue() {
  std::vector<std::pair<std::string, std::string>> due;  // upstream, host
  {
    MutexLock lock(&update_mu_);
    const absl::Time now = clock_.Now();
    for (const auto& [upstream, tracked] : names_) {
      for (std::string& host : tracked.Due(now)) {
        due.emplace_back(upstream, std::move(host));
      }
    }
  }
  if (due.empty()) return false;
  // Looked up without the lock: a slow lookup delays neither a Replace
  // nor a snapshot.
  std::vector<absl::StatusOr<std::vector<std::string>>> answers;
  for (const auto& [upstream, host] : due) {
    answers.push_back(resolver_.Resolve(host));
  }
  std::vector<Looked> looked;
  bool changed = false;
  {
    MutexLock lock(&update_mu_);
    for (size_t i = 0; i < due.size(); ++i) {
      changed |= Record(due[i].first, due[i].second, answers[i], looked);
    }
    if (changed) Publish();
  }
  Tell(looked);
  return changed;
}

absl::Time UpstreamDirectory::NextRefresh() const {
  MutexLock lock(&update_mu_);
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [upstream, tracked] : names_) {
    next = std::min(next, tracked.NextDue());
  }
  return next;
}

void UpstreamDirectory::StartRefresher() {
  MutexLock lock(&wake_mu_);
  if (refresher_.joinable() || stopping_) return;
  refresher_ = std::thread([this] { RefresherLoop(); });
}

void UpstreamDirectory::RefresherLoop() {
  for (;;) {
    RefreshDue();
    const absl::Time next = NextRefresh();
    // The schedule is on the engine's clock; the wait is in real time.
    const absl::Time deadline = next == absl::InfiniteFuture()
                                    ? absl::InfiniteFuture()
                                    : absl::Now() + (next - clock_.Now());
    MutexLock lock(&wake_mu_);
    while (!stopping_ && !kicked_) {
      if (wake_.WaitWithDeadline(&wake_mu_, deadline)) break;
    }
    if (stopping_) return;
    kicked_ = false;
  }
}

std::shared_ptr<Upstream> UpstreamDirectory::Find(
    absl::string_view name) const {
  std::shared_ptr<const UpstreamSet> set = Current();
  return set == nullptr ? nullptr : set->Find(name);
}

std::shared_ptr<const UpstreamSet> UpstreamDirectory::Current() const {
  MutexLock lock(&current_mu_);
  return current_;
}

void UpstreamDirectory::AddTo(EngineSnapshot& snapshot) const {
  std::shared_ptr<const UpstreamSet> set;
  absl::flat_hash_map<std::string, uint64_t> failures;
  {
    MutexLock lock(&current_mu_);
    set = current_;
    failures = dns_failures_;
  }
  if (set == nullptr) return;
  for (const auto& upstream : set->all()) {
    upstream->AddTo(snapshot);
    auto it = failures.find(upstream->name());
    if (it != failures.end()) {
      snapshot.upstreams.back().dns_refresh_failures = it->second;
      snapshot.dns_refresh_failures += it->second;
    }
  }
}

}  // namespace tailgate::hedge::transport
