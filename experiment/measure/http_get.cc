#include "experiment/measure/http_get.h"

#include <curl/curl.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tailgate::experiment {
namespace {

size_t AppendBody(char* data, size_t size, size_t count, void* user) noexcept {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

}  // namespace

absl::StatusOr<std::string> HttpGetBody(const std::string& url,
                                        absl::Duration timeout) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(timeout)));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROXY, "");  // none from the environment
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  const CURLcode result = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  if (result != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("GET ", url, ": ", curl_easy_strerror(result)));
  }
  if (status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET ", url, ": HTTP status ", status));
  }
  return body;
}

}  // namespace tailgate::experiment
