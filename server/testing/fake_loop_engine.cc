#include "server/testing/fake_loop_engine.h"

#include <utility>

#include "absl/time/clock.h"

namespace tailgate::server::testing {

absl::StatusOr<std::unique_ptr<FakeLoopEngine>> FakeLoopEngine::Create(
    hedge::Clock& clock) {
  absl::StatusOr<std::unique_ptr<tailgate::testing::EventLoopThread>> loop =
      tailgate::testing::EventLoopThread::Create();
  if (!loop.ok()) return loop.status();
  std::unique_ptr<FakeLoopEngine> engine(
      new FakeLoopEngine(clock, *std::move(loop)));
  engine->wake_ = event_new(engine->loop_->base(), -1, 0,
                            &FakeLoopEngine::OnWake, engine.get());
  if (engine->wake_ == nullptr) {
    return absl::InternalError("event_new failed");
  }
  engine->loop_->Start();
  return engine;
}

FakeLoopEngine::FakeLoopEngine(
    hedge::Clock& clock,
    std::unique_ptr<tailgate::testing::EventLoopThread> loop)
    : clock_(clock), loop_(std::move(loop)) {}

FakeLoopEngine::~FakeLoopEngine() {
  if (wake_ == nullptr) return;  // Create failed: the loop never ran
  hedge::Mutex done_mu;
  hedge::CondVar done_changed;
  bool done = false;
  {
    hedge::MutexLock lock(&mu_);
    stopping_ = true;
    std::vector<uint64_t> ids;
    for (const auto& [id, callback] : pending_) ids.push_back(id);
    for (uint64_t id : ids) {
      CompleteLocked(id,
                     hedge::ReadFailureStatus(hedge::ReadFailure::kShuttingDown,
                                              hedge::kShuttingDownMessage));
    }
    // Runs after every task posted before it: the queue is in order.
    Post([&](event_base*) {
      hedge::MutexLock done_lock(&done_mu);
      done = true;
      done_changed.SignalAll();
    });
  }
  {
    hedge::MutexLock done_lock(&done_mu);
    while (!done) done_changed.Wait(&done_mu);
  }
  loop_->Stop();
  event_free(wake_);
}

absl::StatusOr<uint64_t> FakeLoopEngine::Submit(hedge::EngineRead read,
                                                hedge::ReadCallback done) {
  const bool on_loop_thread = loop_->InLoopThread();
  hedge::MutexLock lock(&mu_);
  Submitted submitted{0, std::move(read), on_loop_thread};
  absl::Status refusal = refusal_;
  if (stopping_) {
    refusal = hedge::ReadFailureStatus(hedge::ReadFailure::kShuttingDown,
                                       hedge::kShuttingDownMessage);
  }
  if (refusal.ok()) {
    submitted.id = next_id_++;
    pending_.emplace(submitted.id, std::move(done));
  }
  submitted_.push_back(std::move(submitted));
  changed_.SignalAll();
  if (!refusal.ok()) return refusal;
  return submitted_.back().id;
}

void FakeLoopEngine::Cancel(uint64_t read_id) {
  hedge::MutexLock lock(&mu_);
  cancelled_.push_back(read_id);
  changed_.SignalAll();
  CompleteLocked(read_id,
                 hedge::ReadFailureStatus(hedge::ReadFailure::kCancelled,
                                          "read cancelled"));
}

absl::Status FakeLoopEngine::SetUpstreams(
    std::vector<hedge::UpstreamConfig> /*upstreams*/) {
  return absl::OkStatus();
}

absl::Status FakeLoopEngine::RunOnLoop(
    absl::AnyInvocable<void(event_base*)> task) {
  hedge::MutexLock lock(&mu_);
  if (stopping_) {
    return absl::FailedPreconditionError("the engine's loop has stopped");
  }
  Post(std::move(task));
  return absl::OkStatus();
}

void FakeLoopEngine::RefuseWith(absl::Status status) {
  hedge::MutexLock lock(&mu_);
  refusal_ = std::move(status);
}

bool FakeLoopEngine::Answer(uint64_t read_id, hedge::EngineResponse response) {
  hedge::MutexLock lock(&mu_);
  return CompleteLocked(read_id, std::move(response));
}

bool FakeLoopEngine::Fail(uint64_t read_id, hedge::ReadFailure failure,
                          absl::string_view message) {
  hedge::MutexLock lock(&mu_);
  return CompleteLocked(read_id, hedge::ReadFailureStatus(failure, message));
}

std::optional<FakeLoopEngine::Submitted> FakeLoopEngine::WaitForRead(
    size_t index, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  hedge::MutexLock lock(&mu_);
  while (submitted_.size() <= index) {
    if (changed_.WaitWithDeadline(&mu_, deadline) &&
        submitted_.size() <= index) {
      return std::nullopt;
    }
  }
  return submitted_[index];
}

bool FakeLoopEngine::WaitForCancelled(uint64_t read_id,
                                      absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  hedge::MutexLock lock(&mu_);
  auto cancelled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (uint64_t id : cancelled_) {
      if (id == read_id) return true;
    }
    return false;
  };
  while (!cancelled()) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) return cancelled();
  }
  return true;
}

std::vector<FakeLoopEngine::Submitted> FakeLoopEngine::submitted() const {
  hedge::MutexLock lock(&mu_);
  return submitted_;
}

std::vector<uint64_t> FakeLoopEngine::cancelled() const {
  hedge::MutexLock lock(&mu_);
  return cancelled_;
}

size_t FakeLoopEngine::pending() const {
  hedge::MutexLock lock(&mu_);
  return pending_.size();
}

void FakeLoopEngine::Post(absl::AnyInvocable<void(event_base*)> task) {
  tasks_.push_back(std::move(task));
  // Thread-safe: the base was made after evthread_use_pthreads.
  event_active(wake_, EV_READ, 0);
}

bool FakeLoopEngine::CompleteLocked(
    uint64_t read_id, absl::StatusOr<hedge::EngineResponse> result) {
  auto it = pending_.find(read_id);
  if (it == pending_.end()) return false;
  hedge::ReadCallback done = std::move(it->second);
  pending_.erase(it);
  Post([done = std::move(done), result = std::move(result)](
           event_base*) mutable { done(std::move(result)); });
  return true;
}

void FakeLoopEngine::OnWake(evutil_socket_t, short, void* arg) noexcept {
  auto* self = static_cast<FakeLoopEngine*>(arg);
  std::deque<absl::AnyInvocable<void(event_base*)>> tasks;
  {
    hedge::MutexLock lock(&self->mu_);
    tasks.swap(self->tasks_);
  }
  // Tasks posted while these run (a completion after a Submit or Cancel
  // they make) wait for the next step of the loop: Post activated the
  // event again.
  for (auto& task : tasks) task(self->loop_->base());
}

}  // namespace tailgate::server::testing
