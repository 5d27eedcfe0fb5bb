// FlappingReplica: a replica that dies and comes back on the same port on
// a fixed cycle, for the chaos scenario.
//
// Killing it destroys the testing::Replica: its event loop stops, every
// connection is closed with its requests unanswered, and the port refuses
// connections until the restart, which starts a new replica from the same
// factory on the same port (the listener uses SO_REUSEADDR).
//
// Example:
//   absl::StatusOr<std::unique_ptr<FlappingReplica>> a =
//       FlappingReplica::Start([](int port) { return StartReplica(port); });
//   (*a)->StartFlapping(absl::Milliseconds(300), absl::Milliseconds(200));
//   ... read through a sidecar that uses (*a)->url() ...
//   absl::StatusOr<FlapCount> flaps = (*a)->StopFlapping();  // up again
//
// Thread safety: call every member from one thread (the owner). Between
// StartFlapping and StopFlapping the replica belongs to the flapping
// thread, which kills and restarts it on schedule.

#ifndef TAILGATE_EXPERIMENT_REPLICAS_FLAPPING_REPLICA_H_
#define TAILGATE_EXPERIMENT_REPLICAS_FLAPPING_REPLICA_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tests/replica/replica.h"

namespace tailgate::experiment {

struct FlapCount {
  int64_t kills = 0;
  int64_t restarts = 0;
  // When each kill and restart happened, from StartFlapping, ascending:
  // restart i follows kill i (the last one may be StopFlapping's).
  std::vector<absl::Duration> kill_times;
  std::vector<absl::Duration> restart_times;
};

class FlappingReplica {
 public:
  // Starts a replica on 127.0.0.1:`port` (0: any free port).
  using Factory =
      std::function<absl::StatusOr<std::unique_ptr<testing::Replica>>(
          int port)>;

  // Starts the first replica, on a free port.
  static absl::StatusOr<std::unique_ptr<FlappingReplica>> Start(
      Factory factory);

  // Stops the cycle if it is running.
  ~FlappingReplica();
  FlappingReplica(const FlappingReplica&) = delete;
  FlappingReplica& operator=(const FlappingReplica&) = delete;

  // The same for every incarnation.
  const std::string& url() const { return url_; }

  // Repeats: `up` with the replica running, then kill it, `down` with the
  // port refusing, then restart it. REQUIRES: not flapping.
  void StartFlapping(absl::Duration up, absl::Duration down);

  // Ends the cycle, restarting the replica if it is down, so that it runs
  // when this returns. The kills and restarts of the cycle; an error if a
  // restart failed (the replica then stays down). REQUIRES: flapping.
  absl::StatusOr<FlapCount> StopFlapping();

 private:
  FlappingReplica(Factory factory, std::unique_ptr<testing::Replica> replica);

  // The flapping thread's loop.
  void Flap(absl::Duration up, absl::Duration down);
  absl::Status Restart();

  // Constant after construction.
  const Factory factory_;
  const int port_;
  const std::string url_;

  // The owner's, or the flapping thread's while it runs (see above).
  std::unique_ptr<testing::Replica> replica_;
  FlapCount count_;
  absl::Time flapping_since_;
  absl::Status restart_error_;

  std::unique_ptr<absl::Notification> stop_;
  std::thread flapper_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPLICAS_FLAPPING_REPLICA_H_
