#include "hedge/clock.h"

#include <chrono>

namespace tailgate::hedge {
namespace {

class SteadyClockImpl final : public Clock {
 public:
  absl::Time Now() const override {
    return absl::UnixEpoch() +
           absl::FromChrono(
               std::chrono::steady_clock::now().time_since_epoch());
  }
};

}  // namespace

Clock& SteadyClock() {
  static SteadyClockImpl* const clock = new SteadyClockImpl();
  return *clock;
}

}  // namespace tailgate::hedge
