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

TEST(NamesTest, FreeText) {
  EXPECT_TRUE(ValidateText("nickname", "ci runner \xc3\xa9", 255).ok());
  EXPECT_FALSE(ValidateText("nickname", std::string(256, 'x'), 255).ok());
  EXPECT_FALSE(ValidateText("nickname", "tab\there", 255).ok());
  EXPECT_FALSE(ValidateText("nickname", "\xff", 255).ok());
  EXPECT_FALSE(ValidateKeyName("").ok());
}

}  // namespace
}  // namespace archil
