#include "hedge/transport/curl/curl_support.h"

#include <curl/curl.h>
#include <libssh2.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "hedge/errors/field_error.h"

namespace tailgate::hedge::transport {
namespace {

// libcurl before 8.0.0 fails every transfer that reuses an h2c
// prior-knowledge connection ("Error in the HTTP2 framing layer", fixed in
// curl 8.0.0); with keep-alive that is every read but the first. HTTP/2 over
// TLS (ALPN) is not affected.
absl::Status CheckHttp2Support(const UpstreamConfig& upstream) {
  if (upstream.http_version != HttpVersion::kHttp2) return absl::OkStatus();
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  if (curl->version_num >= 0x080000) return absl::OkStatus();
  for (const hygiene::ReplicaUrl& replica : upstream.replicas) {
    if (replica.scheme == "http") {
      return FieldError(
          "http_version",
          absl::StrCat("HTTP/2 to an http:// replica (h2c) needs libcurl "
                       "8.0.0 or later (this is ",
                       curl->version, "); use https replicas or HTTP/1.1"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckCurlSupports(const EngineConfig& config) {
  for (const UpstreamConfig& upstream : config.upstreams) {
    absl::Status s = CheckHttp2Support(upstream);
    if (!upstream.name.empty()) {
      s = PrefixField(absl::StrCat("upstreams.", upstream.name, "."), s);
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

void InitCurlOnce() {
  static std::once_flag curl_init;
  std::call_once(curl_init, [] {
    // curl_global_init calls libssh2_init(0), and libssh2 initialises
    // OpenSSL on its first init: configuration file, every built-in engine,
    // 1.4 MiB of libcrypto's pages kept resident for the process's life.
    // libcurl never speaks scp or sftp here (CURLOPT_PROTOCOLS_STR is
    // "http,https"), so libssh2 is initialised first without crypto; it
    // counts initialisations and only the first one initialises crypto.
    // Were it ever used, OpenSSL 3 initialises itself on first use.
    libssh2_init(LIBSSH2_INIT_NO_CRYPTO);
    curl_global_init(CURL_GLOBAL_DEFAULT);
  });
}

}  // namespace tailgate::hedge::transport
