// HttpBatches: a batch of keys through an HTTP gateway as parallel GETs
// (batch_target.h), what an application of the Go gateway does for a
// multi-get: up to max_in_flight at once over HttpReadTarget's keep-alive
// connections, the next started as one ends.
//
// Thread safety: ReadBatch blocks the calling thread; the target must
// outlive the object, and no other reads may run through it meanwhile.

#ifndef TAILGATE_EXPERIMENT_LOAD_HTTP_BATCHES_H_
#define TAILGATE_EXPERIMENT_LOAD_HTTP_BATCHES_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "experiment/load/batch_target.h"
#include "experiment/load/http_read_target.h"

namespace tailgate::experiment {

class HttpBatches : public BatchTarget {
 public:
  // REQUIRES: max_in_flight >= 1.
  HttpBatches(HttpReadTarget& target, int max_in_flight,
              absl::Duration deadline)
      : target_(target), max_in_flight_(max_in_flight), deadline_(deadline) {}
  BatchResult ReadBatch(const std::vector<std::string>& paths) override;

 private:
  HttpReadTarget& target_;
  const int max_in_flight_;
  const absl::Duration deadline_;  // of each GET
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_HTTP_BATCHES_H_
