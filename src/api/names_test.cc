#include "api/names.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(NamesTest, DiskNames) {
  EXPECT_TRUE(ValidateDiskName("a").ok());
  EXPECT_TRUE(ValidateDiskName("My_disk-01").ok());
  EXPECT_TRUE(ValidateDiskName(std::string(100, 'x')).ok());
  EXPECT_FALSE(ValidateDiskName("").ok());
  EXPECT_FALSE(ValidateDiskName(std::string(101, 'x')).ok());
  for (const char* bad : {"a b", "a/b", "a.b", "..", "d\xc3\xa9", "a\nb"}) {
    EXPECT_FALSE(ValidateDiskName(bad).ok()) << bad;
  }
}

TEST(NamesTest, BranchCheckpointAndIdempotencyKeys) {
  EXPECT_TRUE(ValidateBranchName("br-1_X").ok());
  EXPECT_TRUE(ValidateBranchName(std::string(100, 'b')).ok());
  for (std::string bad : {std::string(), std::string(101, 'b'), std::string("a.b"),
                          std::string("a/b"), std::string("a b"), std::string("\xc3\xa9")}) {
    EXPECT_EQ(ValidateBranchName(bad).code(), Status::Code::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(ValidateCheckpointName("v1.2-rc_3").ok());
  for (std::string bad : {std::string(), std::string(101, 'c'), std::string("a/b"),
                          std::string("a\nb"), std::string("a:b")}) {
    EXPECT_EQ(ValidateCheckpointName(bad).code(), Status::Code::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(ValidateIdempotencyKey("3f2a-9c1b").ok());
  for (std::string bad :
       {std::string(), std::string(256, 'k'), std::string("a b"), std::string("a\x7f")}) {
    EXPECT_EQ(ValidateIdempotencyKey(bad).code(), Status::Code::kInvalidArgument);
  }
}

TEST(NamesTest, FreeText) {
  EXPECT_TRUE(ValidateText("nickname", "ci runner \xc3\xa9", 255).ok());
  EXPECT_FALSE(ValidateText("nickname", std::string(256, 'x'), 255).ok());
  EXPECT_FALSE(ValidateText("nickname", "tab\there", 255).ok());
  EXPECT_FALSE(ValidateText("nickname", "\xff", 255).ok());
  // C1 control U+0085, right-to-left override U+202E, isolate U+2066, line separator U+2028.
  for (const char* bad : {"a\xc2\x85"
                          "b",
                          "a\xe2\x80\xae"
                          "b",
                          "a\xe2\x81\xa6"
                          "b",
                          "a\xe2\x80\xa8"
                          "b",
                          "\x7f"}) {
    EXPECT_FALSE(ValidateText("nickname", bad, 255).ok()) << bad;
  }
  // Other non-ASCII text is fine: U+00A0, U+20AC, U+1F600.
  EXPECT_TRUE(ValidateText("nickname", "a\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80", 255).ok());
  EXPECT_FALSE(ValidateKeyName("").ok());
}

}  // namespace
}  // namespace archil
