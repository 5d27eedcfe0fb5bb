// A hedge timer that comes due while the engine's loop thread is held up
// (descheduled on a busy host, or in a long callback): if the primary's
// answer arrived meanwhile, the answer wins and no hedge is launched; if
// it did not, the hedge goes out as usual.
//
// The hold-up is made exact rather than hoped for: a task on the loop
// thread (EventLoop::RunOnLoop) blocks it; while it is blocked the primary's
// replica answers, and its kernel sees every byte acknowledged by the
// engine's, and the fake clock passes the hedge time; then the task
// returns and the loop finds both the answer and the due timer.

#include <arpa/inet.h>
#include <event2/event.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/fake_clock.h"
#include "tests/integration/engine_fixture.h"

namespace tailgate::testing {
namespace {

constexpr absl::Duration kHedgeDelay = absl::Seconds(1);  // fake time
constexpr auto kWait = std::chrono::seconds(10);

// A replica for one request on 127.0.0.1, with blocking sockets on a
// thread of its own, that answers only when told to, and tells when the
// client's kernel has acknowledged the whole answer (so it is waiting in
// the client's socket).
class HeldAnswerServer {
 public:
  HeldAnswerServer() {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (listener_ < 0 ||
        bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        listen(listener_, 1) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address),
                    &length) != 0) {
      return;
    }
    url_ = absl::StrCat("http://127.0.0.1:", ntohs(address.sin_port));
    thread_ = std::thread([this] { Serve(); });
  }

  ~HeldAnswerServer() {
    // Unblocks accept() or the wait for the body if the test failed early.
    shutdown(listener_, SHUT_RDWR);
    if (!answered_) body_.set_value(std::nullopt);  // no answer
    if (thread_.joinable()) thread_.join();
    if (listener_ >= 0) close(listener_);
  }

  const std::string& url() const { return url_; }
  bool WaitForRequest() {
    return requested_.get_future().wait_for(kWait) == std::future_status::ready;
  }
  // Sends a 200 with `body`; true once the client has acknowledged it.
  bool AnswerAndWaitForAck(const std::string& body) {
    answered_ = true;
    body_.set_value(body);
    std::future<bool> acked = acked_.get_future();
    return acked.wait_for(kWait) == std::future_status::ready && acked.get();
  }

 private:
  void Serve() {
    const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) return;
    std::string request;
    char buffer[1024];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t got = read(connection, buffer, sizeof(buffer));
      if (got <= 0) break;
      request.append(buffer, static_cast<size_t>(got));
    }
    requested_.set_value();
    const std::optional<std::string> body = body_.get_future().get();
    if (!body.has_value()) {
      close(connection);
      return;
    }
    const std::string response = absl::StrCat(
        "HTTP/1.1 200 OK\r\nContent-Length: ", body->size(), "\r\n\r\n", *body);
    // MSG_NOSIGNAL: the engine may have closed the connection already.
    bool acked = send(connection, response.data(), response.size(),
                      MSG_NOSIGNAL) == static_cast<ssize_t>(response.size());
    // SIOCOUTQ: bytes not yet acknowledged by the peer. Loopback
    // acknowledges within a delayed-ACK interval at most.
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    int unacked = 1;
    while (acked && ioctl(connection, SIOCOUTQ, &unacked) == 0 && unacked > 0 &&
           absl::Now() < give_up) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    acked_.set_value(acked && unacked == 0);
    // Keeps the connection until the client closes it.
    while (read(connection, buffer, sizeof(buffer)) > 0) {
    }
    close(connection);
  }

  int listener_ = -1;
  std::string url_;
  std::thread thread_;
  bool answered_ = false;  // test thread only
  std::promise<void> requested_;
  std::promise<std::optional<std::string>> body_;
  std::promise<bool> acked_;
};

// Blocks the engine's loop thread from inside a task until released.
class LoopHold {
 public:
  bool Hold(hedge::EventLoop& loop) {
    if (!loop.RunOnLoop([this](event_base*) {
               entered_.set_value();
               released_.get_future().wait();
             })
             .ok()) {
      return false;
    }
    return entered_.get_future().wait_for(kWait) == std::future_status::ready;
  }
  void Release() {
    if (!released_once_) released_.set_value();
    released_once_ = true;
  }
  ~LoopHold() { Release(); }

 private:
  std::promise<void> entered_;
  std::promise<void> released_;
  bool released_once_ = false;
};

class EngineLateTimerTest : public EngineFixture {
 protected:
  // One read whose primary is the held server (the rotation starts at the
  // first replica) and whose alternate answers "hedge": the loop thread is
  // held while the hedge timer comes due and, if `answer_meanwhile`, while
  // the held server's answer reaches the engine's socket. Its result.
  absl::StatusOr<hedge::EngineResponse> ReadWithTheLoopHeld(
      bool answer_meanwhile) {
    if (held_.url().empty()) {
      return absl::InternalError("could not listen on loopback");
    }
    StartReplicas({Always(Answer("hedge"))});
    hedge::EngineConfig config = DefaultConfig();
    config.upstreams[0].hedge_delay = kHedgeDelay;
    config.timeout = 60 * kHedgeDelay;
    StartEngineWithUrls(config, {held_.url(), replicas_[0]->url()}, clock_);
    PendingRead& pending = NewPendingRead();
    Submit(Get("/held"), pending);
    if (!held_.WaitForRequest()) {
      return absl::DeadlineExceededError("the primary never arrived");
    }
    LoopHold hold;
    if (!hold.Hold(*loop_)) {
      return absl::InternalError("could not hold the loop thread");
    }
    if (answer_meanwhile && !held_.AnswerAndWaitForAck("primary")) {
      return absl::InternalError("the answer was not acknowledged");
    }
    clock_.Advance(2 * kHedgeDelay);  // the hedge timer is due
    hold.Release();
    return pending.Wait();
  }

  FakeClock clock_;  // outlives the engine, which TearDown destroys
  HeldAnswerServer held_;
};

TEST_F(EngineLateTimerTest, AnswerThatArrivedWhileTheLoopWasHeldBeatsTheHedge) {
  const absl::StatusOr<hedge::EngineResponse> response =
      ReadWithTheLoopHeld(/*answer_meanwhile=*/true);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "primary");
  EXPECT_EQ(response->trace.attempts, 1);
  EXPECT_FALSE(response->trace.hedged);
  EXPECT_EQ(replicas_[0]->requests_received(), 0);
  const hedge::EngineSnapshot stats = engine_->Snapshot();
  EXPECT_EQ(stats.hedges, 0u);
  EXPECT_EQ(stats.timers_fired, 0u);
}

// The same hold-up with no answer waiting: the due timer still hedges (the
// fake clock's advance is what the loop sees).
TEST_F(EngineLateTimerTest, DueHedgeGoesOutWhenNoAnswerArrivedMeanwhile) {
  const absl::StatusOr<hedge::EngineResponse> response =
      ReadWithTheLoopHeld(/*answer_meanwhile=*/false);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "hedge");
  EXPECT_TRUE(response->trace.hedged);
  EXPECT_TRUE(response->trace.hedge_won);
  EXPECT_EQ(engine_->Snapshot().hedges, 1u);
}

}  // namespace
}  // namespace tailgate::testing
