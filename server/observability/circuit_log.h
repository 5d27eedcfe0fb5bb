// CircuitLog: the engine observer that logs each replica's health
// (hedge/health/circuit_breaker.h: serving, ejected, probing) as an
// operator needs it — one line when the replica leaves service, one when it
// is back, and while it stays out, at most one reminder per
// kReminderInterval:
//
//   level=warn event=replica_state upstream=""
//     replica=http://10.0.0.7:8080 from=serving to=ejected
//     reason=consecutive ejected_for=1s generation=3
//   level=warn event=replica_still_ejected upstream=""
//     replica=http://10.0.0.7:8080 probes_failed=6 for=1m4.5s
//     ejected_for=10s generation=15
//   level=info event=replica_state upstream=""
//     replica=http://10.0.0.7:8080 from=probing to=serving for=1m12.1s
//     probes_failed=7 generation=18
// (one line each). `upstream` is the replica set's name, "" for the
// default set, as in the metrics' labels. `reason` is consecutive or
// failure_rate; `ejected_for` is the length of the ejection just begun (or in
// force, in a reminder); `for` is how long the replica has been out of service;
// `probes_failed` counts the failed probes since it left.
//
// Why not a line per transition: a replica that stays dead cycles
// ejected -> probing -> ejected (reason=probe) every ejection time, and a
// line per step would bury the one that matters. Those steps are counted
// (probes_failed) and surface in the reminder instead. A replica whose
// ejection ended with no probe yet (probes copy live reads; none came)
// makes no transition and so no reminder: the log says nothing new.
//
// Retry-After back-offs (hedge/health/replica_picker.h, Back-off) are
// logged the same way, one line as a back-off begins and one as it ends:
//
//   level=warn event=replica_backed_off upstream=""
//     replica=http://10.0.0.7:8080 status=503 retry_after=5s
//   level=info event=replica_back_off_ended upstream=""
//     replica=http://10.0.0.7:8080 for=5s
//
// `retry_after` is the wait the answer asked for (at most 30 s); `for` how
// long the back-off lasted, later Retry-Afters that extended it included.
// A replica that backs off again less than kReminderInterval after its
// last logged replica_backed_off line logs neither line for it: such
// back-offs are counted, and the next one logged carries
// `back_offs_unlogged`, how many went unlogged since the last.
//
// Time: the once-per-interval rule reads the injected monotonic clock.
//
// Thread safety: safe from any thread (the engine calls it on whichever
// thread reported the outcome). Transitions of one replica that race may
// arrive out of order; one whose generation is not newer than the last
// seen for that replica is ignored (generation 1, a new breaker's first,
// starts afresh). Lines are decided under mu_ and
// written after it is released.

#ifndef TAILGATE_SERVER_OBSERVABILITY_CIRCUIT_LOG_H_
#define TAILGATE_SERVER_OBSERVABILITY_CIRCUIT_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "hedge/clock.h"
#include "hedge/health/circuit_breaker.h"
#include "hedge/sync/mutex.h"
#include "hedge/transport/engine.h"
#include "server/observability/log.h"

namespace tailgate::server {

class CircuitLog final : public hedge::EngineObserver {
 public:
  static constexpr absl::Duration kReminderInterval = absl::Minutes(1);
  // A replica not heard of for this long is forgotten (it left the set, or
  // stays out with no probe); if it comes back, its return line has no
  // `for` or `probes_failed`.
  static constexpr absl::Duration kForgetAfter = absl::Hours(2);

  // `log` and `clock` must outlive this observer.
  explicit CircuitLog(const Logger& log,
                      const hedge::Clock& clock = hedge::SteadyClock())
      : log_(log), clock_(clock) {}

  void OnCircuitTransition(const std::string& upstream,
                           const std::string& replica,
                           const hedge::CircuitTransition& transition) override
      ABSL_LOCKS_EXCLUDED(mu_);
  void OnReplicaBackOff(const std::string& upstream, const std::string& replica,
                        const hedge::BackOffChange& change) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What is known of one replica: out of service or not, since when.
  struct Outage {
    uint64_t generation = 0;  // of the last transition taken
    bool out = false;         // ejected or probing
    // When it left service; nullopt when it was first heard of while out
    // (its entry forgotten meanwhile).
    std::optional<absl::Time> since;
    absl::Time last_line;  // the last line logged about it
    absl::Time last_heard;
    uint64_t probes_failed = 0;  // since it left service
  };
  enum class Line { kNone, kEjected, kStillEjected, kServing };
  struct Decision {
    Line line = Line::kNone;
    Outage outage;  // as it was when decided
  };

  // What is known of one replica's back-offs.
  struct BackOffs {
    bool logged = false;                  // the back-off in force had its line
    std::optional<absl::Time> last_line;  // its last replica_backed_off
    uint64_t unlogged = 0;                // back-offs since, unlogged
    absl::Time last_heard;
  };

  Decision Decide(const std::pair<std::string, std::string>& key,
                  const hedge::CircuitTransition& transition, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetQuiet(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const Logger& log_;
  const hedge::Clock& clock_;

  hedge::Mutex mu_;
  // By (upstream, replica).
  absl::flat_hash_map<std::pair<std::string, std::string>, Outage> replicas_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::pair<std::string, std::string>, BackOffs> back_offs_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_OBSERVABILITY_CIRCUIT_LOG_H_
