#include "experiment/load/http_read_target.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tailgate::experiment {
namespace {

// Bodies beyond this are wrong anyway; keep at most this much.
constexpr size_t kMaxKeptBody = 256;
// How long the loop sleeps with nothing to do (a queued read wakes it).
constexpr int kIdlePollMs = 1000;

size_t OnBody(char* data, size_t size, size_t count, void* user) noexcept {
  std::string& body = *static_cast<std::string*>(user);
  const size_t n = size * count;
  const size_t room =
      body.size() < kMaxKeptBody ? kMaxKeptBody - body.size() : 0;
  body.append(data, std::min(n, room));
  return n;
}

std::string TransportError(CURLcode result) {
  if (result == CURLE_OPERATION_TIMEDOUT) return "timeout";
  return absl::StrCat("transport_", static_cast<int>(result));
}

}  // namespace

// One read in flight: created by Begin, freed by Finish, loop thread only.
struct HttpReadTarget::Transfer {
  CURL* easy = nullptr;
  std::string body;
  Done done;
};

absl::StatusOr<std::unique_ptr<HttpReadTarget>> HttpReadTarget::Start(
    std::string base_url) {
  CURLM* multi = curl_multi_init();
  if (multi == nullptr) return absl::InternalError("curl_multi_init failed");
  std::unique_ptr<HttpReadTarget> target(
      new HttpReadTarget(std::move(base_url), multi));
  target->loop_ = std::thread([raw = target.get()] { raw->Loop(); });
  return target;
}

HttpReadTarget::HttpReadTarget(std::string base_url, CURLM* multi)
    : base_url_(std::move(base_url)), multi_(multi) {}

HttpReadTarget::~HttpReadTarget() {
  {
    hedge::MutexLock lock(&mu_);
    stopping_ = true;
  }
  curl_multi_wakeup(multi_);
  loop_.join();
  curl_multi_cleanup(multi_);
}

void HttpReadTarget::StartRead(const std::string& path, absl::Duration deadline,
                               Done done) {
  {
    hedge::MutexLock lock(&mu_);
    queue_.push_back({base_url_ + path, deadline, std::move(done)});
  }
  curl_multi_wakeup(multi_);
}

void HttpReadTarget::Begin(Queued queued) {
  auto transfer = std::make_unique<Transfer>();
  transfer->done = std::move(queued.done);
  transfer->easy = curl_easy_init();
  if (transfer->easy == nullptr) {
    std::move(transfer->done)("transport_easy_init");
    return;
  }
  CURL* easy = transfer->easy;
  curl_easy_setopt(easy, CURLOPT_URL, queued.url.c_str());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer->body);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");  // none from the environment
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                   static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(
                       std::max(queued.deadline, absl::Milliseconds(1)))));
  curl_easy_setopt(easy, CURLOPT_PRIVATE, transfer.get());
  if (curl_multi_add_handle(multi_, easy) != CURLM_OK) {
    curl_easy_cleanup(easy);
    std::move(transfer->done)("transport_add_handle");
    return;
  }
  transfer.release();  // owned through CURLOPT_PRIVATE until it ends
}

void HttpReadTarget::Finish(CURL* easy, CURLcode result) {
  Transfer* raw = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &raw);
  std::unique_ptr<Transfer> transfer(raw);
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  curl_multi_remove_handle(multi_, easy);
  curl_easy_cleanup(easy);
  std::move(transfer->done)(
      result == CURLE_OK
          ? HttpAnswerError(static_cast<int>(status), transfer->body)
          : TransportError(result));
}

void HttpReadTarget::Loop() {
  while (true) {
    std::vector<Queued> queued;
    bool stopping = false;
    {
      hedge::MutexLock lock(&mu_);
      queued.swap(queue_);
      stopping = stopping_;
    }
    for (Queued& one : queued) Begin(std::move(one));
    int running = 0;
    curl_multi_perform(multi_, &running);
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
      if (message->msg == CURLMSG_DONE) {
        Finish(message->easy_handle, message->data.result);
      }
    }
    // REQUIRES of the destructor: nothing is left in flight by now.
    if (stopping) return;
    curl_multi_poll(multi_, nullptr, 0, kIdlePollMs, nullptr);
  }
}

}  // namespace tailgate::experiment
