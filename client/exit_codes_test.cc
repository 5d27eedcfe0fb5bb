#include "client/exit_codes.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tailgate::cli {
namespace {

TEST(ExitCodesTest, HttpStatusClasses) {
  EXPECT_EQ(ExitCodeForHttpStatus(200), kExitOk);
  EXPECT_EQ(ExitCodeForHttpStatus(204), kExitOk);
  EXPECT_EQ(ExitCodeForHttpStatus(304), kExitOk);
  EXPECT_EQ(ExitCodeForHttpStatus(399), kExitOk);
  EXPECT_EQ(ExitCodeForHttpStatus(400), kExitHttp4xx);
  EXPECT_EQ(ExitCodeForHttpStatus(404), kExitHttp4xx);
  EXPECT_EQ(ExitCodeForHttpStatus(499), kExitHttp4xx);
  EXPECT_EQ(ExitCodeForHttpStatus(500), kExitHttp5xx);
  EXPECT_EQ(ExitCodeForHttpStatus(503), kExitHttp5xx);
  EXPECT_EQ(ExitCodeForHttpStatus(599), kExitHttp5xx);
}

TEST(ExitCodesTest, EachGrpcErrorClass) {
  EXPECT_EQ(ExitCodeForError(absl::InvalidArgumentError("")),
            kExitInvalidArgument);
  EXPECT_EQ(ExitCodeForError(absl::NotFoundError("")), kExitNotFound);
  EXPECT_EQ(ExitCodeForError(absl::ResourceExhaustedError("")),
            kExitResourceExhausted);
  EXPECT_EQ(ExitCodeForError(absl::UnavailableError("")), kExitUnavailable);
  EXPECT_EQ(ExitCodeForError(absl::DeadlineExceededError("")),
            kExitDeadlineExceeded);
  EXPECT_EQ(ExitCodeForError(absl::CancelledError("")), kExitCancelled);
  for (const absl::Status& other :
       {absl::UnknownError(""), absl::InternalError(""),
        absl::UnimplementedError(""), absl::PermissionDeniedError(""),
        absl::DataLossError("")}) {
    EXPECT_EQ(ExitCodeForError(other), kExitOtherError) << other;
  }
}

TEST(ExitCodesTest, AReadsCodeIsItsHttpStatusOrItsError) {
  ReadResponse response;
  response.status = 200;
  EXPECT_EQ(ExitCodeForRead(response), kExitOk);
  response.status = 404;
  EXPECT_EQ(ExitCodeForRead(response), kExitHttp4xx);
  response.status = 503;
  EXPECT_EQ(ExitCodeForRead(response), kExitHttp5xx);
  EXPECT_EQ(ExitCodeForRead(absl::NotFoundError("x")), kExitNotFound);
  EXPECT_EQ(ExitCodeForRead(absl::InternalError("x")), kExitOtherError);
}

TEST(ExitCodesTest, TableHasOneLinePerDistinctCode) {
  std::set<int> codes;
  for (absl::string_view row :
       absl::StrSplit(ExitCodeTable(), '\n', absl::SkipEmpty())) {
    int code = -1;
    ASSERT_TRUE(
        absl::SimpleAtoi(absl::StripAsciiWhitespace(row.substr(0, 5)), &code))
        << row;
    EXPECT_TRUE(codes.insert(code).second) << "duplicate " << code;
    EXPECT_LE(row.size(), 79u) << row;
  }
  EXPECT_EQ(codes, (std::set<int>{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}));
}

}  // namespace
}  // namespace tailgate::cli
