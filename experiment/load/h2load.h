// h2load (nghttp2-client) as the cost scenario's load generator: the
// command line for one measured run, and the figures parsed from its
// report.
//
// A gRPC run posts a pre-encoded request (one length-prefixed ReadRequest
// frame, `grpc_body_file`) over h2c with `content-type: application/grpc`;
// an HTTP/1.1 run (`--h1`) GETs the URL. h2load paces with
// `--rps`, which is per connection, so a fixed total rate R over C
// connections is --rps=R/C; 0 sends as fast as the replies come back
// (`streams` outstanding per connection).
//
// h2load counts any HTTP answer as a success: a gRPC error is a 200 with a
// grpc-status trailer. The scenario checks the sidecar's own counters.
//
// Thread safety: pure functions.

#ifndef TAILGATE_EXPERIMENT_LOAD_H2LOAD_H_
#define TAILGATE_EXPERIMENT_LOAD_H2LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

struct H2loadRun {
  std::string url;
  bool grpc = false;            // else HTTP/1.1 GET
  std::string grpc_body_file;   // grpc: the request frame
  int connections = 1;
  int streams = 1;              // outstanding per connection (-m)
  double total_rate = 0;        // reads/s over all connections; 0: unpaced
  absl::Duration duration = absl::Seconds(5);
};

std::vector<std::string> H2loadArgs(const H2loadRun& run);

struct H2loadReport {
  int64_t done = 0;
  int64_t succeeded = 0;
  int64_t failed = 0;   // failed + errored + timeout
  int64_t non_2xx = 0;  // 3xx + 4xx + 5xx
  double reads_per_second = 0;
  absl::Duration mean_latency;  // "time for request" mean
};

// The report h2load prints at the end of a run.
absl::StatusOr<H2loadReport> ParseH2loadReport(absl::string_view text);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_H2LOAD_H_
