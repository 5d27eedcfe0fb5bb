// HttpGetBody: one blocking HTTP/1.1 GET with libcurl, for scraping a
// metrics page (tailgate's Prometheus /metrics, the Go gateway's JSON
// /metrics).
//
// Thread safety: safe from any thread (an easy handle per call).
// REQUIRES: curl_global_init has been called.

#ifndef TAILGATE_EXPERIMENT_MEASURE_HTTP_GET_H_
#define TAILGATE_EXPERIMENT_MEASURE_HTTP_GET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tailgate::experiment {

// The body of a 200 answer to GET `url` within `timeout`; UNAVAILABLE,
// naming the URL, for anything else.
absl::StatusOr<std::string> HttpGetBody(const std::string& url,
                                        absl::Duration timeout);

}  // namespace tailgate::experiment

#endif  // TAILGATE_EXPERIMENT_MEASURE_HTTP_GET_H_
