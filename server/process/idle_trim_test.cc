#include "server/process/idle_trim.h"

#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

// Ticks by hand (period zero): a fake read count and a counting trim.
struct Fixture {
  uint64_t reads = 0;
  int trimmed = 0;
  IdleTrim trim{[this] { return reads; }, absl::ZeroDuration(),
                [this] { ++trimmed; }};
};

TEST(IdleTrimTest, NeverTrimsASidecarThatServedNothing) {
  Fixture f;
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(f.trim.Tick());
  EXPECT_EQ(f.trimmed, 0);
}

TEST(IdleTrimTest, TrimsOncePerQuietSpellAfterReads) {
  Fixture f;
  f.reads = 10;
  EXPECT_FALSE(f.trim.Tick());  // reads came during this period: busy
  EXPECT_TRUE(f.trim.Tick());   // a whole period without a read
  EXPECT_FALSE(f.trim.Tick());  // still quiet: nothing new to give back
  EXPECT_FALSE(f.trim.Tick());
  EXPECT_EQ(f.trimmed, 1);
  EXPECT_EQ(f.trim.trims(), 1u);

  f.reads = 11;                 // one more read
  EXPECT_FALSE(f.trim.Tick());
  EXPECT_TRUE(f.trim.Tick());
  EXPECT_EQ(f.trimmed, 2);
}

TEST(IdleTrimTest, NeverTrimsWhileReadsKeepComing) {
  Fixture f;
  for (int i = 0; i < 100; ++i) {
    f.reads += 1;
    EXPECT_FALSE(f.trim.Tick());
  }
  EXPECT_EQ(f.trimmed, 0);
}

// RssAnon of this process, in KiB.
int64_t AnonymousKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stoll(line.substr(8));
  }
  return -1;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif

TEST(IdleTrimTest, TheRealTrimGivesFreedHeapBack) {
  if (kSanitizerAllocator) {
    GTEST_SKIP() << "the sanitizer's allocator replaces glibc's; "
                    "malloc_trim has nothing to give back";
  }
  IdleTrim trim([] { return uint64_t{1}; }, absl::ZeroDuration());
  // 32 MiB in 1 KiB blocks, on this thread's arena; then every block freed
  // but one in 64, so the arena's top cannot shrink by itself and the free
  // runs between the kept blocks (about 63 KiB each) stay resident until
  // a trim gives their whole pages back.
  constexpr int kBlocks = 32 << 10;
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(kBlocks);
  for (int i = 0; i < kBlocks; ++i) {
    blocks.emplace_back(new char[1024]);
    std::memset(blocks.back().get(), 1, 1024);
  }
  for (int i = 0; i < kBlocks; ++i) {
    if (i % 64 != 63) blocks[i].reset();
  }
  const int64_t before = AnonymousKib();
  EXPECT_FALSE(trim.Tick());  // the first look sees the read count move
  EXPECT_TRUE(trim.Tick());
  const int64_t after = AnonymousKib();
  EXPECT_LT(after, before - (16 << 10))
      << "RssAnon " << before << " KiB before the trim, " << after
      << " KiB after";
  for (int i = 63; i < kBlocks; i += 64) EXPECT_EQ(blocks[i][1023], 1);
}

TEST(IdleTrimTest, TheThreadTicksEveryPeriod) {
  std::atomic<int> looks{0};
  IdleTrim trim(
      [&looks] {
        looks.fetch_add(1);
        return uint64_t{1};
      },
      absl::Milliseconds(1), [] {});
  // Waits for the thread's looks without assuming how fast it runs: the
  // first look sees the count move from 0 to 1, the second trims.
  while (looks.load() < 3) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_GE(trim.trims(), 1u);
}

}  // namespace
}  // namespace tailgate::server
