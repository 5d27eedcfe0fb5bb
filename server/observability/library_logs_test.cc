#include "server/observability/library_logs.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::server {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

absl::Time FixedNow() { return absl::FromUnixSeconds(1700000000); }

// Lines written to a pipe, read back once the writer is done.
class PipeLog {
 public:
  PipeLog() {
    EXPECT_EQ(pipe(fds_), 0);
    log_.emplace(LogFormat::kLogfmt, fds_[1], &FixedNow);
  }
  ~PipeLog() { close(fds_[0]); }
  const Logger& log() { return *log_; }

  std::vector<std::string> Lines() {
    close(fds_[1]);
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = read(fds_[0], buf, sizeof(buf))) > 0;) {
      got.append(buf, n);
    }
    std::vector<std::string> lines = absl::StrSplit(got, '\n');
    EXPECT_EQ(lines.back(), "");  // every line ends with a newline
    lines.pop_back();
    return lines;
  }

 private:
  int fds_[2];
  std::optional<Logger> log_;
};

TEST(LibraryLogLimiterTest, LetsABurstThroughPerWindowAndCountsTheRest) {
  LibraryLogLimiter limiter(2, absl::Seconds(10));
  const absl::Time t0 = FixedNow();
  EXPECT_TRUE(limiter.Admit(t0).write);
  EXPECT_TRUE(limiter.Admit(t0 + absl::Seconds(1)).write);
  EXPECT_FALSE(limiter.Admit(t0 + absl::Seconds(2)).write);
  EXPECT_FALSE(limiter.Admit(t0 + absl::Seconds(9)).write);
  LibraryLogLimiter::Verdict next = limiter.Admit(t0 + absl::Seconds(12));
  EXPECT_TRUE(next.write);
  EXPECT_EQ(next.suppressed, 2u);
  EXPECT_EQ(limiter.Admit(t0 + absl::Seconds(13)).suppressed, 0u);
}

TEST(WriteLibraryLogTest, AMessageWithNewlinesIsOneEscapedLine) {
  PipeLog pipe;
  LibraryLogLimiter limiter(10, absl::Seconds(10));
  WriteLibraryLog(pipe.log(), limiter, FixedNow(), "grpc", "ERROR",
                  "timeout.cc", 42,
                  "Invalid timeout 1S\nts=x level=info event=forged");
  std::vector<std::string> lines = pipe.Lines();
  ASSERT_THAT(lines, SizeIs(1));
  EXPECT_THAT(lines[0], StartsWith("ts="));
  EXPECT_THAT(lines[0],
              HasSubstr("event=library_log library=grpc severity=ERROR "
                        "file=timeout.cc line=42 message=\"Invalid timeout "
                        "1S\\nts=x level=info event=forged\""));
}

TEST(WriteLibraryLogTest, AFloodIsCutToTheBurstThenSummarised) {
  PipeLog pipe;
  LibraryLogLimiter limiter(3, absl::Seconds(10));
  for (int i = 0; i < 1000; ++i) {
    WriteLibraryLog(pipe.log(), limiter, FixedNow(), "protobuf", "ERROR",
                    "wire_format_lite.cc", 1, "String field contains invalid UTF-8");
  }
  WriteLibraryLog(pipe.log(), limiter, FixedNow() + absl::Seconds(10),
                  "protobuf", "ERROR", "wire_format_lite.cc", 1, "later");
  std::vector<std::string> lines = pipe.Lines();
  ASSERT_THAT(lines, SizeIs(5));
  EXPECT_THAT(lines[3],
              HasSubstr("event=library_log_suppressed lines=997"));
  EXPECT_THAT(lines[4], HasSubstr("message=later"));
}

// Through the libraries' own logging calls, after RouteLibraryLogs.
TEST(RouteLibraryLogsTest, GrpcAndProtobufLinesGoThroughTheLogger) {
  PipeLog pipe;
  RouteLibraryLogs(pipe.log());
  grpc_init();  // gpr_log writes nothing before gRPC is initialised
  gpr_log(GPR_ERROR, "bad value %s", "a\nb");
  GOOGLE_LOG(ERROR) << "proto says\nhi";
  grpc_shutdown();
  std::vector<std::string> lines = pipe.Lines();
  ASSERT_THAT(lines, SizeIs(2));
  EXPECT_THAT(lines[0], HasSubstr("library=grpc severity=E"));
  EXPECT_THAT(lines[0], HasSubstr("message=\"bad value a\\nb\""));
  EXPECT_THAT(lines[1], HasSubstr("library=protobuf severity=ERROR"));
  EXPECT_THAT(lines[1], HasSubstr("message=\"proto says\\nhi\""));
}

}  // namespace
}  // namespace tailgate::server
