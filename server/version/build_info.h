// BuildInfo: which tailgate this is — its version (X.Y.Z, from the VERSION
// file at the repository root) and the commit it was built from ("unknown"
// when the build was not stamped). One value per process, made in main
// (StampedBuildInfo, stamped_build_info.h) and handed to what shows it:
// --version, the event=start line and tailgate_build_info.
//
// Libraries take a BuildInfo rather than link the stamped one, so that a
// new commit relinks the binary only.
//
// Thread safety: a plain value.

#ifndef TAILGATE_SERVER_VERSION_BUILD_INFO_H_
#define TAILGATE_SERVER_VERSION_BUILD_INFO_H_

#include <string>

namespace tailgate::server {

struct BuildInfo {
  std::string version = "unknown";
  std::string commit = "unknown";
};

// What --version prints: "tailgate 0.3.0 (commit 09dcf6f...)\n".
inline std::string VersionText(const BuildInfo& build) {
  return "tailgate " + build.version + " (commit " + build.commit + ")\n";
}

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_VERSION_BUILD_INFO_H_
