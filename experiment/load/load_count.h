// LoadCount: what a fixed-duration saturating run achieved.
//
// Thread safety: plain data.

#ifndef TAILGATE_EXPERIMENT_LOAD_LOAD_COUNT_H_
#define TAILGATE_EXPERIMENT_LOAD_LOAD_COUNT_H_

#include <cstdint>

#include "absl/time/time.h"

namespace tailgate::experiment {

struct LoadCount {
  // Reads answered within the measured window.
  int64_t ok = 0;
  int64_t rejected = 0;  // RESOURCE_EXHAUSTED (through the sidecar only)
  int64_t failed = 0;
  absl::Duration window;  // the measured window

  double OkPerSecond() const {
    return static_cast<double>(ok) / absl::ToDoubleSeconds(window);
  }
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_LOAD_COUNT_H_
