#include "experiment/tailgate_binary.h"

#include <unistd.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/cpp/runfiles/runfiles.h"

namespace tailgate::experiment {
namespace {

using bazel::tools::cpp::runfiles::Runfiles;

// The workspace is named "tailgate" (WORKSPACE).
constexpr char kRunfilesPath[] = "tailgate/server/tailgate";

// `what` starts the error message: "--tailgate: /x is not ...".
absl::StatusOr<std::string> Executable(const std::string& path,
                                       absl::string_view what) {
  if (access(path.c_str(), X_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat(what, path, " is not an executable file"));
  }
  return path;
}

}  // namespace

absl::StatusOr<std::string> FindTailgateBinary(
    const std::string& argv0, const std::string& override_path) {
  if (!override_path.empty()) return Executable(override_path, "--tailgate: ");
  std::string error;
  std::unique_ptr<Runfiles> runfiles(Runfiles::Create(argv0, &error));
  if (runfiles == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "cannot find the runfiles with the sidecar binary (", error,
        "); run through `bazel run //experiment` or pass --tailgate=PATH"));
  }
  const std::string path = runfiles->Rlocation(kRunfilesPath);
  if (path.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no ", kRunfilesPath, " in the runfiles"));
  }
  return Executable(path, "the sidecar binary from the runfiles, ");
}

}  // namespace tailgate::experiment
