// wake_latency: what this machine charges to wake a sleeping thread, by how
// long everything slept first. No sidecar, no gRPC, no HTTP: two threads of
// one process, an eventfd and a timerfd.
//
// Why: the seed scenario's hedged read is a chain of wake-ups after a few
// milliseconds of idleness (the replica woken by the hedge, its 2 ms
// timer, the sidecar woken by the answer, the client woken by the
// sidecar). On a virtual machine an idle vCPU is halted, and waking it
// costs far more than waking a thread onto a vCPU that is running; this
// program measures both here, so that docs/BENCHMARKS.md can say how much
// of the hedged p99 is the machine's rather than the sidecar's.
//
// For each placement and idle time T, --samples times: a poster thread
// waits T on a timerfd in epoll_wait (as the sidecar's loop and the
// replicas' libevent loops wait), notes the time and writes the eventfd a
// waiter thread is blocked reading; the waiter notes when it returned.
//   wake        waiter's return minus the write;
//   timer_late  how much later than T the poster's wait returned.
// Placements: "any" (the scheduler chooses, as for the real processes),
// "same_cpu" (both threads pinned to one CPU) and "other_cpu" (pinned to
// two different CPUs; skipped with fewer than two). Each placement pins
// only this probe's own two threads, and only for that placement. (The
// sidecar pins its threads when told to, with tailgate --cpus, which the
// experiment's --sidecar_cpus=auto sets for its sequential scenarios;
// "same_cpu" and "other_cpu" bracket what that choice changes.)
// One JSON line per placement and T on stdout: "placement", "idle_ms",
// then wake_* and timer_late_* (p50/p95/p99/p99.9/max in ms, samples).
//
// Usage: bazel run -c opt //experiment:wake_latency -- --samples=300

#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "experiment/report/json_line.h"
#include "experiment/report/percentiles.h"
#include "experiment/report/report.h"

ABSL_FLAG(std::string, samples, "300",
          "Wake-ups measured per placement and idle time (10 to 100000).");

