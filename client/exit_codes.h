// The exit codes of tailgate_read: what a script can tell apart without
// parsing stderr. One table is the source of both the mapping and the
// --help text.
//
//   0   HTTP status below 400, or stats/metrics printed
//   1   any other gRPC error (UNKNOWN, INTERNAL, UNIMPLEMENTED, ...)
//   2   usage error
//   3   the output could not be written
//   4   HTTP 4xx          5   HTTP 5xx       (the body is still written)
//   10  INVALID_ARGUMENT  11  NOT_FOUND      12  RESOURCE_EXHAUSTED
//   13  UNAVAILABLE       14  DEADLINE_EXCEEDED  15  CANCELLED
//
// `many` exits with the call's code when the call fails, else with the code
// of its failed read of lowest index (ExitCodeForRead), 0 when none failed.
//
// Thread safety: pure functions.

#ifndef TAILGATE_CLIENT_EXIT_CODES_H_
#define TAILGATE_CLIENT_EXIT_CODES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/client.h"

namespace tailgate::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitOtherError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitOutputError = 3;
inline constexpr int kExitHttp4xx = 4;
inline constexpr int kExitHttp5xx = 5;
inline constexpr int kExitInvalidArgument = 10;
inline constexpr int kExitNotFound = 11;
inline constexpr int kExitResourceExhausted = 12;
inline constexpr int kExitUnavailable = 13;
inline constexpr int kExitDeadlineExceeded = 14;
inline constexpr int kExitCancelled = 15;

// 0 below 400, kExitHttp4xx for 4xx, kExitHttp5xx from 500 up.
int ExitCodeForHttpStatus(int http_status);

// The code for a failed call. REQUIRES: !status.ok().
int ExitCodeForError(const absl::Status& status);

// The code one read would exit with: its HTTP status's, or its error's.
int ExitCodeForRead(const absl::StatusOr<ReadResponse>& read);

// The table above, one "CODE  meaning" line per exit code, for --help.
std::string ExitCodeTable();

}  // namespace tailgate::cli

#endif  // TAILGATE_CLIENT_EXIT_CODES_H_
