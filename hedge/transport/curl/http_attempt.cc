// The only file that interprets libcurl result codes.

#include "hedge/transport/curl/http_attempt.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tailgate::hedge::transport {
namespace {

// Response headers an attempt makes room for at once.
constexpr size_t kHeadersReserved = 16;

// Collects the first failing setopt, so Prepare reads as a list of options.
class Options {
 public:
  explicit Options(CURL* easy) : easy_(easy) {}

  template <typename T>
  Options& Set(CURLoption option, T value) {
    if (code_ == CURLE_OK) {
      code_ = curl_easy_setopt(easy_, option, value);
      if (code_ != CURLE_OK) failed_ = option;
    }
    return *this;
  }

  absl::Status status() const {
    if (code_ == CURLE_OK) return absl::OkStatus();
    return absl::InternalError(
        absl::StrCat("curl option ", static_cast<int>(failed_),
                     " refused: ", curl_easy_strerror(code_)));
  }

 private:
  CURL* const easy_;
  CURLcode code_ = CURLE_OK;
  CURLoption failed_ = CURLOPT_URL;
};

long CurlHttpVersion(HttpVersion version, absl::string_view url) {
  if (version == HttpVersion::kHttp1) return CURL_HTTP_VERSION_1_1;
  return absl::StartsWith(url, "https:") ? CURL_HTTP_VERSION_2TLS
                                         : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
}

}  // namespace

HttpAttempt::HttpAttempt() : easy_(curl_easy_init()) {}

HttpAttempt::~HttpAttempt() {
  if (easy_ != nullptr) curl_easy_cleanup(easy_);
  curl_slist_free_all(request_headers_);
  curl_slist_free_all(connect_to_);
}

absl::Status HttpAttempt::Prepare(const AttemptRequest& request,
                                  const AttemptLimits& limits, void* owner) {
  if (easy_ == nullptr) return absl::InternalError("curl_easy_init failed");
  curl_easy_reset(easy_);
  curl_slist_free_all(request_headers_);
  request_headers_ = nullptr;
  curl_slist_free_all(connect_to_);
  connect_to_ = nullptr;
  limits_ = limits;
  head_ = request.head;
  clock_ = request.clock;
  began_.reset();
  headers_.clear();
  // Room for a typical answer's headers at once, instead of growing
  // through 1, 2, 4, 8 (TakeHeaders moved the last vector out).
  headers_.reserve(kHeadersReserved);
  header_bytes_ = 0;
  body_.clear();
  too_large_ = false;
  header_overflow_ = false;

  bool has_accept_encoding = false;
  for (const hygiene::HttpHeader& header : *request.headers) {
    has_accept_encoding |=
        absl::EqualsIgnoreCase(header.name, "accept-encoding");
    // "Name;" is curl's spelling of a header with an empty value.
    const std::string line =
        header.value.empty() ? absl::StrCat(header.name, ";")
                             : absl::StrCat(header.name, ": ", header.value);
    curl_slist* appended = curl_slist_append(request_headers_, line.c_str());
    if (appended == nullptr)
      return absl::ResourceExhaustedError("out of memory");
    request_headers_ = appended;
  }
  if (!has_accept_encoding) {
    // Compressed bodies could defeat max_response_bytes.
    curl_slist* appended =
        curl_slist_append(request_headers_, "Accept-Encoding: identity");
    if (appended == nullptr)
      return absl::ResourceExhaustedError("out of memory");
    request_headers_ = appended;
  }

  Options options(easy_);
  options.Set(CURLOPT_URL, request.url.c_str())
      .Set(CURLOPT_PRIVATE, owner)
      .Set(CURLOPT_NOSIGNAL, 1L)
      .Set(CURLOPT_PROXY, "")  // never a proxy from the environment
      .Set(CURLOPT_FOLLOWLOCATION, 0L)
      .Set(CURLOPT_PATH_AS_IS, 1L)
      .Set(CURLOPT_PROTOCOLS_STR, "http,https")
      .Set(CURLOPT_HTTP_CONTENT_DECODING, 0L)
      .Set(CURLOPT_TCP_NODELAY, 1L)
      .Set(CURLOPT_HTTP_VERSION,
           CurlHttpVersion(request.http_version, request.url))
      .Set(CURLOPT_PIPEWAIT, 1L)
      .Set(CURLOPT_HTTPHEADER, request_headers_)
      .Set(CURLOPT_HEADERFUNCTION, &HttpAttempt::OnHeader)
      .Set(CURLOPT_HEADERDATA, this)
      .Set(CURLOPT_WRITEFUNCTION, &HttpAttempt::OnBody)
      .Set(CURLOPT_WRITEDATA, this);
  if (clock_ != nullptr) {
    options.Set(CURLOPT_PREREQFUNCTION, &HttpAttempt::OnRequestReady)
        .Set(CURLOPT_PREREQDATA, this);
  }
  if (request.head) options.Set(CURLOPT_NOBODY, 1L);
  if (request.warm != nullptr) request.warm->Attach(easy_);
  if (request.ca_file != nullptr && !request.ca_file->empty()) {
    options.Set(CURLOPT_CAINFO, request.ca_file->c_str());
  }
  if (!request.connect_to.empty()) {
    // Connection reuse matches on it too: an address's connections serve
    // that address only.
    connect_to_ = curl_slist_append(nullptr, request.connect_to.c_str());
    if (connect_to_ == nullptr) return absl::InternalError("out of memory");
    options.Set(CURLOPT_CONNECT_TO, connect_to_);
  }
  return options.status();
}

