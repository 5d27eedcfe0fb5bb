// DescribeActions: a ReadDecision's actions as one line of text, so that a
// decision test reads as a transcript.
//
// Example:
//   EXPECT_EQ(DescribeActions(read.Start(At(0)), kT0),
//             "launch a0 r0 primary, arm +25ms");
//
// One phrase per action: "launch a1 r1 hedge", "arm +25ms" (the hedge
// timer), "give-up +100ms" (the give-up timer), "cancel a0", "fail a0"
// (cancelled and counted as a failure of its replica), "gave-up a0",
// "skip no_budget", "finish a1", "finish deadline_exceeded". Times are
// shown relative to `t0`.
//
// Thread safety: pure functions; safe from any thread.

#ifndef TAILGATE_HEDGE_DECISION_TESTING_ACTIONS_H_
#define TAILGATE_HEDGE_DECISION_TESTING_ACTIONS_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "hedge/decision/read_decision.h"

namespace tailgate::hedge {

inline std::string DescribeAction(const Action& action, absl::Time t0) {
  switch (action.type) {
    case Action::Type::kLaunch:
      return absl::StrCat("launch a", action.attempt, " r", action.replica, " ",
                          AttemptKindName(action.kind));
    case Action::Type::kArmHedgeTimer:
      return absl::StrCat("arm +", absl::FormatDuration(action.at - t0));
    case Action::Type::kCancel:
      return absl::StrCat(action.failed ? "fail a" : "cancel a",
                          action.attempt);
    case Action::Type::kArmGiveUpTimer:
      return absl::StrCat("give-up +", absl::FormatDuration(action.at - t0));
    case Action::Type::kGaveUp:
      return absl::StrCat("gave-up a", action.attempt);
    case Action::Type::kExtraSkipped:
      return absl::StrCat("skip ", SkipReasonName(action.skip));
    case Action::Type::kFinish:
      return action.attempt >= 0
                 ? absl::StrCat("finish a", action.attempt)
                 : absl::StrCat("finish ", ReadErrorName(action.error));
  }
  return "?";
}

inline std::string DescribeActions(const Actions& actions, absl::Time t0) {
  std::vector<std::string> phrases;
  for (const Action& action : actions) {
    phrases.push_back(DescribeAction(action, t0));
  }
  return absl::StrJoin(phrases, ", ");
}

}  // namespace tailgate::hedge

#endif  // TAILGATE_HEDGE_DECISION_TESTING_ACTIONS_H_
