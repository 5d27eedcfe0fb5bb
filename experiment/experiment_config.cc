#include "experiment/experiment_config.h"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tailgate::experiment {
namespace {

constexpr int64_t kMaxRequests = 10'000'000;
constexpr int64_t kMaxWarmup = 100'000;
constexpr int64_t kMaxRate = 1'000'000;
constexpr int kMaxConcurrency = 1024;
constexpr absl::Duration kMinDuration = absl::Milliseconds(100);
constexpr absl::Duration kMaxDuration = absl::Hours(1);
// Scheduled sends per open-loop point: bounds the generator's memory.
constexpr double kMaxSendsPerPoint = 20'000'000;

constexpr std::pair<const char*, Scenario> kScenarios[] = {
    {"seed", Scenario::kSeed},
    {"correlated", Scenario::kCorrelated},
    {"open_loop", Scenario::kOpenLoop},
    {"throughput", Scenario::kThroughput},
};

absl::Status Invalid(absl::string_view flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", message));
}

// `why`, when not empty, explains the range in the error message.
absl::StatusOr<int64_t> ParseInteger(absl::string_view flag,
                                     const std::string& text, int64_t min,
                                     int64_t max, absl::string_view why = "") {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return Invalid(flag, absl::StrCat("want an integer, got \"", text, "\""));
  }
  if (value < min || value > max) {
    return Invalid(flag,
                   absl::StrCat("must be in [", min, ", ", max, "]",
                                why.empty() ? "" : " ", why, ", got ", value));
  }
  return value;
}

absl::StatusOr<double> ParseRate(absl::string_view flag,
                                 absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
    return Invalid(flag,
                   absl::StrCat("want a rate in req/s, got \"", text, "\""));
  }
  if (value <= 0 || value > kMaxRate) {
    return Invalid(
        flag, absl::StrCat("must be in (0, ", kMaxRate, "] req/s, got ", text));
  }
  return value;
}

absl::StatusOr<std::vector<double>> ParseRates(const std::string& text) {
  std::vector<double> rates;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    absl::StatusOr<double> rate = ParseRate("sweep_rates", item);
    if (!rate.ok()) return rate.status();
    rates.push_back(*rate);
  }
  return rates;
}

absl::StatusOr<Scenario> ParseScenario(const std::string& text) {
  if (text.empty()) return Scenario::kSeed;
  std::vector<std::string> names;
  for (const auto& [name, scenario] : kScenarios) {
    if (text == name) return scenario;
    names.push_back(name);
  }
  return Invalid("scenario",
                 absl::StrCat("want one of ", absl::StrJoin(names, ", "),
                              "; got \"", text, "\""));
}

