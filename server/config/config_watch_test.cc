// ConfigFileWatch on a real directory: a write, an editor's rename and a
// ConfigMap-style symlink swap each give one callback after the debounce.

#include "server/config/config_watch.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "hedge/sync/mutex.h"

namespace tailgate::server {
namespace {

// Counts callbacks; waits for the n-th.
class Calls {
 public:
  void Add() {
    {
      hedge::MutexLock lock(&mu_);
      ++count_;
    }
    cv_.SignalAll();
  }
  // False if fewer than `n` came within `timeout`.
  bool WaitFor(int n, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    hedge::MutexLock lock(&mu_);
    while (count_ < n) {
      if (cv_.WaitWithDeadline(&mu_, deadline) && count_ < n) return false;
    }
    return true;
  }
  int count() {
    hedge::MutexLock lock(&mu_);
    return count_;
  }

 private:
  hedge::Mutex mu_;
  hedge::CondVar cv_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

class ConfigWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(
        tmp != nullptr ? tmp : ".", "/watch-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    mkdir(dir_.c_str(), 0700);
    path_ = dir_ + "/sidecar.textproto";
  }

  std::unique_ptr<ConfigFileWatch> Watch() {
    absl::StatusOr<std::unique_ptr<ConfigFileWatch>> watch =
        ConfigFileWatch::Start(path_, absl::Milliseconds(100),
                               [this] { calls_.Add(); });
    EXPECT_TRUE(watch.ok()) << watch.status();
    return watch.ok() ? *std::move(watch) : nullptr;
  }

  std::string dir_;
  std::string path_;
  Calls calls_;
};

constexpr absl::Duration kWait = absl::Seconds(10);

TEST_F(ConfigWatchTest, BurstOfWritesGivesOneCallback) {
  std::ofstream(path_) << "a";
  std::unique_ptr<ConfigFileWatch> watch = Watch();
  for (int i = 0; i < 5; ++i) std::ofstream(path_) << "b" << i;
  ASSERT_TRUE(calls_.WaitFor(1, kWait));
  // The destructor joins the thread: nothing more can arrive after it.
  watch.reset();
  EXPECT_EQ(calls_.count(), 1);
}

TEST_F(ConfigWatchTest, EditorRenameIsSeen) {
  std::ofstream(path_) << "a";
  std::unique_ptr<ConfigFileWatch> watch = Watch();
  const std::string temp = dir_ + "/.sidecar.textproto.swp";
  std::ofstream(temp) << "b";
  ASSERT_EQ(rename(temp.c_str(), path_.c_str()), 0);
  EXPECT_TRUE(calls_.WaitFor(1, kWait));
}

TEST_F(ConfigWatchTest, ConfigMapSymlinkSwapIsSeen) {
  // The kubelet's layout: FILE -> ..data/FILE, ..data -> ..v1.
  mkdir((dir_ + "/..v1").c_str(), 0700);
  std::ofstream(dir_ + "/..v1/sidecar.textproto") << "a";
  ASSERT_EQ(symlink("..v1", (dir_ + "/..data").c_str()), 0);
  ASSERT_EQ(symlink("..data/sidecar.textproto", path_.c_str()), 0);
  std::unique_ptr<ConfigFileWatch> watch = Watch();
  // An update: a new version directory and an atomic swap of ..data.
  mkdir((dir_ + "/..v2").c_str(), 0700);
  std::ofstream(dir_ + "/..v2/sidecar.textproto") << "b";
  ASSERT_EQ(symlink("..v2", (dir_ + "/..data_tmp").c_str()), 0);
  ASSERT_EQ(rename((dir_ + "/..data_tmp").c_str(), (dir_ + "/..data").c_str()),
            0);
  EXPECT_TRUE(calls_.WaitFor(1, kWait));
  std::ifstream in(path_);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "b");
}

TEST(ConfigWatchStartTest, MissingDirectoryIsAnErrorNamingIt) {
  absl::StatusOr<std::unique_ptr<ConfigFileWatch>> watch =
      ConfigFileWatch::Start("/nonexistent-dir/x.textproto",
                             absl::Milliseconds(100), [] {});
  ASSERT_FALSE(watch.ok());
  EXPECT_NE(watch.status().message().find("/nonexistent-dir"),
            std::string::npos)
      << watch.status();
}

}  // namespace
}  // namespace tailgate::server
