// The stamped version is the VERSION file's, and the commit is a commit
// or "unknown".

#include "server/version/stamped_build_info.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

using ::testing::AnyOf;
using ::testing::Eq;
using ::testing::MatchesRegex;

std::string VersionFile() {
  const char* runfiles = std::getenv("TEST_SRCDIR");
  std::ifstream file(
      absl::StrCat(runfiles != nullptr ? runfiles : ".", "/tailgate/VERSION"));
  std::stringstream text;
  text << file.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

TEST(StampedBuildInfoTest, VersionIsTheVersionFiles) {
  const std::string version = VersionFile();
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(StampedBuildInfo().version, version);
  EXPECT_THAT(version, MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+.*"));
}

TEST(StampedBuildInfoTest, CommitIsAHashOrUnknown) {
  EXPECT_THAT(StampedBuildInfo().commit,
              AnyOf(Eq("unknown"), MatchesRegex("[0-9a-f]{40}(-dirty)?")));
}

TEST(StampedBuildInfoTest, VersionTextNamesBoth) {
  EXPECT_EQ(VersionText({"1.2.3", "abc"}), "tailgate 1.2.3 (commit abc)\n");
}

}  // namespace
}  // namespace tailgate::server
