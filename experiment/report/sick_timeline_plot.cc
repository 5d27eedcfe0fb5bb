// PlotSickTimeline (plots.h): the sick scenario's per-case timeline.

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "experiment/report/plot_files.h"
#include "experiment/report/plots.h"

namespace tailgate::experiment {
namespace {

// A row per second at its start, then one at the end of the last so that
// `with steps` draws it whole.
std::string SickData(const SickSeries& series) {
  std::string data = "# t_s reads failed p99_ms sick_primary_share\n";
  for (size_t t = 0; t < series.seconds.size(); ++t) {
    const SickSeries::Second& second = series.seconds[t];
    absl::StrAppend(&data, t, " ", second.reads, " ", second.failed, " ",
                    Number(second.p99_ms), " ", Number(second.sick_share),
                    "\n");
  }
  if (!series.seconds.empty()) {
    const SickSeries::Second& last = series.seconds.back();
    absl::StrAppend(&data, series.seconds.size(), " ", last.reads, " ",
                    last.failed, " ", Number(last.p99_ms), " ",
                    Number(last.sick_share), "\n");
  }
  return data;
}

}  // namespace

absl::Status PlotSickTimeline(const std::string& dir, const std::string& name,
                              const std::string& title,
                              const std::vector<SickSeries>& targets,
                              std::optional<double> heal_s) {
  std::vector<std::string> reads, p99, share;
  int color = 0;  // one colour per target, in every panel
  for (const SickSeries& series : targets) {
    if (series.seconds.empty()) continue;
    ++color;
    const std::string path =
        Join(dir, absl::StrCat(name, "_", series.target, ".dat"));
    absl::Status written = WriteFile(path, SickData(series));
    if (!written.ok()) return written;
    const std::string style =
        absl::StrCat(" with steps linewidth 2 linecolor ", color);
    reads.push_back(absl::StrCat("'", path, "' using 1:2", style, " title '",
                                 series.target, " reads'"));
    reads.push_back(absl::StrCat("'", path, "' using 1:3", style,
                                 " dashtype 2 title '", series.target,
                                 " failed'"));
    // gnuplot refuses a curve with no point it can draw.
    bool any_p99 = false, any_share = false;
    for (const SickSeries::Second& second : series.seconds) {
      any_p99 |= std::isfinite(second.p99_ms) && second.p99_ms > 0;
      any_share |= std::isfinite(second.sick_share);
    }
    if (any_p99) {
      p99.push_back(absl::StrCat("'", path, "' using 1:4", style, " title '",
                                 series.target, "'"));
    }
    if (any_share) {
      share.push_back(absl::StrCat("'", path, "' using 1:5", style, " title '",
                                   series.target, "'"));
    }
  }
  if (reads.empty()) return absl::OkStatus();
  const std::string heal_mark =
      heal_s.has_value()
          ? absl::StrFormat(
                "set arrow 1 from first %.3f, graph 0 to first %.3f, graph 1 "
                "nohead dashtype 3 linecolor rgb 'dark-green'\n",
                *heal_s, *heal_s)
          : "";
  const std::string png = Join(dir, name + ".png");
  const std::string script = Join(dir, name + ".gp");
  // A panel with no curve is left out.
  auto panel = [](const std::string& settings,
                  const std::vector<std::string>& curves) {
    if (curves.empty()) return std::string();
    return absl::StrCat(settings, "plot ", absl::StrJoin(curves, ", \\\n     "),
                        "\n");
  };
  absl::Status written = WriteFile(
      script,
      absl::StrCat(
          "set terminal pngcairo size 960,900 noenhanced\n", "set output '",
          png, "'\n", "set grid\n", "set multiplot layout 3,1 title '", title,
          "'\n", "set key outside right\n",
          // The same plot area in every panel, whatever its key's width.
          "set lmargin at screen 0.11\nset rmargin at screen 0.76\n",
          "set autoscale xfix\n", heal_mark,
          panel("set ylabel 'reads per second'\nset yrange [0:*]\n", reads),
          panel("set ylabel 'p99 per second (ms, log)'\nset logscale y\n"
                "set yrange [*:*]\n",
                p99),
          panel("unset logscale y\n"
                "set ylabel 'sick replica share of primaries'\n"
                "set yrange [0:1.05]\n"
                "set xlabel 'seconds from the first read'\n",
                share),
          "unset multiplot\n"));
  if (!written.ok()) return written;
  return RunGnuplot(script);
}

}  // namespace tailgate::experiment
