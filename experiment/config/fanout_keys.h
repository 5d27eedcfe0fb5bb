// The fanout scenario's keys, the same in every arm of a run: each batch's
// read ids, drawn at random but reproducibly (a fixed seed per batch), and
// the hot-key arm's Zipf-distributed keys.
//
// Batch keys are ids for GET /read?id=N (workload.h's kFanout mix: a read
// meets a slow primary with a fast alternate one time in a hundred,
// whichever replica its primary is), distinct within a batch.
//
// Thread safety: pure functions; a ZipfKeys object is used by one thread.

#ifndef TAILGATE_EXPERIMENT_CONFIG_FANOUT_KEYS_H_
#define TAILGATE_EXPERIMENT_CONFIG_FANOUT_KEYS_H_

#include <cstdint>
#include <random>
#include <vector>

namespace tailgate::experiment {

// Ids are drawn from [0, kFanoutKeySpace).
inline constexpr uint64_t kFanoutKeySpace = 1'000'000'000;

// The `keys` distinct ids of batch `batch` of a run; the same for the
// same arguments. REQUIRES: 0 < keys <= 1'000'000.
std::vector<uint64_t> FanoutBatchKeys(uint64_t batch, int keys);

// Keys 0 .. n-1 drawn with P(k) proportional to 1 / (k + 1)^s: key 0 is
// the hottest. REQUIRES: n >= 1, s > 0.
class ZipfKeys {
 public:
  ZipfKeys(int n, double s, uint64_t seed);
  uint64_t Next();

 private:
  std::vector<double> cumulative_;  // ascending, the last is 1
  std::mt19937_64 random_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_CONFIG_FANOUT_KEYS_H_
