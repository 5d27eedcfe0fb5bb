#include "hedge/transport/curl_support.h"

#include <curl/curl.h>

#include <string>

#include "gtest/gtest.h"
#include "hedge/config/field_error.h"
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

// The sidecar links libcurl's GnuTLS flavour: the OpenSSL flavour
// initialises OpenSSL in curl_global_init and keeps 1.7 MiB more resident
// (docs/BENCHMARKS.md, "Memory: libcurl's GnuTLS flavour"). This fails if
// the build links another flavour.
TEST(CurlSupportTest, LinksTheGnuTlsFlavour) {
  InitCurlOnce();
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  ASSERT_NE(curl->ssl_version, nullptr);
  EXPECT_EQ(std::string(curl->ssl_version).rfind("GnuTLS/", 0), 0u)
      << curl->ssl_version;
  EXPECT_NE(curl->features & CURL_VERSION_SSL, 0);
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
