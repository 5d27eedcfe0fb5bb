#include "hedge/tenants/tenant_table.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tailgate::hedge {

absl::Status ValidateTenantName(absl::string_view name) {
  if (name.size() > kMaxTenantNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "longer than ", kMaxTenantNameBytes, " bytes (", name.size(), ")"));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '_' && c != '-') {
      return absl::InvalidArgumentError(
          absl::StrCat("want letters, digits, \".\", \"_\" and \"-\", got \"",
                       absl::CHexEscape(name), "\""));
    }
  }
  return absl::OkStatus();
}

TenantTable::TenantTable(int64_t max_requests, double share) {
  const int64_t capacity = std::max<int64_t>(
      1, static_cast<int64_t>(std::floor(share * max_requests)));
  admission_.reserve(kSlots);
  for (int i = 0; i < kSlots; ++i) {
    admission_.push_back(std::make_unique<Semaphore>(capacity));
  }
}

int TenantTable::SlotOf(absl::string_view name) {
  MutexLock lock(&mu_);
  auto it = slots_.find(name);
  if (it != slots_.end()) return it->second;
  if (static_cast<int>(names_.size()) < kMaxNamedTenants) {
    const int slot = static_cast<int>(names_.size());
    names_.emplace_back(name);
    slots_.emplace(std::string(name), slot);
    return slot;
  }
  // Not remembered by name: the table stays bounded.
  other_used_ = true;
  return kOther;
}

std::vector<std::string> TenantTable::Names() const {
  MutexLock lock(&mu_);
  std::vector<std::string> names = names_;
  if (other_used_) names.emplace_back(kOtherName);
  return names;
}

}  // namespace tailgate::hedge
