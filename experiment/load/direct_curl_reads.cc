#include "experiment/load/direct_curl_reads.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "experiment/config/workload.h"

namespace tailgate::experiment {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr long kReadTimeoutMs = 2000;
constexpr int kPollMs = 100;
// Bodies beyond this are wrong anyway; keep at most this much.
constexpr size_t kMaxKeptBody = 256;

struct Transfer {
  CURL* easy = nullptr;
  std::string body;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) noexcept {
  std::string& body = static_cast<Transfer*>(user)->body;
  const size_t n = size * count;
  const size_t room =
      body.size() < kMaxKeptBody ? kMaxKeptBody - body.size() : 0;
  body.append(data, std::min(n, room));
  return n;
}

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};

// Owns the easy handles; removes them from the multi before freeing them.
class Transfers {
 public:
  explicit Transfers(CURLM* multi) : multi_(multi) {}
  ~Transfers() {
    for (const std::unique_ptr<Transfer>& transfer : transfers_) {
      curl_multi_remove_handle(multi_, transfer->easy);
      curl_easy_cleanup(transfer->easy);
    }
  }

  absl::Status Add(const std::string& url) {
    auto transfer = std::make_unique<Transfer>();
    transfer->easy = curl_easy_init();
    if (transfer->easy == nullptr) {
      return absl::InternalError("curl_easy_init failed");
    }
    CURL* easy = transfer->easy;
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, transfer.get());
    curl_easy_setopt(easy, CURLOPT_PRIVATE, transfer.get());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");  // none from the environment
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                     static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, kReadTimeoutMs);
    transfers_.push_back(std::move(transfer));
    return Start(*transfers_.back());
  }

  // (Re)starts `transfer`; the multi handle keeps its connection.
  absl::Status Start(Transfer& transfer) {
    transfer.body.clear();
    if (curl_multi_add_handle(multi_, transfer.easy) != CURLM_OK) {
      return absl::InternalError("curl_multi_add_handle failed");
    }
    return absl::OkStatus();
  }

 private:
  CURLM* const multi_;
  std::vector<std::unique_ptr<Transfer>> transfers_;
};

}  // namespace

absl::StatusOr<LoadCount> RunDirectCurlReads(
    const std::vector<std::string>& urls, const std::string& path,
    int concurrency, absl::Duration duration) {
  std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
  if (multi == nullptr) return absl::InternalError("curl_multi_init failed");
  curl_multi_setopt(multi.get(), CURLMOPT_MAXCONNECTS,
                    static_cast<long>(concurrency));
  Transfers transfers(multi.get());

  const auto end = SteadyClock::now() + absl::ToChronoNanoseconds(duration);
  for (int i = 0; i < concurrency; ++i) {
    absl::Status added = transfers.Add(urls[i % urls.size()] + path);
    if (!added.ok()) return added;
  }
  LoadCount count;
  count.window = duration;
  for (int running = concurrency; running > 0;) {
    int still_running = 0;
    curl_multi_perform(multi.get(), &still_running);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      CURL* easy = message->easy_handle;
      const CURLcode result = message->data.result;
      Transfer* transfer = nullptr;
      curl_easy_getinfo(easy, CURLINFO_PRIVATE, &transfer);
      long status = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
      curl_multi_remove_handle(multi.get(), easy);
      const bool good = result == CURLE_OK && status == 200;
      if (good && transfer->body != kReplicaBody) {
        return absl::InternalError(absl::StrCat(
            "direct read: body \"", absl::CHexEscape(transfer->body),
            "\" is not \"", kReplicaBody, "\""));
      }
      if (SteadyClock::now() >= end) {
        --running;
        continue;
      }
      ++(good ? count.ok : count.failed);
      absl::Status restarted = transfers.Start(*transfer);
      if (!restarted.ok()) return restarted;
    }
    if (running > 0) curl_multi_poll(multi.get(), nullptr, 0, kPollMs, nullptr);
  }
  return count;
}

}  // namespace tailgate::experiment
