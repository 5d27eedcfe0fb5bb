#include "experiment/report/plot_files.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "experiment/report/plots.h"
#include "tests/process/child_process.h"

namespace tailgate::experiment {

std::string Join(const std::string& dir, const std::string& file) {
  return (std::filesystem::path(dir) / file).string();
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status RunGnuplot(const std::string& script) {
  testing::ChildOptions options;
  options.argv = {kGnuplot, script};
  // stdout carries the JSON lines: gnuplot's own output goes to stderr.
  options.stdout_to = testing::Output::ParentStderr();
  absl::StatusOr<testing::ChildResult> run = testing::RunToExit(options);
  if (!run.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot run ", kGnuplot));
  }
  if (run->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(kGnuplot, " failed on ", script, " (see stderr)"));
  }
  return absl::OkStatus();
}

std::string ScriptHeader(const std::string& png, const std::string& title) {
  return absl::StrCat("set terminal pngcairo size 960,600 noenhanced\n",
                      "set output '", png, "'\n", "set title '", title, "'\n",
                      "set grid\n");
}

std::string Number(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.4f", value) : "NaN";
}

}  // namespace tailgate::experiment
