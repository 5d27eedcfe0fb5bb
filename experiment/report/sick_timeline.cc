#include "experiment/report/sick_timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace tailgate::experiment {
namespace {

constexpr absl::Duration kLastWindow = absl::Seconds(10);

// The second holding `at`, from 0 to seconds - 1.
size_t SecondOf(absl::Duration at, int seconds) {
  if (at <= absl::ZeroDuration()) return 0;
  const int64_t second = absl::ToInt64Seconds(at);  // rounds down
  return static_cast<size_t>(std::min<int64_t>(second, seconds - 1));
}

double Ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator
                         : std::numeric_limits<double>::quiet_NaN();
}

double AttemptsPerRead(const TargetCounters& from, const TargetCounters& to) {
  return Ratio(to.attempts - from.attempts, to.requests - from.requests);
}

// The reads into `figures`: the totals, the errors, each second's counts,
// and the latency percentiles over the case and per second.
void AddReads(const std::vector<ReadRecord>& reads, const SickCaseShape& shape,
              SickCaseFigures& figures) {
  std::vector<absl::Duration> all;
  std::vector<std::vector<absl::Duration>> by_second(shape.seconds);
  for (const ReadRecord& read : reads) {
    const bool ok = read.error.empty();
    const size_t second = SecondOf(read.scheduled, shape.seconds);
    SecondFigures& figures_of_second = figures.per_second[second];
    ++figures.reads;
    ++figures_of_second.reads;
    if (!ok) {
      ++figures.failed;
      ++figures_of_second.failed;
      ++figures.errors[read.error];
    }
    const absl::Duration latency = ok ? read.latency : shape.deadline;
    all.push_back(latency);
    by_second[second].push_back(latency);
  }
  std::sort(all.begin(), all.end());
  figures.latency = Summarize(all);
  for (int t = 0; t < shape.seconds; ++t) {
    std::vector<absl::Duration>& latencies = by_second[t];
    if (latencies.empty()) continue;
    std::sort(latencies.begin(), latencies.end());
    figures.per_second[t].p99 = NearestRank(latencies, kP99);
  }
}

// The counters' changes into each second: attempts, and primary shares.
void AddCounters(const std::vector<CounterSample>& samples,
                 const SickCaseShape& shape, SickCaseFigures& figures) {
  std::vector<std::vector<double>> primaries(
      shape.seconds, std::vector<double>(shape.replicas, 0));
  for (size_t i = 1; i < samples.size(); ++i) {
    const TargetCounters& before = samples[i - 1].value;
    const TargetCounters& after = samples[i].value;
    const size_t second = SecondOf(samples[i - 1].at, shape.seconds);
    for (int r = 0; r < shape.replicas; ++r) {
      primaries[second][r] += after.primaries[r] - before.primaries[r];
    }
    figures.per_second[second].attempts += after.attempts - before.attempts;
  }
  for (int t = 0; t < shape.seconds; ++t) {
    double total = 0;
    for (double count : primaries[t]) total += count;
    if (total <= 0) continue;
    for (double count : primaries[t]) {
      figures.per_second[t].primary_shares.push_back(count / total);
    }
  }
  const TargetCounters& last = samples.back().value;
  figures.attempts_per_read = AttemptsPerRead(samples.front().value, last);
  const absl::Duration window_start =
      absl::Seconds(shape.seconds) - kLastWindow;
  const auto from = std::find_if(
      samples.begin(), samples.end(),
      [window_start](const CounterSample& s) { return s.at >= window_start; });
  figures.attempts_per_read_last10s = AttemptsPerRead(
      (from == samples.end() ? samples.front() : *from).value, last);
}

std::optional<int64_t> FirstFastPrimary(const SickCaseFigures& figures,
                                        const SickCaseShape& shape) {
  if (!shape.heal_at.has_value()) return std::nullopt;
  const int64_t heal_second =
      static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(*shape.heal_at)));
  const double enough = 1.0 / (2.0 * shape.replicas);
  for (int64_t t = std::max<int64_t>(heal_second, 0); t < shape.seconds; ++t) {
    const std::vector<double>& shares = figures.per_second[t].primary_shares;
    if (!shares.empty() && shares.back() >= enough) return t - heal_second;
  }
  return std::nullopt;
}

}  // namespace

SickCaseFigures SummarizeSickCase(const std::vector<ReadRecord>& reads,
                                  const std::vector<CounterSample>& samples,
                                  const SickCaseShape& shape) {
  SickCaseFigures figures;
  figures.per_second.resize(shape.seconds);
  AddReads(reads, shape, figures);
  AddCounters(samples, shape, figures);
  figures.first_fast_primary_s = FirstFastPrimary(figures, shape);
  return figures;
}

void AddSickCaseFields(const SickCaseFigures& figures, JsonObject& line) {
  JsonObject errors;
  for (const auto& [label, count] : figures.errors) errors.AddInt(label, count);
  line.AddInt("reads", figures.reads)
      .AddInt("failed", figures.failed)
      .AddObject("errors", errors);
  if (figures.latency.samples == 0) {
    line.AddNull("p50_ms").AddNull("p99_ms").AddNull("max_ms");
  } else {
    line.AddMillis("p50_ms", figures.latency.p50)
        .AddMillis("p99_ms", figures.latency.p99)
        .AddMillis("max_ms", figures.latency.max);
  }
  line.AddDouble("attempts_per_read", figures.attempts_per_read, 3)
      .AddDouble("attempts_per_read_last10s", figures.attempts_per_read_last10s,
                 3);
  if (figures.first_fast_primary_s.has_value()) {
    line.AddInt("first_fast_primary_s", *figures.first_fast_primary_s);
  } else {
    line.AddNull("first_fast_primary_s");
  }
  std::vector<JsonObject> seconds;
  for (size_t t = 0; t < figures.per_second.size(); ++t) {
    const SecondFigures& second = figures.per_second[t];
    JsonObject entry;
    entry.AddInt("t", static_cast<int64_t>(t))
        .AddInt("reads", second.reads)
        .AddInt("failed", second.failed);
    if (second.p99.has_value()) {
      entry.AddMillis("p99_ms", *second.p99);
    } else {
      entry.AddNull("p99_ms");
    }
    entry.AddDoubleList("primaries", second.primary_shares, 3)
        .AddInt("attempts", std::llround(second.attempts));
    seconds.push_back(std::move(entry));
  }
  line.AddObjectList("per_second", seconds);
}

}  // namespace tailgate::experiment
