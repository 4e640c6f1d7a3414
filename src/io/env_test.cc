#include "io/env.h"

#include <gtest/gtest.h>

namespace archil::io {
namespace {

TEST(ParentDir, Cases) {
  EXPECT_EQ(ParentDir("/a/b"), "/a");
  EXPECT_EQ(ParentDir("/a"), "/");
  EXPECT_EQ(ParentDir("/a/b/"), "/a");
  EXPECT_EQ(ParentDir("a"), ".");
}

}  // namespace
}  // namespace archil::io
