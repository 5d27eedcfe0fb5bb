// TenantTable: the tenants the sidecar tells apart, and each one's share of
// admission.
//
// A read names its tenant (ReadRequest.tenant, or the HTTP door's
// Tailgate-Tenant header); a read that names none belongs to the tenant ""
// like any other. The first kMaxNamedTenants distinct names seen each get a
// slot of their own, for the life of the process; every later name shares
// the one slot kOther, labelled "other" (so the slots, and the metric
// labels made from them, stay bounded whatever the callers send; a tenant
// literally named "other" that came too late shares that slot too).
//
// Admission share: a slot holds at most
//   max(1, floor(share * max_requests))
// reads in flight at once, so that one tenant flooding the sidecar cannot
// take every request slot. (The engine's global max_requests applies as
// well.) Each upstream also keeps a hedge budget per slot (the engine's
// Upstream), so one tenant's hedges are paid by its own reads, and a hedge
// payoff gate per slot, so one tenant's losing hedges hold back only its
// own (hedge/tenants/tenant_payoff.h).
//
// Example:
//   TenantTable tenants(/*max_requests=*/128, /*share=*/0.5);
//   if (absl::Status s = ValidateTenantName(name); !s.ok()) ...
//   const int slot = tenants.SlotOf(name);
//   std::optional<Permit> permit = tenants.TryAdmit(slot);
//
// Thread safety: safe from any thread. SlotOf takes an internal mutex for a
// hash lookup; TryAdmit is lock-free.

#ifndef TAILGATE_HEDGE_TENANTS_TENANT_TABLE_H_
#define TAILGATE_HEDGE_TENANTS_TENANT_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "hedge/policy/admission_limits.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

inline constexpr size_t kMaxTenantNameBytes = 64;
inline constexpr int kMaxNamedTenants = 16;

// INVALID_ARGUMENT unless `name` has at most kMaxTenantNameBytes bytes of
// ASCII letters, digits, ".", "_" and "-" ("" is valid: no tenant). The
// message says what is wrong without naming the field ("longer than 64
// bytes (70)"), so that each door prefixes its own name for it.
absl::Status ValidateTenantName(absl::string_view name);

class TenantTable {
 public:
  static constexpr int kOther = kMaxNamedTenants;  // the shared slot
  static constexpr int kSlots = kMaxNamedTenants + 1;
  static constexpr absl::string_view kOtherName = "other";

  // REQUIRES: max_requests >= 1, share in (0, 1].
  TenantTable(int64_t max_requests, double share);

  TenantTable(const TenantTable&) = delete;
  TenantTable& operator=(const TenantTable&) = delete;

  // The slot of tenant `name`, giving it one if it is among the first
  // kMaxNamedTenants seen; kOther after that. REQUIRES: a valid name.
  int SlotOf(absl::string_view name);

  // A permit for one more read of `slot`, or nullopt when the slot holds
  // its share already. REQUIRES: 0 <= slot < kSlots.
  std::optional<Permit> TryAdmit(int slot) {
    return admission_[slot]->TryAcquire();
  }
  int64_t in_flight(int slot) const { return admission_[slot]->in_use(); }
  // Reads one slot may hold at once.
  int64_t capacity() const { return admission_[0]->capacity(); }

  // The label of each slot given out so far, by slot: the names in the
  // order they were first seen, then "other" (always last, at kOther, once
  // a name has gone to it).
  std::vector<std::string> Names() const;

 private:
  // Constant after construction.
  std::vector<std::unique_ptr<Semaphore>> admission_;  // by slot

  mutable Mutex mu_;
  absl::flat_hash_map<std::string, int> slots_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> names_ ABSL_GUARDED_BY(mu_);  // by slot
  bool other_used_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_TENANTS_TENANT_TABLE_H_
