// BatchCredits: the hedge credit the reads of one batch (a ReadMany call)
// earn, held for the batch's own hedges while it runs.
//
// A hedge budget caps its balance at the burst (hedge_budget.h), so the
// credit of many reads admitted at once would mostly be lost: 100 reads at
// a fraction of 0.25 earn 25 credits, but the balance holds 2 by default,
// and a batch could hedge no more of its keys than that, its slowest keys,
// which need it most, often finding none. A batch's reads earn into the
// batch instead, uncapped (OnAdmission), and a hedge of one of them takes
// from there first (TryConsume), then from the budget's balance like any
// read's. When the batch ends (its last holder drops it), what it did not
// spend goes to each budget's balance, up to the burst, as if its reads
// had earned it there. So a batch spends at most what its reads earned
// plus the burst, and each budget's bound holds over every read it
// admitted:
//   hedges <= burst + fraction * admitted.
// A batch may read from several upstreams: the credit is kept per budget,
// and pays only for that budget's hedges; the batch keeps each budget
// alive until it ends.
//
// Thread safety: safe from any thread (one lock).

#ifndef TAILGATE_HEDGE_POLICY_BATCH_CREDITS_H_
#define TAILGATE_HEDGE_POLICY_BATCH_CREDITS_H_

#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "hedge/policy/hedge_budget.h"
#include "hedge/sync/mutex.h"

namespace tailgate::hedge {

class BatchCredits {
 public:
  BatchCredits() = default;
  // Gives what is left to each budget's balance, up to its burst.
  ~BatchCredits();
  BatchCredits(const BatchCredits&) = delete;
  BatchCredits& operator=(const BatchCredits&) = delete;

  // A read of the batch was admitted on `budget`: it earns the budget's
  // fraction into the batch (and counts as admitted by the budget).
  void OnAdmission(std::shared_ptr<HedgeBudget> budget);
  // Takes one of `budget`'s credits the batch holds for a hedge. False
  // (and nothing taken) when it holds less than one, or the budget's
  // hedging is off (fraction 0, or a burst below 1).
  bool TryConsume(HedgeBudget& budget);
  // `budget`'s credit the batch holds, in credits.
  double credits(const HedgeBudget& budget) const;

 private:
  struct Held {
    std::shared_ptr<HedgeBudget> budget;
    int64_t units = 0;
  };

  mutable Mutex mu_;
  absl::flat_hash_map<const HedgeBudget*, Held> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_POLICY_BATCH_CREDITS_H_
