#include "server/observability/discovery_log.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_join.h"

namespace tailgate::server {
namespace {

// The elements of sorted `a` that sorted `b` lacks.
std::vector<std::string> Minus(const std::vector<std::string>& a,
                               const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(),
                      std::back_inserter(out));
  return out;
}

}  // namespace

void DiscoveryLog::OnNameLookup(const std::string& upstream,
                                const std::string& name,
                                const hedge::NameLookup& lookup) {
  const absl::Time now = clock_.Now();
  Lines lines;
  {
    hedge::MutexLock lock(&mu_);
    lines = Decide({upstream, name}, lookup, now);
  }
  if (lines.failed) {
    log_.Warn("dns_lookup_failed", {{"upstream", upstream},
                                    {"name", name},
                                    {"error", lookup.status.message()},
                                    {"failures", lines.failures},
                                    {"kept", lookup.addresses.size()}});
  }
  if (lines.recovered) {
    log_.Info("dns_lookup_recovered",
              {{"upstream", upstream},
               {"name", name},
               {"failures", lines.failures},
               {"for", absl::Trunc(lines.failing_for, absl::Milliseconds(1))}});
  }
  if (lines.changed) {
    log_.Info("dns_replicas_changed",
              {{"upstream", upstream},
               {"name", name},
               {"added", absl::StrJoin(lines.added, ",")},
               {"removed", absl::StrJoin(lines.removed, ",")},
               {"addresses", lookup.addresses.size()}});
  }
}

DiscoveryLog::Lines DiscoveryLog::Decide(
    const std::pair<std::string, std::string>& key,
    const hedge::NameLookup& lookup, absl::Time now) {
  if (!names_.contains(key)) {
    absl::erase_if(names_, [now](const auto& entry) {
      return now - entry.second.last_heard > kForgetAfter;
    });
  }
  Name& name = names_[key];
  name.last_heard = now;
  Lines lines;
  if (!lookup.status.ok()) {
    if (name.failures++ == 0) {
      name.failing_since = now;
      name.last_failure_line = now;
      lines.failed = true;
    } else if (now - name.last_failure_line >= kReminderInterval) {
      name.last_failure_line = now;
      lines.failed = true;
    }
    lines.failures = name.failures;
  } else if (name.failures > 0) {
    lines.recovered = true;
    lines.failures = name.failures;
    lines.failing_for = now - name.failing_since;
    name.failures = 0;
  }
  if (lookup.addresses != name.logged &&
      now - name.last_change_line >= kChangeInterval) {
    lines.changed = true;
    lines.added = Minus(lookup.addresses, name.logged);
    lines.removed = Minus(name.logged, lookup.addresses);
    name.logged = lookup.addresses;
    name.last_change_line = now;
  }
  return lines;
}

}  // namespace tailgate::server
