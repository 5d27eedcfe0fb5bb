#include "hedge/discovery/resolver.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::hedge::discovery {
namespace {

using ::testing::ElementsAre;

std::string HostsFile(const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      absl::StrCat(dir != nullptr ? dir : ".", "/hosts");
  std::ofstream(path) << text;
  return path;
}

TEST(HostsFileResolverTest, EveryAddressListedForTheNameSortedOnce) {
  HostsFileResolver resolver(HostsFile(
      "# comment\n"
      "127.0.0.3 shard.test other\n"
      "127.0.0.2\tSHARD.test  # trailing comment\n"
      "127.0.0.3 shard.test\n"
      "::1 shard.test\n"
      "not-an-address shard.test\n"
      "127.0.0.9 unrelated\n"));
  absl::StatusOr<std::vector<std::string>> found = resolver.Resolve("shard.test");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(*found, ElementsAre("127.0.0.2", "127.0.0.3", "[::1]"));
}

TEST(HostsFileResolverTest, NoAddressIsNotFoundAndNoFileIsUnavailable) {
  HostsFileResolver resolver(HostsFile("127.0.0.2 a.test\n"));
  EXPECT_EQ(resolver.Resolve("b.test").status().code(),
            absl::StatusCode::kNotFound);
  HostsFileResolver missing("/nonexistent/hosts");
  EXPECT_EQ(missing.Resolve("a.test").status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(SystemResolverTest, ResolvesAnAddressLiteralWithoutTheNetwork) {
  absl::StatusOr<std::vector<std::string>> found =
      SystemResolver().Resolve("127.0.0.7");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(*found, ElementsAre("127.0.0.7"));
}

}  // namespace
}  // namespace tailgate::hedge::discovery
