// What tailgate_read prints: the -v transcript of a read, the line of each
// read of `many`, the stats table and JSON, and error lines.
//
// Example (-v of a hedged read):
//   * target=127.0.0.1:8080 upstream=(default) deadline=5s hedge=(default)
//   > GET /users/42
//   > Accept: application/json
//   < HTTP 200
//   < content-type: application/json
//   * trace attempts=2 hedged=true hedge_won=true
//   replica=http://10.0.0.2:8000 latency=12.5ms   (one line)
//
// Thread safety: pure functions.

#ifndef TAILGATE_CLIENT_TEXT_OUTPUT_H_
#define TAILGATE_CLIENT_TEXT_OUTPUT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/admin_client.h"
#include "client/client.h"

namespace tailgate::cli {

// The "*" and ">" lines: where the read goes and what it sends.
std::string FormatRequest(absl::string_view target, absl::Duration deadline,
                          const ReadRequest& request);

// The "<" lines (status line, headers) and the "* trace" line.
std::string FormatResponse(const ReadResponse& response);

// The line of one read of `many` (`path` is its path), ending in "\n":
//   "INDEX HTTP_STATUS BYTES PATH" for an answer; with `trace`, then
//   " attempts=N hedged=B hedge_won=B replica=URL latency=DUR"; with
//   `body`, then ' body="..."' (C-escaped: \n, \", \xNN, ...).
//   "INDEX CODE - PATH MESSAGE" for a failed read (CODE as
//   NOT_FOUND; the message on the same line whatever it holds).
std::string FormatManyItem(const ReadManyItem& item, absl::string_view path,
                           bool trace, bool body);

// "tailgate_read: UNAVAILABLE: message\n", on one line whatever the message.
std::string FormatError(const absl::Status& status);

// The counters as aligned "name  value" rows; then per replica a row of
// its state (serving, ejected, probing) and counts, and a row of its
// health: weight, latency, cost, failure rate, the ejection in force or
// last, ejections by reason (consecutive/failure_rate/probe), probes
// (passed/failed) and give-ups; then per upstream its give-up point ("off"
// when giving up is off) and give-up fallbacks.
std::string FormatStatsTable(const SidecarStats& stats);

// One JSON object: the proto's field names, numbers as numbers, circuit as
// "closed" | "open" | "half-open" | "unspecified", state as "serving" |
// "ejected" | "probing" | "unspecified", durations as the proto's JSON
// form ("0.0125s").
std::string FormatStatsJson(const SidecarStats& stats);

}  // namespace tailgate::cli

#endif  // TAILGATE_CLIENT_TEXT_OUTPUT_H_
