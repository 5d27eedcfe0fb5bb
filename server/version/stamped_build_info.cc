#include "server/version/stamped_build_info.h"

#include "server/version/build_stamp.h"

namespace tailgate::server {

BuildInfo StampedBuildInfo() { return {TAILGATE_VERSION, TAILGATE_COMMIT}; }

}  // namespace tailgate::server
