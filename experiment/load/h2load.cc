#include "experiment/load/h2load.h"

#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tailgate::experiment {
namespace {

// "36us", "98.18ms", "1.5s".
bool ParseH2loadDuration(absl::string_view text, absl::Duration* out) {
  double value = 0;
  for (const auto& [suffix, unit] :
       {std::pair<absl::string_view, absl::Duration>{"us",
                                                      absl::Microseconds(1)},
        {"ms", absl::Milliseconds(1)},
        {"s", absl::Seconds(1)}}) {
    absl::string_view number = text;
    if (absl::ConsumeSuffix(&number, suffix) &&
        absl::SimpleAtod(number, &value)) {
      *out = value * unit;
      return true;
    }
  }
  return false;
}

// The number before `label` in "15471 total, 15599 started, ...".
bool CountBefore(absl::string_view line, absl::string_view label,
                 int64_t* out) {
  for (absl::string_view part : absl::StrSplit(line, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (!absl::ConsumeSuffix(&part, label)) continue;
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(part), out);
  }
  return false;
}

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("h2load report without a readable ", what));
}

}  // namespace

std::vector<std::string> H2loadArgs(const H2loadRun& run) {
  std::vector<std::string> args = {
      "h2load", "-t", "1", absl::StrCat("-c", run.connections),
      absl::StrCat("-m", run.streams),
      absl::StrCat("-D", absl::ToDoubleSeconds(run.duration))};
  if (run.total_rate > 0) {
    const double per_connection = run.total_rate / run.connections;
    args.push_back(absl::StrCat("--rps=", std::round(per_connection)));
  }
  if (run.grpc) {
    args.insert(args.end(), {"-d", run.grpc_body_file, "-H",
                             "content-type: application/grpc", "-H",
                             "te: trailers"});
  } else {
    args.push_back("--h1");
  }
  args.push_back(run.url);
  return args;
}

absl::StatusOr<H2loadReport> ParseH2loadReport(absl::string_view text) {
  H2loadReport report;
  bool saw_finished = false, saw_requests = false, saw_codes = false,
       saw_time = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "finished in ")) {
      // "4.01s, 3867.75 req/s, 1.04MB/s"
      std::vector<absl::string_view> parts = absl::StrSplit(line, ", ");
      absl::string_view rate = parts.size() > 1 ? parts[1] : "";
      saw_finished = absl::ConsumeSuffix(&rate, " req/s") &&
                     absl::SimpleAtod(rate, &report.reads_per_second);
    } else if (absl::ConsumePrefix(&line, "requests: ")) {
      int64_t failed = 0, errored = 0, timeout = 0;
      saw_requests = CountBefore(line, "done", &report.done) &&
                     CountBefore(line, "succeeded", &report.succeeded) &&
                     CountBefore(line, "failed", &failed) &&
                     CountBefore(line, "errored", &errored) &&
                     CountBefore(line, "timeout", &timeout);
      report.failed = failed + errored + timeout;
    } else if (absl::ConsumePrefix(&line, "status codes: ")) {
      int64_t c3 = 0, c4 = 0, c5 = 0;
      saw_codes = CountBefore(line, "3xx", &c3) &&
                  CountBefore(line, "4xx", &c4) &&
                  CountBefore(line, "5xx", &c5);
      report.non_2xx = c3 + c4 + c5;
    } else if (absl::ConsumePrefix(&line, "time for request:")) {
      // min max mean sd +/-sd
      std::vector<absl::string_view> fields =
          absl::StrSplit(line, ' ', absl::SkipEmpty());
      saw_time = fields.size() >= 3 &&
                 ParseH2loadDuration(fields[2], &report.mean_latency);
    }
  }
  if (!saw_finished) return Malformed("'finished in' line");
  if (!saw_requests) return Malformed("'requests:' line");
  if (!saw_codes) return Malformed("'status codes:' line");
  // h2load prints no latency when no request completed.
  if (!saw_time && report.done > 0) return Malformed("'time for request' line");
  return report;
}

}  // namespace tailgate::experiment
