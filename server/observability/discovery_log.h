// DiscoveryLog: what the lookups of `resolve` replicas' names
// (hedge/discovery) tell an operator — each change of the addresses a name
// stands for, and lookups that fail:
//
//   level=info event=dns_replicas_changed upstream="" name=catalog.svc
//     added=10.1.0.7,10.1.3.2 removed=10.1.0.5 addresses=2
//   level=warn event=dns_lookup_failed upstream="" name=catalog.svc
//     error="no address for catalog.svc" failures=1 kept=2
//   level=info event=dns_lookup_recovered upstream="" name=catalog.svc
//     failures=14 for=1m5s
// (one line each). `upstream` is the replica set's name, "" for the
// default set, as in the metrics. `added` and `removed` are relative to
// the addresses the last such line reported (none before the first: the
// first good answer logs every address as added); `kept` is how many
// addresses stay in use after a failure.
//
// Rate limits, per name (a name is looked up every refresh_interval):
//  - changes: at most one line per kChangeInterval. A change sooner is not
//    lost: it shows in the line written at the first lookup after the
//    interval, as the difference from what was last logged.
//  - failures: the first of a run at once, then at most one reminder per
//    kReminderInterval while the run goes on (`failures` counts the run);
//    the first good answer after a run writes one line.
//
// Time: the rate limits read the injected monotonic clock.
//
// Thread safety: safe from any thread. Lines are decided under mu_ and
// written after it is released.

#ifndef TAILGATE_SERVER_OBSERVABILITY_DISCOVERY_LOG_H_
#define TAILGATE_SERVER_OBSERVABILITY_DISCOVERY_LOG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/engine.h"
#include "server/observability/log.h"

namespace tailgate::server {

class DiscoveryLog {
 public:
  static constexpr absl::Duration kChangeInterval = absl::Seconds(10);
  static constexpr absl::Duration kReminderInterval = absl::Minutes(1);
  // A name not looked up for this long is forgotten (a reload dropped
  // it); if it comes back, its addresses are logged afresh.
  static constexpr absl::Duration kForgetAfter = absl::Hours(2);

  // `log` and `clock` must outlive this object.
  explicit DiscoveryLog(const Logger& log,
                        const hedge::Clock& clock = hedge::SteadyClock())
      : log_(log), clock_(clock) {}

  // One lookup of `name` of `upstream` (EngineObserver::OnNameLookup).
  void OnNameLookup(const std::string& upstream, const std::string& name,
                    const hedge::NameLookup& lookup) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Name {
    std::vector<std::string> logged;  // addresses as last logged
    absl::Time last_change_line = absl::InfinitePast();
    uint64_t failures = 0;  // in the current run of failures
    absl::Time failing_since;
    absl::Time last_failure_line;
    absl::Time last_heard;
  };
  // The lines one lookup calls for, decided under mu_.
  struct Lines {
    bool failed = false;
    bool recovered = false;
    bool changed = false;
    uint64_t failures = 0;
    absl::Duration failing_for;
    std::vector<std::string> added;
    std::vector<std::string> removed;
  };

  Lines Decide(const std::pair<std::string, std::string>& key,
               const hedge::NameLookup& lookup, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const Logger& log_;
  const hedge::Clock& clock_;

  hedge::Mutex mu_;
  // By (upstream, name).
  absl::flat_hash_map<std::pair<std::string, std::string>, Name> names_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_DISCOVERY_LOG_H_
