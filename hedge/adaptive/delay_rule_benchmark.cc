// delay_rule_benchmark: the three DelayRules (the two scaled ones with
// margins 1.25 and 1.5), and a fixed 5 ms delay, on simulated workloads,
// with the hedge budget and the censoring the engine applies. Noise-free
// (simulated time, seeded randomness): it compares the rules' choices, not
// the machine. One JSON line per workload, rule and margin.
//
//   bazel run -c opt //hedge/adaptive:delay_rule_benchmark

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hedge/adaptive/censored_latency_sketch.h"
#include "hedge/adaptive/delay_rule.h"
#include "hedge/policy/hedge_budget.h"

namespace tailgate::hedge {
namespace {

constexpr int kReads = 40000;
constexpr double kFraction = 0.25;  // the experiment's hedged budget
constexpr double kBurst = 4;

// One read: its primary's latency and what a hedge sent after it would take.
struct Draw {
  double primary_ms;
  double hedge_ms;
};
// `read`: the read's index, for workloads whose stragglers come in a fixed
// pattern, as the experiment's do (a budget sized for 20 % of reads keeps
// up with 2 reads in 10, not with a random 20 %).
using Workload = std::function<Draw(int read, std::mt19937&)>;

struct Named {
  const char* name;
  Workload draw;
};

std::vector<Named> Workloads() {
  return {
      {"seed: 2 ms +-5 %, 2 reads in 10 at 40 ms",
       [](int read, std::mt19937& r) {
         std::uniform_real_distribution<double> jitter(0.95, 1.05);
         const bool straggler = read % 10 < 2;
         return Draw{(straggler ? 40.0 : 2.0) * jitter(r), 2.0 * jitter(r)};
       }},
      {"seed on a loaded host: 2 ms + exp(0.7 ms), 2 in 10 at 40 ms",
       [](int read, std::mt19937& r) {
         std::exponential_distribution<double> noise(1 / 0.7);
         const bool straggler = read % 10 < 2;
         return Draw{(straggler ? 40.0 : 2.0) + noise(r), 2.0 + noise(r)};
       }},
      {"seed on a very loaded host: 2 ms + exp(2 ms), 2 in 10 at 40 ms",
       [](int read, std::mt19937& r) {
         std::exponential_distribution<double> noise(1 / 2.0);
         const bool straggler = read % 10 < 2;
         return Draw{(straggler ? 40.0 : 2.0) + noise(r), 2.0 + noise(r)};
       }},
      {"continuous: 1 ms + exp(2 ms)",
       [](int, std::mt19937& r) {
         std::exponential_distribution<double> tail(1 / 2.0);
         return Draw{1.0 + tail(r), 1.0 + tail(r)};
       }},
      {"correlated: 1 read in 10 at 40 ms on every replica",
       [](int read, std::mt19937& r) {
         std::uniform_real_distribution<double> jitter(0.95, 1.05);
         const double base = read % 10 == 0 ? 40.0 : 2.0;
         return Draw{base * jitter(r), base * jitter(r)};
       }},
  };
}

void Run(const Named& workload, std::optional<DelayRule> rule, double margin) {
  std::mt19937 random(7);
  CensoredLatencySketch sketch({absl::Seconds(4), 4});
  HedgeBudget budget(HedgeBudgetConfig{kFraction, kBurst});
  absl::Time now = absl::UnixEpoch();
  absl::Duration delay = absl::Milliseconds(5);
  std::vector<double> latencies;
  int hedges = 0;
  double delay_sum_ms = 0;
  for (int i = 0; i < kReads; ++i) {
    budget.OnAdmission();
    if (rule.has_value() && i >= 100) {
      delay = ChooseHedgeDelay(sketch, kFraction, *rule, margin).value();
    }
    delay_sum_ms += absl::ToDoubleMilliseconds(delay);
    const Draw draw = workload.draw(i, random);
    const double d = absl::ToDoubleMilliseconds(delay);
    double latency = draw.primary_ms;
    if (draw.primary_ms > d && budget.TryConsume()) {
      ++hedges;
      latency = std::min(draw.primary_ms, d + draw.hedge_ms);
    }
    if (latency < draw.primary_ms) {
      sketch.AddCensored(now, absl::Milliseconds(latency));
    } else {
      sketch.AddComplete(now, absl::Milliseconds(draw.primary_ms));
    }
    latencies.push_back(latency);
    now += absl::Milliseconds(latency);
  }
  std::sort(latencies.begin(), latencies.end());
  std::printf(
      "{\"workload\":\"%s\",\"rule\":\"%s\",\"margin\":%.2f,"
      "\"mean_delay_ms\":%.2f,"
      "\"hedged\":%.3f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"p999_ms\":%.2f}\n",
      workload.name, rule.has_value() ? DelayRuleName(*rule) : "fixed_5ms",
      rule.has_value() && *rule != DelayRule::kTailQuantile ? margin : 1.0,
      delay_sum_ms / kReads, static_cast<double>(hedges) / kReads,
      latencies[kReads / 2], latencies[kReads * 99 / 100],
      latencies[kReads * 999 / 1000]);
}

}  // namespace
}  // namespace tailgate::hedge

int main() {
  using tailgate::hedge::DelayRule;
  for (const auto& workload : tailgate::hedge::Workloads()) {
    tailgate::hedge::Run(workload, std::nullopt, 1.0);
    tailgate::hedge::Run(workload, DelayRule::kTailQuantile, 1.0);
    for (DelayRule rule : {DelayRule::kScaledTail, DelayRule::kTailOrBody}) {
      for (double margin : {1.25, 1.5}) {
        tailgate::hedge::Run(workload, rule, margin);
      }
    }
  }
  return 0;
}
