#include "control/share_token.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <random>

#include "base/test_seed.h"

namespace archil {
namespace {

const std::string kKey(32, 'k');

ShareClaims Claims() {
  return {"dsk-0123456789abcdef", "00112233aabbccdd", "dir/file.bin", 1767225600 + 3600};
}

ShareClaims DiskUserClaims() {
  ShareClaims c = Claims();
  c.maker_id = "8899aabbccddeeff";
  c.maker = ShareMaker::kDiskUser;
  return c;
}

// A token built byte by byte, as docs and share_token.h lay it out, signed with `key`:
// independent of SignShareToken, so it pins the format links already handed out use.
std::string HandMade(std::string_view payload, std::string_view key) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(payload.data()), payload.size(), mac, &len);
  return Base64UrlEncode(std::string(payload) + std::string(reinterpret_cast<char*>(mac), len));
}

// version | expiry (8 bytes) | disk | [kind] | id | path, as the layout says.
std::string Payload(uint8_t version, std::optional<uint8_t> kind, std::string_view id) {
  std::string p(1, static_cast<char>(version));
  const uint64_t expiry = 1767225600 + 3600;
  for (int i = 7; i >= 0; --i) p.push_back(static_cast<char>((expiry >> (8 * i)) & 0xff));
  const std::string disk = "dsk-0123456789abcdef";
  p.push_back(static_cast<char>(disk.size()));
  p += disk;
  if (kind) p.push_back(static_cast<char>(*kind));
  p.push_back(static_cast<char>(id.size()));
  p += id;
  const std::string path = "dir/file.bin";
  p.push_back(0);
  p.push_back(static_cast<char>(path.size()));
  p += path;
  return p;
}

TEST(Base64Url, RoundTripsEveryLengthAndRefusesOtherText) {
  std::string bytes;
  for (int i = 0; i < 70; ++i) {
    std::optional<std::string> back = Base64UrlDecode(Base64UrlEncode(bytes));
    ASSERT_TRUE(back) << i;
    EXPECT_EQ(*back, bytes);
    bytes.push_back(static_cast<char>(i * 37));
  }
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_FALSE(Base64UrlDecode("AAA="));   // padding
  EXPECT_FALSE(Base64UrlDecode("AA+A"));   // the other alphabet
  EXPECT_FALSE(Base64UrlDecode("AAAAA"));  // no encoding has this length
  EXPECT_FALSE(Base64UrlDecode("AB"));     // leftover bits not zero: a second spelling
  EXPECT_TRUE(Base64UrlDecode("AA"));
}

TEST(ShareToken, VerifiesWhatItSignedAndIsUrlSafe) {
  const std::string token = SignShareToken(Claims(), kKey);
  EXPECT_EQ(
      token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
      std::string::npos);
  Result<ShareClaims> back = VerifyShareToken(token, kKey);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Claims());
  // The longest path still round-trips, and fits the API's 8 KiB request target.
  ShareClaims longest = Claims();
  longest.path = std::string(kMaxSharePathBytes, 'p');
  const std::string long_token = SignShareToken(longest, kKey);
  EXPECT_LT(long_token.size() + 20, 8 * 1024u);
  EXPECT_EQ(*VerifyShareToken(long_token, kKey), longest);
}

TEST(ShareToken, AnotherKeyOrARotatedOneRefusesIt) {
  const std::string token = SignShareToken(Claims(), kKey);
  std::string other = kKey;
  other[31] = 'x';
  EXPECT_EQ(VerifyShareToken(token, other).status().code(), Status::Code::kNotFound);
}

TEST(ShareToken, ForgedFieldsAreRefused) {
  // The attacker re-encodes a payload with another path and keeps the old MAC.
  const std::string token = SignShareToken(Claims(), kKey);
  std::string raw = *Base64UrlDecode(token);
  const size_t at = raw.find("file.bin");
  ASSERT_NE(at, std::string::npos);
  raw[at] = 'g';
  EXPECT_EQ(VerifyShareToken(Base64UrlEncode(raw), kKey).status().code(), Status::Code::kNotFound);
  // A later expiry, same MAC.
  raw = *Base64UrlDecode(token);
  raw[1] = static_cast<char>(raw[1] + 1);
  EXPECT_FALSE(VerifyShareToken(Base64UrlEncode(raw), kKey).ok());
  // A correctly signed token of an unknown version: refused (the MAC covers the version byte, so
  // this needs the key; it checks the parser's own refusal).
  EXPECT_FALSE(VerifyShareToken("", kKey).ok());
  EXPECT_FALSE(VerifyShareToken("not a token!", kKey).ok());
  EXPECT_FALSE(VerifyShareToken(std::string(20000, 'A'), kKey).ok());
}

