// UpstreamDirectory: the engine's current UpstreamSet, and the two things
// that replace it — a new list of replica sets (Replace: a reload) and new
// answers for the names of `resolve` replicas (the refresher thread).
//
// Each change builds a new UpstreamSet from the current one (state of
// persisting replicas and upstreams carried over, vanished replicas
// retired: upstream.h) and publishes it; Find hands out the current
// generation's Upstream, which a read then holds to its end.
//
// Discovery: each upstream's resolved names are looked up every
// `refresh_interval` (discovery::ResolvedNames) on the refresher thread,
// never on the engine loop: getaddrinfo blocks. A failed or empty answer
// keeps the name's last good addresses and is counted
// (UpstreamSnapshot::dns_refresh_failures). Names a Replace brings in are
// looked up by Replace itself, before it publishes, so a new upstream
// never appears without its replicas when its names resolve.
//
// Every lookup is told to the observer (EngineObserver::OnNameLookup)
// after update_mu_ is released, on the thread that made it.
//
// Thread safety: Find, Current and AddTo are safe from any thread and
// never wait for a lookup (current_mu_ is held only to copy a pointer or a
// counter). Replace blocks its caller for the lookups of new names and is
// serialised with the refresher by update_mu_. Lock order: update_mu_
// before current_mu_; wake_mu_ is never held with either. The observer is
// called with none held.

#ifndef TAILGATE_HEDGE_TRANSPORT_UPSTREAM_DIRECTORY_H_
#define TAILGATE_HEDGE_TRANSPORT_UPSTREAM_DIRECTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "hedge/clock.h"
#include "hedge/config/engine_config.h"
#include "hedge/discovery/resolved_names.h"
#include "hedge/discovery/resolver.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/engine.h"
#include "hedge/transport/engine_snapshot.h"
#include "hedge/transport/upstream.h"

namespace tailgate::hedge::transport {

class UpstreamDirectory {
 public:
  // `engine` gives the engine-wide limits every generation is built with.
  // `clock`, `observer` (may be null) and `resolver` must outlive the
  // directory. Nothing is published before the first Replace.
  UpstreamDirectory(const EngineConfig& engine, Clock& clock,
                    EngineObserver* observer, discovery::Resolver& resolver);
  // Stops and joins the refresher thread.
  ~UpstreamDirectory();
  UpstreamDirectory(const UpstreamDirectory&) = delete;
  UpstreamDirectory& operator=(const UpstreamDirectory&) = delete;

  // Publishes a generation built from `upstreams` (validated by the
  // caller), after looking up the resolved names it did not know yet.
  void Replace(const std::vector<UpstreamConfig>& upstreams)
      ABSL_LOCKS_EXCLUDED(update_mu_, current_mu_);

  // Starts the refresher thread (once).
  void StartRefresher() ABSL_LOCKS_EXCLUDED(wake_mu_);

  // Looks up the names due now and publishes a new generation if any
  // answer changed; true if it did. What the refresher thread runs; tests
  // call it directly.
  bool RefreshDue() ABSL_LOCKS_EXCLUDED(update_mu_, current_mu_);

  // When RefreshDue next has work; InfiniteFuture without resolved names.
  absl::Time NextRefresh() const ABSL_LOCKS_EXCLUDED(update_mu_);

  std::shared_ptr<Upstream> Find(absl::string_view name) const
      ABSL_LOCKS_EXCLUDED(current_mu_);
  std::shared_ptr<const UpstreamSet> Current() const
      ABSL_LOCKS_EXCLUDED(current_mu_);

  // Every upstream's and replica's snapshot, with the discovery counters.
  void AddTo(EngineSnapshot& snapshot) const ABSL_LOCKS_EXCLUDED(current_mu_);

 private:
  // Builds and publishes the generation of sources_ and names_ now.
  void Publish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(update_mu_)
      ABSL_LOCKS_EXCLUDED(current_mu_);
  // A lookup to tell the observer of, once update_mu_ is released.
  struct Looked {
    std::string upstream;
    std::string host;
    NameLookup lookup;
  };
  // Records `answer` for `host` of `upstream` and appends the lookup to
  // `looked`; true if its addresses changed.
  bool Record(const std::string& upstream, const std::string& host,
              const absl::StatusOr<std::vector<std::string>>& answer,
              std::vector<Looked>& looked)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(update_mu_)
          ABSL_LOCKS_EXCLUDED(current_mu_);
  // Tells the observer of `looked`, in order.
  void Tell(const std::vector<Looked>& looked) const
      ABSL_LOCKS_EXCLUDED(update_mu_);
  void RefresherLoop() ABSL_LOCKS_EXCLUDED(wake_mu_);

  // Constant after construction.
  const EngineConfig engine_;
  Clock& clock_;
  EngineObserver* const observer_;
  discovery::Resolver& resolver_;

  mutable Mutex update_mu_;
  std::vector<UpstreamConfig> sources_ ABSL_GUARDED_BY(update_mu_);
  // By upstream name: its resolved names.
  absl::flat_hash_map<std::string, discovery::ResolvedNames> names_
      ABSL_GUARDED_BY(update_mu_);

  mutable Mutex current_mu_;
  std::shared_ptr<const UpstreamSet> current_ ABSL_GUARDED_BY(current_mu_);
  // By upstream name: failed or empty lookups.
  absl::flat_hash_map<std::string, uint64_t> dns_failures_
      ABSL_GUARDED_BY(current_mu_);

  Mutex wake_mu_;
  CondVar wake_;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;
  bool kicked_ ABSL_GUARDED_BY(wake_mu_) = false;  // the schedule changed
  std::thread refresher_;  // joinable once started
};

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_UPSTREAM_DIRECTORY_H_
