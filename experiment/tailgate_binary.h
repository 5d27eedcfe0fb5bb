// Finds the `tailgate` binary the experiment starts as its sidecar.
//
// By default it is //server:tailgate from the experiment's runfiles (a data
// dependency): `bazel run` and `bazel test` set RUNFILES_DIR (or a
// manifest), and a binary started by hand finds its `<argv0>.runfiles`
// directory; Bazel's runfiles library handles all of these. --tailgate=PATH
// overrides the lookup, for a binary built elsewhere.
//
// Thread safety: reads the environment; call from main before threads
// start.

#ifndef TAILGATE_EXPERIMENT_TAILGATE_BINARY_H_
#define TAILGATE_EXPERIMENT_TAILGATE_BINARY_H_

#include <string>

#include "absl/status/statusor.h"

namespace tailgate::experiment {

// `override_path` when not empty, else the runfiles' tailgate; an error
// when the file is missing or not executable.
absl::StatusOr<std::string> FindTailgateBinary(
    const std::string& argv0, const std::string& override_path);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_TAILGATE_BINARY_H_
