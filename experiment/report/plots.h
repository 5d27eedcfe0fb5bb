// Plots of the experiment's results, drawn by gnuplot (/usr/bin/gnuplot,
// installed by tools/bootstrap). For each plot the data files and the
// gnuplot script are written into the plot directory next to the PNG, so
// a plot can be restyled and redrawn by hand (`gnuplot DIR/seed_cdf.gp`).
//
//   <name>_cdf.png         latency CDF, one curve per policy, log x
//   open_loop_p99.png      p99 latency vs offered load, one curve per policy
//   open_loop_amplification.png
//                          attempts per request vs offered load
//   open_loop_goodput.png  ok reads per second vs offered load
//   <name>_timeline.png    seed, correlated, shifting: per chunk of reads,
//                          each policy's p99 and its hedge delay
//   chaos_timeline.png     chaos: per arm and time bucket, failed reads and
//                          fallbacks taken and refused, with replica A's
//                          outages shaded
//   sick_<case>.png        sick: per second, each target's reads and failed
//                          reads, p99, and the sick replica's share of the
//                          primaries (sick_timeline_plot.cc)
//
// Thread safety: functions without shared state; they write files and run
// gnuplot as a child process.

#ifndef TAILGATE_EXPERIMENT_REPORT_PLOTS_H_
#define TAILGATE_EXPERIMENT_REPORT_PLOTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "experiment/report/percentiles.h"

namespace tailgate::experiment {

inline constexpr char kGnuplot[] = "/usr/bin/gnuplot";

// Creates `dir` (and its parents) if needed. An error, naming --plot_dir,
// when gnuplot is missing or `dir` cannot be used. Called before any
// measurement, so that a long run never ends without its plots.
absl::Status PreparePlotDir(const std::string& dir);

struct CdfSeries {
  std::string mode;                    // curve title: "baseline", "hedged"
  std::vector<absl::Duration> sorted;  // ascending latencies
};

// Draws DIR/<name>_cdf.png; `title` heads the plot.
absl::Status PlotLatencyCdf(const std::string& dir, const std::string& name,
                            const std::string& title,
                            const std::vector<CdfSeries>& series);

struct SweepPoint {
  std::string mode;
  double offered_rps = 0;
  double achieved_rps = 0;
  int64_t scheduled = 0;
  int64_t ok = 0;
  LatencySummary latency;           // of the ok reads
  double attempts_per_request = 0;  // NaN when nothing was admitted
};

// Draws DIR/open_loop_p99.png, DIR/open_loop_amplification.png and
// DIR/open_loop_goodput.png (ok reads per second vs offered load). A point
// where more than 1 % of the scheduled reads were not ok (rejected, failed,
// dropped) has no p99 in the plot: the worst 1 % of its reads got no
// answer, so the p99 of the survivors would flatter it.
absl::Status PlotSweep(const std::string& dir,
                       const std::vector<SweepPoint>& points);

// One policy's run of sequential reads, chunk by chunk.
struct PolicyTimeline {
  std::string mode;
  struct Chunk {
    int64_t first_read = 0;  // index of the chunk's first read
    absl::Duration p99;      // of the chunk's reads
    absl::Duration hedge_delay;  // in force after the chunk
    double attempts_per_request = 0;  // over the chunk
  };
  std::vector<Chunk> chunks;
};

// Draws DIR/<name>_timeline.png: p99 per chunk (log scale) and the hedge
// delay in force, both against the read index, and the attempts per read
// beneath; `title` heads the plot.
absl::Status PlotTimeline(const std::string& dir, const std::string& name,
                          const std::string& title,
                          const std::vector<PolicyTimeline>& policies);

// One arm of the chaos scenario over its run, bucket by bucket.
struct ChaosTimeline {
  std::string arm;
  absl::Duration bucket;
  struct Bucket {
    int64_t failed = 0;     // reads answered with a failure in the bucket
    int64_t fallbacks = 0;  // failure fallbacks taken
    int64_t refused = 0;    // fallbacks refused for want of retry credit
  };
  std::vector<Bucket> buckets;  // bucket i: [i, i + 1) x bucket
  // Replica A killed, and started again, from the start of the run.
  std::vector<absl::Duration> kills;
  std::vector<absl::Duration> restarts;
};

// Draws DIR/chaos_timeline.png: one panel per arm, the three counts per
// bucket against time, each outage of replica A (kill to restart) shaded;
// `title` heads the plot.
absl::Status PlotChaosTimeline(const std::string& dir, const std::string& title,
                               const std::vector<ChaosTimeline>& arms);

// One target's run of a sick case, second by second.
struct SickSeries {
  std::string target;  // "tailgate", "gateway"
  struct Second {
    int64_t reads = 0;
    int64_t failed = 0;
    double p99_ms = 0;      // NaN: no read in this second
    double sick_share = 0;  // of the primaries; NaN: no primary
  };
  std::vector<Second> seconds;  // second t: [t, t + 1) s from the first send
};

// Draws DIR/<name>.png: three panels against seconds from the first read,
// one colour per target: reads (solid) and failed reads (dashed) per
// second, the p99 per second (log scale), and the sick replica's share of
// the primaries; `heal_s`, when set, is marked in each panel.
absl::Status PlotSickTimeline(const std::string& dir, const std::string& name,
                              const std::string& title,
                              const std::vector<SickSeries>& targets,
                              std::optional<double> heal_s);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPORT_PLOTS_H_
