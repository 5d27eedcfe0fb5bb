// StampedBuildInfo: the version and commit compiled into this binary
// (build_stamp.bzl). Link it into binaries only: with --stamp its object
// changes with every commit.
//
// Thread safety: safe from any thread.

#ifndef TAILGATE_SERVER_VERSION_STAMPED_BUILD_INFO_H_
#define TAILGATE_SERVER_VERSION_STAMPED_BUILD_INFO_H_

#include "server/version/build_info.h"

namespace tailgate::server {

BuildInfo StampedBuildInfo();

}  // namespace tailgate::server

#endif  // TAILGATE_SERVER_VERSION_STAMPED_BUILD_INFO_H_