absl::string_view HttpAttempt::HeaderValue(absl::string_view name) const {
  for (const hygiene::HttpHeader& header : headers_) {
    if (absl::EqualsIgnoreCase(header.name, name)) return header.value;
  }
  return absl::string_view();
}

int HttpAttempt::status() const {
  long code = 0;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &code);
  return static_cast<int>(code);
}

AttemptOutcome HttpAttempt::Classify(CURLcode code) const {
  if (too_large_) return AttemptOutcome::kTooLarge;
  if (header_overflow_) return AttemptOutcome::kTransportError;
  switch (code) {
    case CURLE_OK:
      return IsFailureAnswer(status()) ? AttemptOutcome::kServerError
                                       : AttemptOutcome::kSuccess;
    case CURLE_FILESIZE_EXCEEDED:
      return AttemptOutcome::kTooLarge;
    default:
      return AttemptOutcome::kTransportError;
  }
}

int HttpAttempt::OnRequestReady(void* self, char*, char*, int, int) noexcept {
  auto* attempt = static_cast<HttpAttempt*>(self);
  // Connecting (TCP, then TLS) is the replica's time: counted as begun.
  curl_off_t connect_us = 0;
  curl_off_t tls_us = 0;
  curl_easy_getinfo(attempt->easy_, CURLINFO_CONNECT_TIME_T, &connect_us);
  curl_easy_getinfo(attempt->easy_, CURLINFO_APPCONNECT_TIME_T, &tls_us);
  attempt->began_ =
      attempt->clock_->Now() - absl::Microseconds(std::max(connect_us, tls_us));
  return CURL_PREREQFUNC_OK;
}

size_t HttpAttempt::OnHeader(char* data, size_t size, size_t count,
                             void* self) noexcept {
  const size_t length = size * count;
  return static_cast<HttpAttempt*>(self)->AddHeaderLine(data, length) ? length
                                                                      : 0;
}

bool HttpAttempt::AddHeaderLine(const char* data, size_t length) {
  absl::string_view line(data, length);
  if (absl::StartsWith(line, "HTTP/")) {
    // A new status line: an interim (1xx) response's headers are dropped.
    headers_.clear();
    header_bytes_ = 0;
    return true;
  }
  header_bytes_ += static_cast<int64_t>(length);
  if (header_bytes_ > limits_.max_header_bytes) {
    header_overflow_ = true;
    return false;
  }
  line = absl::StripTrailingAsciiWhitespace(line);
  if (line.empty()) return OnHeadersComplete();
  if (line.front() == ' ' || line.front() == '\t') {
    // Obsolete line folding: continues the previous header's value.
    if (headers_.empty()) return true;
    absl::StrAppend(&headers_.back().value, " ",
                    absl::StripLeadingAsciiWhitespace(line));
    return true;
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos || colon == 0) return true;
  if (static_cast<int>(headers_.size()) >= limits_.max_headers) {
    header_overflow_ = true;
    return false;
  }
  headers_.push_back(hygiene::HttpHeader{
      std::string(line.substr(0, colon)),
      std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)))});
  return true;
}

bool HttpAttempt::OnHeadersComplete() {
  if (head_ || status() < 200) return true;
  curl_off_t announced = -1;
  curl_easy_getinfo(easy_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
  if (announced > limits_.max_body_bytes) {
    too_large_ = true;
    return false;
  }
  if (announced > 0) body_.reserve(static_cast<size_t>(announced));
  return true;
}

size_t HttpAttempt::OnBody(char* data, size_t size, size_t count,
                           void* self) noexcept {
  auto* attempt = static_cast<HttpAttempt*>(self);
  const size_t length = size * count;
  if (static_cast<int64_t>(attempt->body_.size() + length) >
      attempt->limits_.max_body_bytes) {
    attempt->too_large_ = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  attempt->body_.append(data, length);
  return length;
}

}  // namespace tailgate::hedge::transport
