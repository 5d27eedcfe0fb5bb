// HttpReadTarget: the steady reader's way through an HTTP gateway. Reads
// GET <base URL><path> over HTTP/1.1 with keep-alive, each with its own
// timeout, through libcurl's multi interface on a loop thread of its own
// (curl_multi_poll, woken by curl_multi_wakeup when a read is queued), as
// an application calling the gateway would.
//
// A read ends "" (200, the workload's body), "http_<status>",
// kWrongBody, "timeout" (no complete answer within its deadline), or
// "transport_<curl code>" (connection refused, reset...).
//
// Thread safety: StartRead is safe from any thread. The loop thread owns
// the multi handle and every easy handle, and runs every `done`. The
// destructor stops the loop; REQUIRES: every read started has ended.
// REQUIRES: curl_global_init has been called.

#ifndef TAILGATE_EXPERIMENT_LOAD_HTTP_READ_TARGET_H_
#define TAILGATE_EXPERIMENT_LOAD_HTTP_READ_TARGET_H_

#include <curl/curl.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "experiment/load/steady_reads.h"
#include "hedge/sync/mutex.h"

namespace tailgate::experiment {

class HttpReadTarget : public ReadTarget {
 public:
  // `base_url`: "http://127.0.0.1:PORT", no trailing slash.
  static absl::StatusOr<std::unique_ptr<HttpReadTarget>> Start(
      std::string base_url);

  ~HttpReadTarget() override;
  HttpReadTarget(const HttpReadTarget&) = delete;
  HttpReadTarget& operator=(const HttpReadTarget&) = delete;

  void StartRead(const std::string& path, absl::Duration deadline,
                 Done done) override;

 private:
  struct Queued {
    std::string url;
    absl::Duration deadline;
    Done done;
  };
  struct Transfer;

  HttpReadTarget(std::string base_url, CURLM* multi);
  // The loop thread's body: starts the queued reads, drives the
  // transfers, finishes the ended ones, until the destructor stops it.
  void Loop();
  // Loop thread only: adds one read's easy handle to the multi.
  void Begin(Queued queued);
  // Loop thread only: removes and frees an ended read's handle, runs its
  // `done`.
  void Finish(CURL* easy, CURLcode result);

  const std::string base_url_;
  CURLM* const multi_;  // used by the loop thread; wakeup from any thread

  hedge::Mutex mu_;  // seen by ThreadSanitizer, unlike absl::Mutex
  std::vector<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::thread loop_;
};

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_LOAD_HTTP_READ_TARGET_H_