// A version-1 token, as links made before version 2 were: still verifies, as an API key's link,
// and an API key's link is still written exactly so.
TEST(ShareToken, VersionOneTokensStillVerifyAndApiKeyLinksAreStillVersionOne) {
  const std::string v1 = HandMade(Payload(1, std::nullopt, "00112233aabbccdd"), kKey);
  Result<ShareClaims> back = VerifyShareToken(v1, kKey);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Claims());
  EXPECT_EQ(back->maker, ShareMaker::kApiKey);
  EXPECT_EQ(SignShareToken(Claims(), kKey), v1);
}

TEST(ShareToken, ADiskUsersLinkIsVersionTwoWithItsKind) {
  const std::string token = SignShareToken(DiskUserClaims(), kKey);
  EXPECT_EQ(token, HandMade(Payload(2, 2, "8899aabbccddeeff"), kKey));
  EXPECT_EQ((*Base64UrlDecode(token))[0], 2);
  Result<ShareClaims> back = VerifyShareToken(token, kKey);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, DiskUserClaims());
  EXPECT_NE(*back, Claims());  // not an API key's link with the same id
  // The longest fields still fit the length bound and the API's 8 KiB request target.
  ShareClaims longest = DiskUserClaims();
  longest.disk = std::string(255, 'd');
  longest.maker_id = std::string(255, 'i');
  longest.path = std::string(kMaxSharePathBytes, 'p');
  const std::string long_token = SignShareToken(longest, kKey);
  EXPECT_LT(long_token.size() + 20, 8 * 1024u);
  EXPECT_EQ(*VerifyShareToken(long_token, kKey), longest);
}

// Correctly signed (so only the parser refuses them): a version-2 token of an API key (that has
// one spelling, version 1), of an unknown kind, without a kind, or an unknown version.
TEST(ShareToken, AnUnknownOrRedundantKindIsRefusedEvenWhenSigned) {
  for (uint8_t kind : {0, 1, 3, 255}) {
    EXPECT_EQ(VerifyShareToken(HandMade(Payload(2, kind, "8899aabbccddeeff"), kKey), kKey)
                  .status()
                  .code(),
              Status::Code::kNotFound)
        << int{kind};
  }
  EXPECT_FALSE(VerifyShareToken(HandMade(Payload(2, std::nullopt, "8899"), kKey), kKey).ok());
  EXPECT_FALSE(VerifyShareToken(HandMade(Payload(3, 2, "8899aabbccddeeff"), kKey), kKey).ok());
  EXPECT_FALSE(VerifyShareToken(HandMade(Payload(0, std::nullopt, "00112233"), kKey), kKey).ok());
  // A version-1 token relabelled as version 2 (the MAC covers the version byte).
  std::string raw = *Base64UrlDecode(SignShareToken(Claims(), kKey));
  raw[0] = 2;
  EXPECT_FALSE(VerifyShareToken(Base64UrlEncode(raw), kKey).ok());
  // A disk user's link relabelled as an API key's: its kind byte changed, same MAC.
  raw = *Base64UrlDecode(SignShareToken(DiskUserClaims(), kKey));
  raw[1 + 8 + 1 + 20] = 1;
  EXPECT_FALSE(VerifyShareToken(Base64UrlEncode(raw), kKey).ok());
}

// Every truncation and every single-bit flip of a valid token is refused, never accepted and
// never a crash.
TEST(ShareToken, EveryTruncationAndBitFlipIsRefused) {
  for (const ShareClaims& claims : {Claims(), DiskUserClaims()}) {
    const std::string token = SignShareToken(claims, kKey);
    for (size_t n = 0; n < token.size(); ++n) {
      EXPECT_FALSE(VerifyShareToken(token.substr(0, n), kKey).ok()) << n;
    }
    const std::string raw = *Base64UrlDecode(token);
    for (size_t i = 0; i < raw.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string bad = raw;
        bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
        EXPECT_FALSE(VerifyShareToken(Base64UrlEncode(bad), kKey).ok()) << i << " " << bit;
      }
    }
  }
}

// Random claims round-trip; random strings are refused. Seeded (ARCHIL_TEST_SEED).
TEST(ShareToken, RandomClaimsRoundTripAndRandomTextIsRefused) {
  const unsigned seed = TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  auto bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  for (int i = 0; i < 500; ++i) {
    ShareClaims c{bytes(rng() % 256), bytes(rng() % 256), bytes(rng() % (kMaxSharePathBytes + 1)),
                  static_cast<int64_t>(rng() >> 1),
                  rng() % 2 ? ShareMaker::kApiKey : ShareMaker::kDiskUser};
    const std::string key = bytes(32);
    Result<ShareClaims> back = VerifyShareToken(SignShareToken(c, key), key);
    ASSERT_TRUE(back.ok()) << i;
    EXPECT_EQ(*back, c);
    EXPECT_FALSE(VerifyShareToken(Base64UrlEncode(bytes(rng() % 400)), key).ok());
  }
}

}  // namespace
}  // namespace archil
