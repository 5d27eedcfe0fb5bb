#include "experiment/measure/prometheus_text.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tailgate::experiment {
namespace {

// Whether `series` ("name{labels}" or "name") is `name` and carries every
// one of `labels` (an empty label is carried by any series).
bool SeriesMatches(absl::string_view series, absl::string_view name,
                   absl::Span<const absl::string_view> labels) {
  if (!absl::ConsumePrefix(&series, name)) return false;
  if (!series.empty() && series.front() != '{') return false;  // longer name
  for (absl::string_view label : labels) {
    if (!label.empty() && !absl::StrContains(series, label)) return false;
  }
  return true;
}

}  // namespace

double SumSamples(absl::string_view text, absl::string_view name,
                  absl::string_view label) {
  return SumSamplesWithLabels(text, name, {label});
}

double SumSamplesWithLabels(absl::string_view text, absl::string_view name,
                            absl::Span<const absl::string_view> labels) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line.front() == '#') continue;
    // Label values may hold spaces; the value follows the closing brace.
    const size_t brace = line.rfind('}');
    const size_t space =
        line.find(' ', brace == absl::string_view::npos ? 0 : brace);
    if (space == absl::string_view::npos) continue;
    if (!SeriesMatches(line.substr(0, space), name, labels)) continue;
    absl::string_view value = line.substr(space + 1);
    value = value.substr(0, value.find(' '));  // drop a timestamp
    double sample = 0;
    if (absl::SimpleAtod(value, &sample)) sum += sample;
  }
  return sum;
}

}  // namespace tailgate::experiment
