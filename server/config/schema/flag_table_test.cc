// docs/CONFIGURATION.md's flag table is the schema's: a setting declared
// or changed in the .proto files without regenerating the table fails
// here (`bazel run //server/config:flag_table` prints the table).

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "server/config/schema/settings_docs.h"

namespace tailgate::server {
namespace {

std::string ReadDoc() {
  std::ifstream in("docs/CONFIGURATION.md", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FlagTableTest, ConfigurationDocHasTheSchemasTable) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty()) << "docs/CONFIGURATION.md not found";
  const size_t begin = doc.find(kFlagTableBegin);
  const size_t end = doc.find(kFlagTableEnd);
  ASSERT_NE(begin, std::string::npos) << "no " << kFlagTableBegin;
  ASSERT_NE(end, std::string::npos) << "no " << kFlagTableEnd;
  const size_t start = begin + std::string(kFlagTableBegin).size();
  ASSERT_LE(start, end);
  EXPECT_EQ(doc.substr(start, end - start), FlagTable())
      << "docs/CONFIGURATION.md's flag table is out of date: replace it with "
         "the output of `bazel run //server/config:flag_table`";
}

TEST(FlagTableTest, EveryFlagHasARow) {
  const std::string table = FlagTable();
  for (const char* flag :
       {"--config", "--backends", "--listen", "--timeout", "--tenant_share",
        "--hedge_delay", "--backend_http2", "--probe_method"}) {
    EXPECT_NE(table.find(std::string("| `") + flag + "` |"), std::string::npos)
        << flag;
  }
}

}  // namespace
}  // namespace tailgate::server
