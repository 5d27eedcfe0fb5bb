// The files behind every plot of plots.h: data and script paths in the
// plot directory, writing them, and running gnuplot on a script. Internal
// to the plots library.
//
// Thread safety: functions without shared state.

#ifndef TAILGATE_EXPERIMENT_REPORT_PLOT_FILES_H_
#define TAILGATE_EXPERIMENT_REPORT_PLOT_FILES_H_

#include <string>

#include "absl/status/status.h"

namespace tailgate::experiment {

// `dir`/`file`.
std::string Join(const std::string& dir, const std::string& file);

// Replaces `path`'s contents with `text`.
absl::Status WriteFile(const std::string& path, const std::string& text);

// Runs gnuplot on `script`; its output goes to stderr, never stdout.
absl::Status RunGnuplot(const std::string& script);

// A 960x600 PNG at `png`, headed `title`, with a grid.
std::string ScriptHeader(const std::string& png, const std::string& title);

// `value` with 4 decimals, or "NaN", gnuplot's missing value.
std::string Number(double value);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_PLOT_FILES_H_
