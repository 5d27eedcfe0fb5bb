#include "hedge/policy/admission_limits.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hedge/errors/field_error.h"

namespace tailgate::hedge {
namespace {

// A sanity bound: far above any useful concurrency, far below overflow.
constexpr int64_t kMaxLimit = 1'000'000;

absl::Status CheckLimit(absl::string_view field, int64_t value) {
  if (value < 1 || value > kMaxLimit) {
    return FieldError(
        field, absl::StrCat("must be in [1, ", kMaxLimit, "], got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

Permit::Permit(Permit&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)) {}

Permit& Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
  }
  return *this;
}

void Permit::Release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->ReleaseOne();
}

std::optional<Permit> Semaphore::TryAcquire() {
  int64_t in_use = in_use_.load(std::memory_order_relaxed);
  do {
    if (in_use >= capacity_) return std::nullopt;
  } while (!in_use_.compare_exchange_weak(in_use, in_use + 1,
                                          std::memory_order_acquire,
                                          std::memory_order_relaxed));
  return Permit(this);
}

void Semaphore::ReleaseOne() {
  in_use_.fetch_sub(1, std::memory_order_release);
}

absl::Status ValidateAdmissionConfig(const AdmissionConfig& config) {
  if (absl::Status s = CheckLimit("max_requests", config.max_requests);
      !s.ok()) {
    return s;
  }
  return CheckLimit("max_attempts", config.max_attempts);
}

}  // namespace tailgate::hedge
