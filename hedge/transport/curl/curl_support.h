// What this process's libcurl can do, checked before an engine starts, and
// libcurl's one-time global initialisation.
//
// Thread safety: safe from any thread.

#ifndef TAILGATE_HEDGE_TRANSPORT_CURL_CURL_SUPPORT_H_
#define TAILGATE_HEDGE_TRANSPORT_CURL_CURL_SUPPORT_H_

#include "absl/status/status.h"
#include "hedge/config/engine_config.h"

namespace tailgate::hedge::transport {

// A FieldError (field `http_version`, or `upstreams.NAME.http_version`)
// when an upstream asks for what this libcurl cannot do: HTTP/2 with prior
// knowledge (h2c) to an http:// replica before libcurl 8.0.0.
absl::Status CheckCurlSupports(const EngineConfig& config);

// curl_global_init, once per process, with libssh2 (libcurl's scp and
// sftp, never used here) initialised first without crypto.
void InitCurlOnce();

}  // namespace tailgate::hedge::transport

#endif  // TAILGATE_HEDGE_TRANSPORT_CURL_CURL_SUPPORT_H_
