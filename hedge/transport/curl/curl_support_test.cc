#include "hedge/transport/curl/curl_support.h"

#include <curl/curl.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "hedge/errors/field_error.h"
#include "hedge/hygiene/replica_url.h"

namespace tailgate::hedge::transport {
namespace {

EngineConfig Http2To(const char* replicas, const char* name = "") {
  EngineConfig config;
  UpstreamConfig& upstream = config.upstreams.emplace_back();
  upstream.name = name;
  upstream.replicas = *hygiene::ParseReplicaList(replicas);
  upstream.http_version = HttpVersion::kHttp2;
  return config;
}

bool CurlReusesH2c() {
  return curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
}

// KiB of libcrypto's pages resident in this process (/proc/self/smaps).
long LibcryptoResidentKib() {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_libcrypto = false;
  long kib = 0;
  while (std::getline(smaps, line)) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first == "Rss:") {
      long value = 0;
      fields >> value;
      if (in_libcrypto) kib += value;
    } else if (first.find('-') != std::string::npos && first.back() != ':') {
      // A mapping's header: "start-end perms offset dev inode [path]".
      in_libcrypto = line.find("/libcrypto.so") != std::string::npos;
    }
  }
  return kib;
}

// libcurl's initialisation must not initialise OpenSSL, which the sidecar
// never calls: initialised, it keeps 1.4-1.7 MiB more of libcrypto
// resident (docs/BENCHMARKS.md, "Memory: libcurl's GnuTLS flavour"). This
// fails if the build links libcurl's OpenSSL flavour, or if libssh2 is not
// initialised without crypto first. The only test here that initialises
// libcurl, so the first initialisation is the one measured.
TEST(CurlSupportTest, InitialisingLibcurlLeavesOpenSslAlone) {
  const long before = LibcryptoResidentKib();
  InitCurlOnce();
  const long after = LibcryptoResidentKib();
  EXPECT_LT(after - before, 256)
      << "libcrypto grew from " << before << " to " << after
      << " KiB; TLS: " << curl_version_info(CURLVERSION_NOW)->ssl_version;
}

TEST(CurlSupportTest, Http2OverTlsAndHttp1AreAlwaysSupported) {
  EXPECT_TRUE(CheckCurlSupports(Http2To("https://127.0.0.1:1")).ok());
  EngineConfig http1 = Http2To("http://127.0.0.1:1");
  http1.upstreams[0].http_version = HttpVersion::kHttp1;
  EXPECT_TRUE(CheckCurlSupports(http1).ok());
}

TEST(CurlSupportTest, H2cNeedsALibcurlThatCanReuseIt) {
  const absl::Status status = CheckCurlSupports(Http2To("http://127.0.0.1:1"));
  if (CurlReusesH2c()) {
    EXPECT_TRUE(status.ok()) << status;
    return;
  }
  EXPECT_EQ(ErrorField(status), "http_version");
  EXPECT_EQ(ErrorField(CheckCurlSupports(Http2To("http://127.0.0.1:1", "a"))),
            "upstreams.a.http_version");
}

}  // namespace
}  // namespace tailgate::hedge::transport