namespace tailgate::experiment {
namespace {

constexpr int64_t kMinSamples = 10;
constexpr int64_t kMaxSamples = 100'000;
// From nearly busy to the hedge delay and past the seed's 40 ms straggler:
// the idle times the seed scenario's wake-ups follow.
constexpr absl::Duration kIdleTimes[] = {
    absl::Microseconds(50), absl::Microseconds(500), absl::Milliseconds(2),
    absl::Milliseconds(5),  absl::Milliseconds(7),   absl::Milliseconds(40)};

struct Placement {
  const char* name;
  std::optional<int> poster_cpu;  // nullopt: not pinned
  std::optional<int> waiter_cpu;  // nullopt: not pinned
};

int64_t NowNanos() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// Closes the descriptor it owns.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  const int fd_;
};

void Post(const Fd& event) {
  const uint64_t one = 1;
  while (write(event.get(), &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

void Take(const Fd& event) {
  uint64_t value = 0;
  while (read(event.get(), &value, sizeof(value)) < 0 && errno == EINTR) {
  }
}

absl::Status PinTo(std::optional<int> cpu) {
  if (!cpu.has_value()) return absl::OkStatus();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(*cpu, &set);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error != 0) {
    return absl::InternalError(
        absl::StrCat("pinning to CPU ", *cpu, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

// The CPUs this process may run on, in order.
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Waits `duration` on a timerfd in epoll_wait.
class TimerWait {
 public:
  TimerWait()
      : timer_(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)),
        epoll_(epoll_create1(EPOLL_CLOEXEC)) {}

  absl::Status Init() {
    if (timer_.get() < 0) return Errno("timerfd_create");
    if (epoll_.get() < 0) return Errno("epoll_create1");
    epoll_event event{};
    event.events = EPOLLIN;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, timer_.get(), &event) != 0) {
      return Errno("epoll_ctl");
    }
    return absl::OkStatus();
  }

  void Wait(absl::Duration duration) {
    itimerspec spec{};
    spec.it_value = absl::ToTimespec(duration);
    timerfd_settime(timer_.get(), 0, &spec, nullptr);
    epoll_event ready{};
    while (epoll_wait(epoll_.get(), &ready, 1, -1) < 0 && errno == EINTR) {
    }
    Take(timer_);
  }

 private:
  Fd timer_;
  Fd epoll_;
};

struct Measured {
  std::vector<absl::Duration> wake;
  std::vector<absl::Duration> timer_late;
};

// The waiter blocks on `go`, records its wake-up and answers on `done`, so
// that the poster (the "main" side of a placement) never posts while the
// waiter is still running.
absl::StatusOr<Measured> MeasureAfterIdle(const Placement& placement,
                                          absl::Duration idle,
                                          int64_t samples) {
  Fd go(eventfd(0, EFD_CLOEXEC));
  Fd done(eventfd(0, EFD_CLOEXEC));
  if (go.get() < 0 || done.get() < 0) return Errno("eventfd");
  TimerWait timer;
  absl::Status status = timer.Init();
  if (!status.ok()) return status;

  // Stored before Post(go), loaded after Take(go).
  std::atomic<int64_t> posted_at{0};
  Measured measured;
  measured.wake.reserve(samples);
  measured.timer_late.reserve(samples);
  absl::Status waiter_status;
  std::thread waiter([&] {
    waiter_status = PinTo(placement.waiter_cpu);
    for (int64_t i = 0; i < samples; ++i) {
      Take(go);
      const int64_t woke_at = NowNanos();
      measured.wake.push_back(absl::Nanoseconds(
          woke_at - posted_at.load(std::memory_order_acquire)));
      Post(done);
    }
  });
  // A thread of its own too, so that no pinning outlives this placement.
  std::thread poster([&] {
    status = PinTo(placement.poster_cpu);
    for (int64_t i = 0; i < samples; ++i) {
      const int64_t start = NowNanos();
      timer.Wait(idle);
      const int64_t now = NowNanos();
      measured.timer_late.push_back(absl::Nanoseconds(now - start) - idle);
      posted_at.store(now, std::memory_order_release);
      Post(go);
      Take(done);
    }
  });
  poster.join();
  waiter.join();
  if (!status.ok()) return status;
  if (!waiter_status.ok()) return waiter_status;
  std::sort(measured.wake.begin(), measured.wake.end());
  std::sort(measured.timer_late.begin(), measured.timer_late.end());
  return measured;
}

int Run(int64_t samples) {
  const std::vector<int> cpus = AllowedCpus();
  std::vector<Placement> placements = {{"any", std::nullopt, std::nullopt}};
  if (!cpus.empty()) placements.push_back({"same_cpu", cpus[0], cpus[0]});
  if (cpus.size() >= 2) {
    placements.push_back({"other_cpu", cpus[0], cpus[1]});
  } else {
    std::fprintf(stderr,
                 "wake_latency: one CPU allowed; other_cpu is skipped\n");
  }
  for (const Placement& placement : placements) {
    for (absl::Duration idle : kIdleTimes) {
      const absl::StatusOr<Measured> measured =
          MeasureAfterIdle(placement, idle, samples);
      if (!measured.ok()) {
        std::fprintf(stderr, "wake_latency: %s\n",
                     std::string(measured.status().message()).c_str());
        return 1;
      }
      JsonObject line;
      line.AddString("placement", placement.name)
          .AddDouble("idle_ms", absl::ToDoubleMilliseconds(idle), 3);
      AddLatencyFields(Summarize(measured->wake), line, "wake_");
      AddLatencyFields(Summarize(measured->timer_late), line, "timer_late_");
      PrintLine(line);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tailgate::experiment

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Measures thread wake-up latency after idle periods; JSON on stdout.");
  absl::ParseCommandLine(argc, argv);
  const std::string text = absl::GetFlag(FLAGS_samples);
  int64_t samples = 0;
  if (!absl::SimpleAtoi(text, &samples) ||
      samples < tailgate::experiment::kMinSamples ||
      samples > tailgate::experiment::kMaxSamples) {
    std::fprintf(stderr,
                 "wake_latency: --samples: want an integer in [%lld, %lld], "
                 "got \"%s\"\n",
                 static_cast<long long>(tailgate::experiment::kMinSamples),
                 static_cast<long long>(tailgate::experiment::kMaxSamples),
                 text.c_str());
    return 2;
  }
  return tailgate::experiment::Run(samples);
}
