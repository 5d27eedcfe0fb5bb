#include "experiment/load/steady_reads.h"

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::experiment {
namespace {

// Answers each read at once: "/read?id=N" fails for odd N, on a thread of
// its own so that answers come from elsewhere than the scheduler.
class FakeTarget : public ReadTarget {
 public:
  ~FakeTarget() override {
    for (std::thread& thread : threads_) thread.join();
  }
  void StartRead(const std::string& path, absl::Duration deadline,
                 Done done) override {
    paths_.push_back(path);
    deadlines_.push_back(deadline);
    const bool odd = (path.back() - '0') % 2 == 1;
    threads_.emplace_back([odd, done = std::move(done)]() mutable {
      std::move(done)(odd ? "http_503" : "");
    });
  }

  std::vector<std::string> paths_;
  std::vector<absl::Duration> deadlines_;

 private:
  std::vector<std::thread> threads_;
};

TEST(SteadyReadsTest, OneRecordPerScheduledReadInOrder) {
  FakeTarget target;
  SteadyReadOptions options;
  options.rate = 200;
  options.duration = absl::Milliseconds(50);  // 10 reads, 5 ms apart
  options.deadline = absl::Milliseconds(700);
  Progress progress("test", 10);
  const std::vector<ReadRecord> records =
      RunSteadyReads(target, options, progress);
  ASSERT_EQ(records.size(), 10u);
  ASSERT_EQ(target.paths_.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(target.paths_[i], "/read?id=" + std::to_string(i));
    EXPECT_EQ(target.deadlines_[i], absl::Milliseconds(700));
    EXPECT_EQ(records[i].scheduled, absl::Milliseconds(5 * i));
    EXPECT_GE(records[i].latency, absl::ZeroDuration());
    EXPECT_EQ(records[i].error, i % 2 == 1 ? "http_503" : "") << i;
  }
}

TEST(SteadyReadsTest, HttpAnswerLabels) {
  EXPECT_EQ(HttpAnswerError(200, "replicated-value"), "");
  EXPECT_EQ(HttpAnswerError(504, ""), "http_504");
  EXPECT_EQ(HttpAnswerError(200, ""), kWrongBody);
}

}  // namespace
}  // namespace tailgate::experiment