// An error for the first of `flags` given although `scenario` ignores it.
absl::Status RejectUnused(
    Scenario scenario,
    std::initializer_list<std::pair<const char*, bool>> flags) {
  for (const auto& [flag, given] : flags) {
    if (given) {
      return Invalid(flag, absl::StrCat("not used by --scenario=",
                                        ScenarioName(scenario)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckScenarioFlags(Scenario scenario, const RawFlags& flags) {
  const bool straggler =
      scenario == Scenario::kSeed || scenario == Scenario::kCorrelated;
  const bool open_loop = scenario == Scenario::kOpenLoop;
  const bool throughput = scenario == Scenario::kThroughput;
  absl::Status status = RejectUnused(
      scenario, {{"requests", !straggler && !flags.requests.empty()},
                 {"rate", !open_loop && !flags.rate.empty()},
                 {"sweep", !open_loop && flags.sweep},
                 {"sweep_rates", !open_loop && !flags.sweep_rates.empty()},
                 {"duration", straggler && !flags.duration.empty()},
                 {"concurrency", !throughput && !flags.concurrency.empty()},
                 {"plot_dir", throughput && !flags.plot_dir.empty()}});
  if (!status.ok()) return status;
  if (flags.sweep && !flags.rate.empty()) {
    return Invalid("rate",
                   "a single rate and --sweep exclude each other; "
                   "give the sweep's rates with --sweep_rates");
  }
  if (!flags.sweep && !flags.sweep_rates.empty()) {
    return Invalid("sweep_rates", "needs --sweep");
  }
  return absl::OkStatus();
}

absl::Status ParseOpenLoop(const RawFlags& flags, ExperimentConfig& config) {
  if (flags.sweep) {
    if (flags.sweep_rates.empty()) {
      config.rates.assign(std::begin(kDefaultSweepRates),
                          std::end(kDefaultSweepRates));
    } else {
      absl::StatusOr<std::vector<double>> rates = ParseRates(flags.sweep_rates);
      if (!rates.ok()) return rates.status();
      config.rates = *std::move(rates);
    }
  } else if (flags.rate.empty()) {
    config.rates = {kDefaultRate};
  } else {
    absl::StatusOr<double> rate = ParseRate("rate", flags.rate);
    if (!rate.ok()) return rate.status();
    config.rates = {*rate};
  }
  const double seconds = absl::ToDoubleSeconds(config.duration);
  for (double rate : config.rates) {
    const char* flag = flags.sweep ? "sweep_rates" : "rate";
    if (rate * seconds < 1) {
      return Invalid(flag, absl::StrCat(rate, " req/s for --duration=",
                                        absl::FormatDuration(config.duration),
                                        " schedules no read"));
    }
    if (rate * seconds > kMaxSendsPerPoint) {
      return Invalid(flag, absl::StrCat(rate, " req/s for --duration=",
                                        absl::FormatDuration(config.duration),
                                        " schedules more than ",
                                        kMaxSendsPerPoint, " reads"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const char* ScenarioName(Scenario scenario) {
  for (const auto& [name, value] : kScenarios) {
    if (value == scenario) return name;
  }
  return "unknown";
}

absl::StatusOr<ExperimentConfig> ConfigFromRawFlags(const RawFlags& flags) {
  ExperimentConfig config;
  absl::StatusOr<Scenario> scenario = ParseScenario(flags.scenario);
  if (!scenario.ok()) return scenario.status();
  config.scenario = *scenario;
  absl::Status status = CheckScenarioFlags(config.scenario, flags);
  if (!status.ok()) return status;

  if (!flags.requests.empty()) {
    absl::StatusOr<int64_t> requests =
        ParseInteger("requests", flags.requests, kMinRequests, kMaxRequests,
                     "(fewer samples cannot support a p99)");
    if (!requests.ok()) return requests.status();
    config.requests = *requests;
  }
  if (!flags.warmup.empty()) {
    absl::StatusOr<int64_t> warmup =
        ParseInteger("warmup", flags.warmup, 0, kMaxWarmup);
    if (!warmup.ok()) return warmup.status();
    // The sidecar rotates its primary per admitted read; an even warm-up
    // keeps the first measured read on replica A, as on a fresh sidecar.
    if (*warmup % 2 != 0) {
      return Invalid("warmup",
                     absl::StrCat("must be even, so that the sidecar's "
                                  "primary rotation starts the measured "
                                  "reads on replica A; got ",
                                  *warmup));
    }
    config.warmup = *warmup;
  }
  if (!flags.duration.empty()) {
    absl::Duration duration;
    if (!absl::ParseDuration(flags.duration, &duration)) {
      return Invalid("duration", absl::StrCat("want a duration such as 5s, "
                                              "got \"",
                                              flags.duration, "\""));
    }
    if (duration < kMinDuration || duration > kMaxDuration) {
      return Invalid(
          "duration",
          absl::StrCat("must be in [", absl::FormatDuration(kMinDuration), ", ",
                       absl::FormatDuration(kMaxDuration), "], got ",
                       flags.duration));
    }
    config.duration = duration;
  }
  if (!flags.concurrency.empty()) {
    absl::StatusOr<int64_t> concurrency =
        ParseInteger("concurrency", flags.concurrency, 1, kMaxConcurrency);
    if (!concurrency.ok()) return concurrency.status();
    config.concurrency = static_cast<int>(*concurrency);
  }
  if (config.scenario == Scenario::kOpenLoop) {
    config.sweep = flags.sweep;
    status = ParseOpenLoop(flags, config);
    if (!status.ok()) return status;
  }
  config.plot_dir = flags.plot_dir;
  config.tailgate = flags.tailgate;
  return config;
}

}  // namespace tailgate::experiment
