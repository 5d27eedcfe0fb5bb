#include "experiment/load/progress.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace tailgate::experiment {
namespace {

constexpr std::chrono::seconds kInterval(1);

}  // namespace

void Note(absl::string_view line) {
  const std::string text = absl::StrCat("experiment: ", line, "\n");
  // One write, so that lines from different threads do not interleave.
  if (write(STDERR_FILENO, text.data(), text.size()) < 0) return;
}

Progress::Progress(std::string what, int64_t total)
    : what_(std::move(what)),
      total_(total),
      next_line_(std::chrono::steady_clock::now() + kInterval) {}

void Progress::Update(int64_t done) {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_line_) return;
  next_line_ = now + kInterval;
  Note(absl::StrCat(what_, ": ", done, "/", total_, " reads"));
}

}  // namespace tailgate::experiment
