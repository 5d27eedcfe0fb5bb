// replica_server: one Replica on 127.0.0.1, answering every request the same
// way, until SIGINT or SIGTERM. For trying clients by hand:
//   bazel run //tests/replica:replica_server -- --port=8081 --delay=50ms

#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/time.h"
#include "tests/replica/replica.h"

ABSL_FLAG(int, port, 0, "port on 127.0.0.1 (0: any free port)");
ABSL_FLAG(std::string, body, "hello from replica\n", "response body");
ABSL_FLAG(absl::Duration, delay, absl::ZeroDuration(),
          "wait before answering, e.g. 50ms");
ABSL_FLAG(int, status, 200, "response status code");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);

  // Block the stop signals before any thread starts, then wait for one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  tailgate::testing::ReplicaResponse response;
  response.status = absl::GetFlag(FLAGS_status);
  response.body = absl::GetFlag(FLAGS_body);
  response.delay = absl::GetFlag(FLAGS_delay);
  tailgate::testing::ReplicaOptions options;
  options.port = absl::GetFlag(FLAGS_port);
  options.record_requests = false;
  absl::StatusOr<std::unique_ptr<tailgate::testing::Replica>> replica =
      tailgate::testing::Replica::Start(tailgate::testing::Always(response),
                                        options);
  if (!replica.ok()) {
    std::fprintf(stderr, "replica_server: %s\n",
                 replica.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", (*replica)->url().c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop, &signal_number);
  std::printf("served %lld requests\n",
              static_cast<long long>((*replica)->requests_received()));
  return 0;
}
