#include "store/object_store.h"

#include <gtest/gtest.h>

namespace archil::store {
namespace {

TEST(ObjectKey, ValidKeys) {
  EXPECT_TRUE(ValidateKey("a").ok());
  EXPECT_TRUE(ValidateKey("disks/0001/log/3/17").ok());
  EXPECT_TRUE(ValidateKey("snap/1-20/meta.sst").ok());
  EXPECT_TRUE(ValidateKey(std::string(900, 'k')).ok());
}

TEST(ObjectKey, InvalidKeysAreRefusedWithTheirReason) {
  for (std::string_view bad :
       {"", "/a", "a/", "a//b", "a/./b", "../a", "a/..", "a b", "a\\b", "a\nb", "\x80x"}) {
    Status s = ValidateKey(bad);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << "'" << bad << "'";
    EXPECT_FALSE(s.message().empty());
  }
  EXPECT_EQ(ValidateKey(std::string(901, 'k')).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ValidateKey(std::string_view("a\0b", 3)).code(), Status::Code::kInvalidArgument);
}

TEST(ObjectKey, Prefixes) {
  EXPECT_TRUE(ValidatePrefix("").ok());
  EXPECT_TRUE(ValidatePrefix("disks/").ok());
  EXPECT_TRUE(ValidatePrefix("disks/00").ok());
  EXPECT_FALSE(ValidatePrefix("/disks").ok());
  EXPECT_FALSE(ValidatePrefix("disks//").ok());
  EXPECT_FALSE(ValidatePrefix("../").ok());
}

}  // namespace
}  // namespace archil::store
