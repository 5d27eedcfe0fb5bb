// RunDirectCurlReads: the same closed-loop saturation as
// RunSaturatingReads, but straight to the replicas with libcurl and no
// sidecar: one multi handle, `concurrency` easy handles, each reused for
// the next read (keep-alive), handle i reading urls[i % urls.size()] +
// path. This is the yardstick the sidecar's throughput is divided by.
//
// Thread safety: runs the multi loop on the calling thread; every curl
// handle is created, used and freed there. REQUIRES: curl_global_init has
// been called.

#ifndef TAILGATE_EXPERIMENT_LOAD_DIRECT_CURL_READS_H_
#define TAILGATE_EXPERIMENT_LOAD_DIRECT_CURL_READS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiment/load/load_count.h"

namespace tailgate::experiment {

// An error when curl cannot be set up or when an answer is a wrong one
// (200 with a body other than the workload's).
absl::StatusOr<LoadCount> RunDirectCurlReads(
    const std::vector<std::string>& urls, const std::string& path,
    int concurrency, absl::Duration duration);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_DIRECT_CURL_READS_H_
