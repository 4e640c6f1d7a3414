// KeyCache: keys verified are found without the catalog; a Forget wins over a lookup that began
// before it, so a deleted key is never cached again.
#include "control/key_cache.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

ApiKey Key(const std::string& id) { return ApiKey{id, "n", "", "abcd", std::string(64, 'a'), 1}; }

TEST(KeyCacheTest, AVerifiedKeyIsFound) {
  KeyCache c;
  EXPECT_FALSE(c.Get("00000000000000aa"));
  c.Put(Key("00000000000000aa"), c.Begin());
  ASSERT_TRUE(c.Get("00000000000000aa"));
  EXPECT_EQ(c.Get("00000000000000aa")->secret_hash, std::string(64, 'a'));
  c.Forget("00000000000000aa");
  EXPECT_FALSE(c.Get("00000000000000aa"));
}

TEST(KeyCacheTest, ALookupBegunBeforeAForgetStoresNothing) {
  KeyCache c;
  const uint64_t epoch = c.Begin();  // a request reads the key's row...
  c.Forget("00000000000000bb");      // ...while the key is deleted
  c.Put(Key("00000000000000bb"), epoch);
  EXPECT_FALSE(c.Get("00000000000000bb"));
  c.Put(Key("00000000000000bb"), c.Begin());  // a lookup after the Forget (re-created key)
  EXPECT_TRUE(c.Get("00000000000000bb"));
}

TEST(KeyCacheTest, ItStaysBounded) {
  KeyCache c(4);
  for (int i = 0; i < 10; ++i) c.Put(Key("k" + std::to_string(i)), c.Begin());
  int found = 0;
  for (int i = 0; i < 10; ++i) found += c.Get("k" + std::to_string(i)) ? 1 : 0;
  EXPECT_LE(found, 4);
  EXPECT_TRUE(c.Get("k9"));
}

}  // namespace
}  // namespace archil
