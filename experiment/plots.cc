#include "experiment/plots.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

extern char** environ;

namespace tailgate::experiment {
namespace {

// Points of a CDF curve: all of the tail, every k-th point of the body.
constexpr size_t kCdfBodyPoints = 5000;
constexpr size_t kCdfTailPoints = 2000;

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

// Runs gnuplot on `script`; its output goes to stderr, never stdout.
absl::Status RunGnuplot(const std::string& script) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  std::string name = "gnuplot";
  std::string arg = script;
  char* argv[] = {name.data(), arg.data(), nullptr};
  pid_t pid = 0;
  const int error =
      posix_spawn(&pid, kGnuplot, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return absl::UnavailableError(absl::StrCat("cannot run ", kGnuplot));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
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

std::string CdfData(const std::vector<absl::Duration>& sorted) {
  std::string data = "# latency_ms fraction_of_reads_at_or_below\n";
  const size_t n = sorted.size();
  const size_t tail_from = n > kCdfTailPoints ? n - kCdfTailPoints : 0;
  const size_t step = std::max<size_t>(1, tail_from / kCdfBodyPoints);
  for (size_t i = 0; i < n; ++i) {
    if (i < tail_from && i % step != 0) continue;
    absl::StrAppendFormat(&data, "%.4f %.6f\n",
                          absl::ToDoubleMilliseconds(sorted[i]),
                          static_cast<double>(i + 1) / n);
  }
  return data;
}

// "NaN" is gnuplot's missing value.
std::string Number(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.4f", value) : "NaN";
}

}  // namespace

absl::Status PreparePlotDir(const std::string& dir) {
  if (access(kGnuplot, X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--plot_dir: needs gnuplot, and ", kGnuplot,
                     " is not installed (tools/bootstrap installs it)"));
  }
  if (absl::StrContains(dir, "'")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--plot_dir: no quote (') allowed, got ", dir));
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || access(dir.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--plot_dir: cannot create or write ", dir));
  }
  return absl::OkStatus();
}

absl::Status PlotLatencyCdf(const std::string& dir, const std::string& name,
                            const std::string& title,
                            const std::vector<CdfSeries>& series) {
  std::vector<std::string> curves;
  for (const CdfSeries& curve : series) {
    if (curve.sorted.empty()) continue;
    const std::string data =
        Join(dir, absl::StrCat(name, "_cdf_", curve.mode, ".dat"));
    absl::Status written = WriteFile(data, CdfData(curve.sorted));
    if (!written.ok()) return written;
    curves.push_back(absl::StrCat("'", data,
                                  "' using 1:2 with steps linewidth 2 title '",
                                  curve.mode, "'"));
  }
  if (curves.empty()) return absl::OkStatus();
  const std::string script = Join(dir, name + "_cdf.gp");
  absl::Status written = WriteFile(
      script, absl::StrCat(ScriptHeader(Join(dir, name + "_cdf.png"), title),
                           "set logscale x\n"
                           "set xlabel 'latency (ms, log scale)'\n"
                           "set ylabel 'fraction of reads at or below'\n"
                           "set yrange [0:1.02]\n"
                           "set key bottom right\n"
                           "plot ",
                           absl::StrJoin(curves, ", \\\n     "), "\n"));
  if (!written.ok()) return written;
  return RunGnuplot(script);
}

absl::Status PlotSweep(const std::string& dir,
                       const std::vector<SweepPoint>& points) {
  // One data file per policy: offered_rps p99_ms attempts_per_request.
  std::map<std::string, std::string> data_by_mode;
  for (const SweepPoint& point : points) {
    std::string& data = data_by_mode[point.mode];
    if (data.empty()) data = "# offered_rps p99_ms attempts_per_request\n";
    const double p99 = point.latency.samples == 0
                           ? NAN
                           : absl::ToDoubleMilliseconds(point.latency.p99);
    absl::StrAppend(&data, Number(point.offered_rps), " ", Number(p99), " ",
                    Number(point.attempts_per_request), "\n");
  }
  std::vector<std::string> p99_curves;
  std::vector<std::string> amplification_curves;
  for (const auto& [mode, data] : data_by_mode) {
    const std::string path = Join(dir, "open_loop_sweep_" + mode + ".dat");
    absl::Status written = WriteFile(path, data);
    if (!written.ok()) return written;
    p99_curves.push_back(absl::StrCat(
        "'", path, "' using 1:2 with linespoints linewidth 2 title '", mode,
        "'"));
    amplification_curves.push_back(absl::StrCat(
        "'", path, "' using 1:3 with linespoints linewidth 2 title '", mode,
        "'"));
  }
  const std::string common =
      "set logscale x\n"
      "set xlabel 'offered load (req/s, log scale)'\n"
      "set key top left\n";
  const std::string p99_script = Join(dir, "open_loop_p99.gp");
  absl::Status written = WriteFile(
      p99_script,
      absl::StrCat(ScriptHeader(Join(dir, "open_loop_p99.png"),
                                "open loop: p99 latency vs offered load"),
                   common,
                   "set logscale y\n"
                   "set ylabel 'p99 latency of ok reads (ms, log scale)'\n"
                   "plot ",
                   absl::StrJoin(p99_curves, ", \\\n     "), "\n"));
  if (!written.ok()) return written;
  const std::string amplification_script =
      Join(dir, "open_loop_amplification.gp");
  written = WriteFile(
      amplification_script,
      absl::StrCat(
          ScriptHeader(Join(dir, "open_loop_amplification.png"),
                       "open loop: upstream attempts per admitted read"),
          common,
          "set ylabel 'attempts per admitted read'\n"
          "set yrange [0.9:*]\n"
          "plot ",
          absl::StrJoin(amplification_curves, ", \\\n     "), "\n"));
  if (!written.ok()) return written;
  absl::Status plotted = RunGnuplot(p99_script);
  if (!plotted.ok()) return plotted;
  return RunGnuplot(amplification_script);
}

}  // namespace tailgate::experiment
