#include "experiment/prometheus_text.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tailgate::experiment {
namespace {

// Whether `series` ("name{labels}" or "name") is `name` and carries `label`.
bool SeriesMatches(absl::string_view series, absl::string_view name,
                   absl::string_view label) {
  if (!absl::ConsumePrefix(&series, name)) return false;
  if (series.empty()) return label.empty();
  if (series.front() != '{') return false;  // a longer name
  return absl::StrContains(series, label);
}

}  // namespace

double SumSamples(absl::string_view text, absl::string_view name,
                  absl::string_view label) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line.front() == '#') continue;
    // Label values may hold spaces; the value follows the closing brace.
    const size_t brace = line.rfind('}');
    const size_t space =
        line.find(' ', brace == absl::string_view::npos ? 0 : brace);
    if (space == absl::string_view::npos) continue;
    if (!SeriesMatches(line.substr(0, space), name, label)) continue;
    absl::string_view value = line.substr(space + 1);
    value = value.substr(0, value.find(' '));  // drop a timestamp
    double sample = 0;
    if (absl::SimpleAtod(value, &sample)) sum += sample;
  }
  return sum;
}

}  // namespace tailgate::experiment
