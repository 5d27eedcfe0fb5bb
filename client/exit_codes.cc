#include "client/exit_codes.h"

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace tailgate::cli {
namespace {

struct ExitCodeRow {
  int exit_code;
  absl::StatusCode grpc_code;  // kOk: not a gRPC error class
  absl::string_view meaning;
};

constexpr ExitCodeRow kRows[] = {
    {kExitOk, absl::StatusCode::kOk,
     "HTTP status below 400 (many: every read's); or stats/metrics printed"},
    {kExitOtherError, absl::StatusCode::kOk,
     "any other gRPC error (UNKNOWN, INTERNAL, UNIMPLEMENTED, ...)"},
    {kExitUsage, absl::StatusCode::kOk,
     "usage error: bad option or value, missing PATH"},
    {kExitOutputError, absl::StatusCode::kOk,
     "the output could not be written (stdout closed or full)"},
    {kExitHttp4xx, absl::StatusCode::kOk,
     "HTTP 4xx from the upstream (the body is still written)"},
    {kExitHttp5xx, absl::StatusCode::kOk,
     "HTTP 5xx: no attempt got a status below 500 (body still written)"},
    {kExitInvalidArgument, absl::StatusCode::kInvalidArgument,
     "INVALID_ARGUMENT: the sidecar rejected the descriptor (path, header)"},
    {kExitNotFound, absl::StatusCode::kNotFound,
     "NOT_FOUND: no replica set named --upstream"},
    {kExitResourceExhausted, absl::StatusCode::kResourceExhausted,
     "RESOURCE_EXHAUSTED: admission full, or body over --max_response_bytes"},
    {kExitUnavailable, absl::StatusCode::kUnavailable,
     "UNAVAILABLE: sidecar down or draining, no replica, transport failures"},
    {kExitDeadlineExceeded, absl::StatusCode::kDeadlineExceeded,
     "DEADLINE_EXCEEDED: no answer within --deadline (or sidecar --timeout)"},
    {kExitCancelled, absl::StatusCode::kCancelled,
     "CANCELLED: the call was cancelled"},
};

}  // namespace

int ExitCodeForHttpStatus(int http_status) {
  if (http_status >= 500) return kExitHttp5xx;
  if (http_status >= 400) return kExitHttp4xx;
  return kExitOk;
}

int ExitCodeForError(const absl::Status& status) {
  for (const ExitCodeRow& row : kRows) {
    if (row.grpc_code != absl::StatusCode::kOk &&
        row.grpc_code == status.code()) {
      return row.exit_code;
    }
  }
  return kExitOtherError;
}

int ExitCodeForRead(const absl::StatusOr<ReadResponse>& read) {
  return read.ok() ? ExitCodeForHttpStatus(read->status)
                   : ExitCodeForError(read.status());
}

std::string ExitCodeTable() {
  std::string table;
  for (const ExitCodeRow& row : kRows) {
    absl::StrAppendFormat(&table, "  %-3d %s\n", row.exit_code, row.meaning);
  }
  return table;
}

}  // namespace tailgate::cli
