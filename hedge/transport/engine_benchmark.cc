// CPU cost and allocations per read through the engine, against a loopback
// replica in the same process. Run optimised:
//   bazel run -c opt //hedge/transport:engine_benchmark
//
// Counters (per read): cpu_us = process CPU time (engine loop + replica +
// the benchmark thread), allocs = malloc calls in the whole process. The
// BM_DirectCurl rows give the same figures for a plain libcurl client and
// the same replica, so the engine's own share is the difference.

#include <curl/curl.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "benchmark/benchmark.h"
#include "hedge/hygiene/replica_url.h"
#include "hedge/transport/curl/curl_loop.h"
#include "hedge/transport/engine.h"
#include "tests/replica/replica.h"

// Counts every malloc in the process (C++ new, libcurl, libevent) by
// interposing glibc's allocator entry points.
extern "C" void* __libc_malloc(size_t size);
extern "C" void* __libc_calloc(size_t count, size_t size);
extern "C" void* __libc_realloc(void* pointer, size_t size);
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace
extern "C" void* malloc(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
extern "C" void* calloc(size_t count, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, size);
}
extern "C" void* realloc(void* pointer, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(pointer, size);
}

namespace tailgate::hedge {
namespace {

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Per-read CPU and allocation counters over the timed loop.
class CostMeter {
 public:
  CostMeter()
      : cpu_start_(ProcessCpuSeconds()),
        allocs_start_(g_allocations.load(std::memory_order_relaxed)) {}
  void Report(benchmark::State& state) const {
    const double reads = static_cast<double>(state.iterations());
    state.counters["cpu_us"] = (ProcessCpuSeconds() - cpu_start_) * 1e6 / reads;
    state.counters["allocs"] =
        (g_allocations.load(std::memory_order_relaxed) - allocs_start_) / reads;
  }

 private:
  const double cpu_start_;
  const uint64_t allocs_start_;
};

// Loop wake-ups per read and mean timer lateness (hedge and deadline timers).
void ReportLoop(benchmark::State& state, const Engine& engine) {
  const EngineSnapshot stats = engine.Snapshot();
  state.counters["loop_wakeups"] =
      static_cast<double>(stats.loop_iterations) / state.iterations();
  if (stats.timers_fired > 0) {
    state.counters["timer_late_us"] =
        absl::ToDoubleMicroseconds(stats.timer_lateness_total) /
        static_cast<double>(stats.timers_fired);
  }
}

std::unique_ptr<testing::Replica> StartReplica() {
  testing::ReplicaResponse response;
  response.body = "replicated-value";
  testing::ReplicaOptions options;
  options.record_requests = false;
  auto replica = testing::Replica::Start(testing::Always(response), options);
  if (!replica.ok()) std::abort();
  return std::move(*replica);
}

// An engine on a loop of its own; the loop outlives it.
struct LoopAndEngine {
  std::unique_ptr<transport::CurlLoop> loop;
  std::unique_ptr<Engine> engine;
};

LoopAndEngine StartEngine(const testing::Replica& replica) {
  EngineConfig config;
  config.upstreams.resize(1);
  config.upstreams[0].replicas = *hygiene::ParseReplicaList(replica.url());
  config.admission.max_requests = 1024;
  config.admission.max_attempts = 1024;
  LoopAndEngine started;
  started.loop = std::make_unique<transport::CurlLoop>(SteadyClock());
  if (!started.loop->Start().ok()) std::abort();
  auto engine = Engine::Create(std::move(config), *started.loop);
  if (!engine.ok()) std::abort();
  started.engine = std::move(*engine);
  return started;
}

EngineRead MakeRead(const Engine& engine) {
  EngineRead read;
  read.target = "/read?id=1";
  read.deadline = engine.clock().Now() + absl::Seconds(5);
  return read;
}

void BM_EngineSequential(benchmark::State& state) {
  auto replica = StartReplica();
  LoopAndEngine started = StartEngine(*replica);
  Engine* engine = started.engine.get();
  CostMeter meter;
  for (auto _ : state) {
    absl::Notification done;
    bool ok = false;
    const absl::StatusOr<uint64_t> submitted = engine->Submit(
        MakeRead(*engine), [&](absl::StatusOr<EngineResponse> result) {
          ok = result.ok() && result->body == "replicated-value";
          done.Notify();
        });
    if (!submitted.ok()) {
      state.SkipWithError("read refused");
      break;
    }
    done.WaitForNotification();
    if (!ok) state.SkipWithError("read failed");
  }
  meter.Report(state);
  ReportLoop(state, *engine);
}
BENCHMARK(BM_EngineSequential)->UseRealTime();

// Keeps `range(0)` reads in flight; reports reads per second.
void BM_EngineConcurrent(benchmark::State& state) {
  const int concurrency = static_cast<int>(state.range(0));
  auto replica = StartReplica();
  LoopAndEngine started = StartEngine(*replica);
  Engine* engine = started.engine.get();
  absl::Mutex mu;
  int in_flight = 0;
  int64_t failures = 0;
  CostMeter meter;
  for (auto _ : state) {
    {
      absl::MutexLock lock(&mu);
      auto below = [&] { return in_flight < concurrency; };
      mu.Await(absl::Condition(&below));
      ++in_flight;
    }
    auto submitted = engine->Submit(MakeRead(*engine),
                                    [&](absl::StatusOr<EngineResponse> result) {
                                      absl::MutexLock lock(&mu);
                                      --in_flight;
                                      if (!result.ok()) ++failures;
                                    });
    if (!submitted.ok()) {
      absl::MutexLock lock(&mu);
      --in_flight;
      ++failures;
    }
  }
  {
    absl::MutexLock lock(&mu);
    auto drained = [&] { return in_flight == 0; };
    mu.Await(absl::Condition(&drained));
  }
  meter.Report(state);
  ReportLoop(state, *engine);
  state.counters["reads_per_s"] =
      benchmark::Counter(state.iterations(), benchmark::Counter::kIsRate);
  if (failures > 0) state.SkipWithError("reads failed");
}
BENCHMARK(BM_EngineConcurrent)->Arg(1)->Arg(8)->Arg(32)->UseRealTime();

size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

// The same replica read by one plain libcurl easy handle (keep-alive).
void BM_DirectCurl(benchmark::State& state) {
  auto replica = StartReplica();
  const std::string url = replica->url() + "/read?id=1";
  CURL* easy = curl_easy_init();
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  CostMeter meter;
  for (auto _ : state) {
    if (curl_easy_perform(easy) != CURLE_OK) state.SkipWithError("curl failed");
  }
  meter.Report(state);
  curl_easy_cleanup(easy);
}
BENCHMARK(BM_DirectCurl)->UseRealTime();

}  // namespace
}  // namespace tailgate::hedge
