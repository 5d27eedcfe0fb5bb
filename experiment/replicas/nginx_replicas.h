// NginxReplicas: the cost scenario's replicas: one nginx process (one
// worker, access log off, keep-alive without a request limit) serving the
// same 16-byte file on two loopback ports, in a fresh directory of its own.
// A stand-in for fast production replicas that costs little CPU per read,
// so that the sidecar's share is what the measurements show.
//
// Thread safety: Start and the destructor from one thread; the accessors
// from any.

#ifndef TAILGATE_EXPERIMENT_REPLICAS_NGINX_REPLICAS_H_
#define TAILGATE_EXPERIMENT_REPLICAS_NGINX_REPLICAS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/process/child_process.h"

namespace tailgate::experiment {

class NginxReplicas {
 public:
  // The file every replica serves, and its body.
  static constexpr const char* kPath = "/v.txt";
  static constexpr const char* kBody = "replicated-value";

  // `launcher` is put before nginx's own command (e.g. {"taskset", "-c",
  // "0"}); `dir` is an empty directory that outlives the replicas.
  static absl::StatusOr<std::unique_ptr<NginxReplicas>> Start(
      const std::string& dir, const std::vector<std::string>& launcher);

  std::string url(int replica) const;  // of kPath, replica 0 or 1
  std::string backends() const;        // both, as --backends takes them

 private:
  NginxReplicas(std::unique_ptr<testing::ChildProcess> nginx,
                std::vector<int> ports)
      : nginx_(std::move(nginx)), ports_(std::move(ports)) {}

  std::unique_ptr<testing::ChildProcess> nginx_;
  std::vector<int> ports_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_REPLICAS_NGINX_REPLICAS_H_
