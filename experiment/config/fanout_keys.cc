#include "experiment/config/fanout_keys.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace tailgate::experiment {

std::vector<uint64_t> FanoutBatchKeys(uint64_t batch, int keys) {
  std::mt19937_64 random(0x7a11'6a7e ^ (batch * 0x9e37'79b9'7f4a'7c15));
  std::uniform_int_distribution<uint64_t> id(0, kFanoutKeySpace - 1);
  std::vector<uint64_t> ids;
  std::unordered_set<uint64_t> seen;
  while (static_cast<int>(ids.size()) < keys) {
    const uint64_t next = id(random);
    if (seen.insert(next).second) ids.push_back(next);
  }
  return ids;
}

ZipfKeys::ZipfKeys(int n, double s, uint64_t seed) : random_(seed) {
  cumulative_.reserve(n);
  double total = 0;
  for (int k = 0; k < n; ++k) {
    total += 1 / std::pow(k + 1, s);
    cumulative_.push_back(total);
  }
  for (double& c : cumulative_) c /= total;
  cumulative_.back() = 1;
}

uint64_t ZipfKeys::Next() {
  const double u = std::uniform_real_distribution<double>(0, 1)(random_);
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  const size_t index = static_cast<size_t>(it - cumulative_.begin());
  return std::min(index, cumulative_.size() - 1);
}

}  // namespace tailgate::experiment
