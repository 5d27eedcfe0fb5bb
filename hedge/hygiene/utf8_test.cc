#include "hedge/hygiene/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace tailgate::hygiene {
namespace {

TEST(IsValidUtf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("text/plain; charset=utf-8"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9"));              // U+00E9
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));             // U+20AC
  EXPECT_TRUE(IsValidUtf8("\xF0\x9F\x98\x80"));         // U+1F600
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));         // U+10FFFF
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));     // NUL is UTF-8
}

TEST(IsValidUtf8Test, RejectsEveryIllFormedShape) {
  EXPECT_FALSE(IsValidUtf8("caf\xE9"));           // Latin-1 e-acute
  EXPECT_FALSE(IsValidUtf8("\x80"));              // lone continuation
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong "/"
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong, 3 bytes
  EXPECT_FALSE(IsValidUtf8("\xF0\x80\x80\xAF"));  // overlong, 4 bytes
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // U+110000
  EXPECT_FALSE(IsValidUtf8("\xF5\x80\x80\x80"));  // lead byte F5
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // cut short at the end
  EXPECT_FALSE(IsValidUtf8("\xE2\x82x"));         // cut short mid-text
}

TEST(Latin1ToUtf8Test, MapsEachByteToItsCodePoint) {
  EXPECT_EQ(Latin1ToUtf8("plain"), "plain");
  EXPECT_EQ(Latin1ToUtf8("caf\xE9"), "caf\xC3\xA9");
  EXPECT_EQ(Latin1ToUtf8("\x80\xFF"), "\xC2\x80\xC3\xBF");
  for (int byte = 0; byte < 256; ++byte) {
    EXPECT_TRUE(IsValidUtf8(Latin1ToUtf8(std::string(1, char(byte))))) << byte;
  }
}

TEST(HeaderValueAsUtf8Test, KeepsUtf8AndConvertsTheRest) {
  bool converted = true;
  EXPECT_EQ(HeaderValueAsUtf8("caf\xC3\xA9", &converted), "caf\xC3\xA9");
  EXPECT_FALSE(converted);
  EXPECT_EQ(HeaderValueAsUtf8("caf\xE9", &converted), "caf\xC3\xA9");
  EXPECT_TRUE(converted);
  EXPECT_EQ(HeaderValueAsUtf8("\xC3"), "\xC3\x83");  // cut UTF-8 is Latin-1
}

}  // namespace
}  // namespace tailgate::hygiene
