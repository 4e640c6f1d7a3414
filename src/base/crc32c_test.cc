#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/test_seed.h"

namespace archil {
namespace {

TEST(Crc32cTest, StandardCheckValue) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32cExtendPortable(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
}

// RFC 3720 (iSCSI) appendix B.4 test vectors.
TEST(Crc32cTest, Rfc3720Vectors) {
  std::string zeros(32, '\0');
  std::string ones(32, '\xff');
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

// Hardware and portable agree on every length and alignment, and extending equals one pass.
TEST(Crc32cTest, HardwareMatchesPortableAndExtendComposes) {
  const unsigned seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::string buf(4096 + 64, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t len = 0; len < 300; ++len) {
    for (size_t off = 0; off < 9; ++off) {
      const char* p = buf.data() + off;
      ASSERT_EQ(Crc32c(p, len), Crc32cExtendPortable(0, p, len)) << len << " at " << off;
      size_t cut = len / 3;
      ASSERT_EQ(Crc32cExtend(Crc32c(p, cut), p + cut, len - cut), Crc32c(p, len));
    }
  }
  EXPECT_EQ(Crc32c(buf.data(), 4096), Crc32cExtendPortable(0, buf.data(), 4096));
  std::printf("crc32c: %s\n", Crc32cIsHardware() ? "SSE4.2" : "portable");
}

}  // namespace
}  // namespace archil
