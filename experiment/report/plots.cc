#include "experiment/report/plots.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "experiment/report/plot_files.h"

namespace tailgate::experiment {
namespace {

// Points of a CDF curve: all of the tail, every k-th point of the body.
constexpr size_t kCdfBodyPoints = 5000;
constexpr size_t kCdfTailPoints = 2000;

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
  // One data file per policy; columns 2, 3, 4 as below.
  struct Series {
    std::string data =
        "# offered_rps p99_ms attempts_per_request "
        "achieved_rps\n";
    std::string path;
    bool plottable[5] = {};  // column has a value gnuplot can draw
  };
  std::map<std::string, Series> by_mode;
  for (const SweepPoint& point : points) {
    Series& series = by_mode[point.mode];
    const bool p99_holds = point.ok * 100 >= point.scheduled * 99;
    const double columns[] = {
        point.offered_rps,
        p99_holds && point.latency.samples > 0
            ? absl::ToDoubleMilliseconds(point.latency.p99)
            : NAN,
        point.attempts_per_request, point.achieved_rps};
    for (int i = 0; i < 4; ++i) {
      absl::StrAppend(&series.data, i == 0 ? "" : " ", Number(columns[i]));
      // Both y axes that are log scale need positive values.
      series.plottable[i + 1] |= std::isfinite(columns[i]) && columns[i] > 0;
    }
    series.data += "\n";
  }
  for (auto& [mode, series] : by_mode) {
    series.path = Join(dir, "open_loop_sweep_" + mode + ".dat");
    absl::Status written = WriteFile(series.path, series.data);
    if (!written.ok()) return written;
  }
  // One curve per policy with something to draw in `column`; empty when no
  // policy has.
  auto curves = [&by_mode](int column, const std::string& reference) {
    std::vector<std::string> plotted;
    for (const auto& [mode, series] : by_mode) {
      if (!series.plottable[column]) continue;
      plotted.push_back(absl::StrCat("'", series.path, "' using 1:", column,
                                     " with linespoints linewidth 2 title '",
                                     mode, "'"));
    }
    if (plotted.empty()) return std::string();
    if (!reference.empty()) plotted.push_back(reference);
    return absl::StrJoin(plotted, ", \\\n     ");
  };
  const std::string common =
      "set logscale x\n"
      "set xlabel 'offered load (req/s, log scale)'\n"
      "set key top left\n";
  const struct {
    std::string name;
    std::string title;
    std::string settings;
    std::string plot;
  } plots[] = {
      {"open_loop_p99",
       "open loop: p99 latency vs offered load (no point where over 1 % of "
       "reads failed)",
       "set logscale y\n"
       "set ylabel 'p99 from the scheduled send (ms, log scale)'\n",
       curves(2, "")},
      {"open_loop_amplification",
       "open loop: upstream attempts per admitted read",
       "set ylabel 'attempts per admitted read'\n"
       "set yrange [0.9:*]\n",
       curves(3, "")},
      {"open_loop_goodput", "open loop: ok reads per second vs offered load",
       "set logscale y\n"
       "set ylabel 'ok reads per second (log scale)'\n",
       curves(4, "x with lines dashtype 2 title 'offered'")},
  };
  for (const auto& plot : plots) {
    if (plot.plot.empty()) continue;  // gnuplot refuses an empty plot
    const std::string script = Join(dir, plot.name + ".gp");
    absl::Status written = WriteFile(
        script,
        absl::StrCat(ScriptHeader(Join(dir, plot.name + ".png"), plot.title),
                     common, plot.settings, "plot ", plot.plot, "\n"));
    if (!written.ok()) return written;
    absl::Status plotted = RunGnuplot(script);
    if (!plotted.ok()) return plotted;
  }
  return absl::OkStatus();
}

absl::Status PlotTimeline(const std::string& dir, const std::string& name,
                          const std::string& title,
                          const std::vector<PolicyTimeline>& policies) {
  std::vector<std::string> latency;
  std::vector<std::string> amplification;
  int color = 0;  // one colour per policy, in every panel
  for (const PolicyTimeline& one : policies) {
    if (one.chunks.empty()) continue;
    ++color;
    std::string data =
        "# first_read p99_ms hedge_delay_ms attempts_per_request\n";
    for (const PolicyTimeline::Chunk& chunk : one.chunks) {
      absl::StrAppend(&data, chunk.first_read, " ",
                      Number(absl::ToDoubleMilliseconds(chunk.p99)), " ",
                      Number(absl::ToDoubleMilliseconds(chunk.hedge_delay)),
                      " ", Number(chunk.attempts_per_request), "\n");
    }
    const std::string path =
        Join(dir, absl::StrCat(name, "_timeline_", one.mode, ".dat"));
    absl::Status written = WriteFile(path, data);
    if (!written.ok()) return written;
    latency.push_back(absl::StrCat("'", path,
                                   "' using 1:2 with steps linewidth 2 "
                                   "linecolor ",
                                   color, " title '", one.mode, " p99'"));
    latency.push_back(absl::StrCat("'", path,
                                   "' using 1:3 with steps dashtype 2 "
                                   "linecolor ",
                                   color, " title '", one.mode,
                                   " hedge delay'"));
    amplification.push_back(absl::StrCat(
        "'", path, "' using 1:4 with steps linewidth 2 linecolor ", color,
        " title '", one.mode, "'"));
  }
  if (latency.empty()) return absl::OkStatus();
  const std::string png = Join(dir, name + "_timeline.png");
  const std::string script = Join(dir, name + "_timeline.gp");
  absl::Status written = WriteFile(
      script,
      absl::StrCat(
          "set terminal pngcairo size 960,800 noenhanced\n", "set output '",
          png, "'\n", "set grid\n", "set multiplot layout 2,1 title '",
          title, "'\n", "set logscale y\n",
          "set ylabel 'ms (log scale)'\n", "set key outside right\n",
          "plot ", absl::StrJoin(latency, ", \\\n     "), "\n",
          "unset logscale y\n", "set xlabel 'read'\n",
          "set ylabel 'attempts per read'\n", "set yrange [0.95:*]\n",
          "plot ", absl::StrJoin(amplification, ", \\\n     "), "\n",
          "unset multiplot\n"));
  if (!written.ok()) return written;
  return RunGnuplot(script);
}

namespace {

// The data of one chaos arm: a row per bucket, then one at the end of the
// last so that `with steps` draws it whole.
std::string ChaosData(const ChaosTimeline& arm) {
  std::string data =
      "# start_s middle_s failed_reads fallbacks_taken fallbacks_refused\n";
  const double width = absl::ToDoubleSeconds(arm.bucket);
  for (size_t i = 0; i <= arm.buckets.size(); ++i) {
    const ChaosTimeline::Bucket bucket =
        i < arm.buckets.size() ? arm.buckets[i] : ChaosTimeline::Bucket{};
    absl::StrAppendFormat(&data, "%.3f %.3f %d %d %d\n", width * i,
                          width * (i + 0.5), bucket.failed, bucket.fallbacks,
                          bucket.refused);
  }
  return data;
}

// Replica A's outages as shaded rectangles behind the curves; an outage
// with no restart runs to the end of the plot.
std::string OutageRects(const ChaosTimeline& arm) {
  std::string rects = "unset object\n";
  for (size_t i = 0; i < arm.kills.size(); ++i) {
    const std::string end =
        i < arm.restarts.size()
            ? absl::StrFormat("first %.3f",
                              absl::ToDoubleSeconds(arm.restarts[i]))
            : "graph 1";
    absl::StrAppendFormat(&rects,
                          "set object %d rect from first %.3f, graph 0 to "
                          "%s, graph 1 fillcolor rgb '#dddddd' fillstyle "
                          "solid noborder behind\n",
                          i + 1, absl::ToDoubleSeconds(arm.kills[i]), end);
  }
  return rects;
}

}  // namespace

absl::Status PlotChaosTimeline(const std::string& dir, const std::string& title,
                               const std::vector<ChaosTimeline>& arms) {
  if (arms.empty()) return absl::OkStatus();
  std::string panels;
  for (const ChaosTimeline& arm : arms) {
    const std::string path =
        Join(dir, absl::StrCat("chaos_timeline_", arm.arm, ".dat"));
    absl::Status written = WriteFile(path, ChaosData(arm));
    if (!written.ok()) return written;
    ChaosTimeline::Bucket total;
    for (const ChaosTimeline::Bucket& bucket : arm.buckets) {
      total.failed += bucket.failed;
      total.fallbacks += bucket.fallbacks;
      total.refused += bucket.refused;
    }
    absl::StrAppend(
        &panels, OutageRects(arm),
        absl::StrFormat("set title '%s: %d failed reads, %d fallbacks "
                        "taken, %d refused; grey: replica A down'\n",
                        arm.arm, total.failed, total.fallbacks, total.refused),
        absl::StrFormat("set ylabel 'per %s'\n",
                        absl::FormatDuration(arm.bucket)),
        // Failed reads as dots, drawn last, so that a refused fallback's
        // line on the same count does not hide them.
        "plot '", path,
        "' using 1:4 with steps linewidth 2 linecolor rgb 'dark-green' "
        "title 'fallbacks taken', \\\n     '",
        path,
        "' using 1:5 with steps linewidth 2 linecolor rgb 'orange' "
        "title 'fallbacks refused (no retry credit)', \\\n     '",
        path,
        "' using 2:($3 > 0 ? $3 : 1/0) with points pointtype 7 "
        "pointsize 1.2 linecolor rgb 'red' title 'failed reads'\n");
  }
  const std::string png = Join(dir, "chaos_timeline.png");
  const std::string script = Join(dir, "chaos_timeline.gp");
  absl::Status written = WriteFile(
      script,
      absl::StrCat(absl::StrFormat("set terminal pngcairo size 960,%d "
                                   "noenhanced\n",
                                   160 + 340 * arms.size()),
                   "set output '", png, "'\n", "set grid\n",
                   "set multiplot layout ", arms.size(), ",1 title '", title,
                   "'\n", "set xlabel 'seconds from the first read'\n",
                   "set autoscale xfix\n", "set yrange [0:*]\n",
                   "set key below horizontal maxrows 1\n", panels,
                   "unset multiplot\n"));
  if (!written.ok()) return written;
  return RunGnuplot(script);
}

}  // namespace tailgate::experiment
