#include "base/ids.h"

#include <gtest/gtest.h>

#include <set>
#include <type_traits>
#include <unordered_set>

namespace archil {
namespace {

TEST(DiskIdTest, ParsesOnlyTheDocumentedForm) {
  EXPECT_TRUE(DiskId::Parse("dsk-0123456789abcdef").ok());
  for (const char* bad : {"", "dsk-", "dsk-0123456789abcde", "dsk-0123456789abcdef0",
                          "dsk-0123456789ABCDEF", "DSK-0123456789abcdef", "dsk_0123456789abcdef",
                          "dsk-0123456789abcdeg", "dsk-0123456789abcd\xc3\xa9"}) {
    Result<DiskId> r = DiskId::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  }
}

TEST(DiskIdTest, GeneratedIdsAreValidAndDistinct) {
  std::unordered_set<DiskId> seen;
  for (int i = 0; i < 1000; ++i) {
    Result<DiskId> id = DiskId::Generate();
    ASSERT_TRUE(id.ok());
    EXPECT_TRUE(DiskId::IsValid(id->str())) << id->str();
    EXPECT_TRUE(seen.insert(*id).second) << "duplicate " << id->str();
  }
}

TEST(DiskIdTest, DefaultIsEmptyAndOrdersByText) {
  EXPECT_TRUE(DiskId().empty());
  DiskId a = *DiskId::Parse("dsk-0000000000000001");
  DiskId b = *DiskId::Parse("dsk-0000000000000002");
  EXPECT_LT(a, b);
  EXPECT_EQ(a, DiskId::Trusted("dsk-0000000000000001"));
  std::set<DiskId> ordered = {b, a};
  EXPECT_EQ(*ordered.begin(), a);
}

struct InodeTag {};
struct SeqTag {};
TEST(StrongIntTest, TagsDoNotMix) {
  using Ino = StrongInt<InodeTag>;
  using Seq = StrongInt<SeqTag>;
  static_assert(!std::is_convertible_v<Ino, Seq>);
  static_assert(!std::is_convertible_v<uint64_t, Ino>);
  static_assert(!std::is_convertible_v<Ino, uint64_t>);
  EXPECT_LT(Ino(1), Ino(2));
  EXPECT_EQ(Ino(7).value(), 7u);
}

}  // namespace
}  // namespace archil
