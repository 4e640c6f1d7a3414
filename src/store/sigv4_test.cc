// The signer against AWS's published SigV4 examples: the generic test suite (service "service",
// 2015-08-30) and the S3 examples of "Signature Calculations for the Authorization Header"
// (2013-05-24). Any deviation in encoding, sorting, trimming or key derivation changes these.
#include "store/sigv4.h"

#include <gtest/gtest.h>

#include "base/strings.h"

namespace archil::store {
namespace {

const AwsCredentials kSuiteCreds{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const AwsCredentials kS3Creds{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                              ""};
constexpr std::string_view kSuiteDate = "20150830T123600Z";
constexpr std::string_view kS3Date = "20130524T000000Z";

SigningInput Suite(std::string method, std::string path) {
  SigningInput in;
  in.method = std::move(method);
  in.canonical_path = std::move(path);
  in.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", std::string(kSuiteDate)}};
  in.payload_hash = std::string(kEmptySha256);
  return in;
}

SigningInput S3(std::string method, std::string path) {
  SigningInput in;
  in.method = std::move(method);
  in.canonical_path = std::move(path);
  in.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                {"x-amz-date", std::string(kS3Date)},
                {"x-amz-content-sha256", std::string(kEmptySha256)}};
  in.payload_hash = std::string(kEmptySha256);
  return in;
}

TEST(SigV4, SuiteGetVanilla) {
  Signature s = Sign(Suite("GET", "/"), kSuiteCreds, kSuiteDate, "us-east-1", "service");
  EXPECT_EQ(s.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(s.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\n" +
                std::string(kEmptySha256));
}

TEST(SigV4, SuiteQueryIsSortedByName) {
  SigningInput in = Suite("GET", "/");
  in.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  EXPECT_EQ(Sign(in, kSuiteCreds, kSuiteDate, "us-east-1", "service").signature,
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST(SigV4, SuitePostVanilla) {
  EXPECT_EQ(Sign(Suite("POST", "/"), kSuiteCreds, kSuiteDate, "us-east-1", "service").signature,
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
}

TEST(SigV4, SuiteUtf8PathIsPercentEncoded) {
  SigningInput in = Suite("GET", UriEncode("/\xE1\x88\xB4", false));
  EXPECT_EQ(in.canonical_path, "/%E1%88%B4");
  EXPECT_EQ(Sign(in, kSuiteCreds, kSuiteDate, "us-east-1", "service").signature,
            "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
}

TEST(SigV4, SigningKeyDerivation) {
  EXPECT_EQ(
      HexEncode(SigningKey(kSuiteCreds.secret_access_key, "20150830", "us-east-1", "service")),
      "938127b5336810ddb6a5d6af445fcac9e371f9ed418ed386b022aed82901be75");
}

TEST(SigV4, S3GetObjectWithRange) {
  SigningInput in = S3("GET", "/test.txt");
  in.headers.emplace_back("Range", "bytes=0-9");
  Signature s = Sign(in, kS3Creds, kS3Date, "us-east-1", "s3");
  EXPECT_EQ(Sha256Hex(s.canonical_request),
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(s.signed_headers, "host;range;x-amz-content-sha256;x-amz-date");
  EXPECT_EQ(s.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, S3PutObjectWithEncodedKeyAndBody) {
  const std::string body = "Welcome to Amazon S3.";
  ASSERT_EQ(Sha256Hex(body), "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigningInput in;
  in.method = "PUT";
  in.canonical_path = "/" + UriEncode("test$file.text", true);
  in.payload_hash = Sha256Hex(body);
  in.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                {"x-amz-date", std::string(kS3Date)},
                {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                {"x-amz-content-sha256", in.payload_hash}};
  Signature s = Sign(in, kS3Creds, kS3Date, "us-east-1", "s3");
  EXPECT_EQ(in.canonical_path, "/test%24file.text");
  EXPECT_EQ(Sha256Hex(s.canonical_request),
            "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
  EXPECT_EQ(s.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

// x-amz-checksum-crc32c: the big-endian CRC32C in base64 (CRC32C("123456789") is 0xE3069283).
TEST(SigV4, ChecksumCrc32cIsTheBigEndianCrcInBase64) {
  EXPECT_EQ(ChecksumCrc32c("123456789"), "4waSgw==");
  EXPECT_EQ(ChecksumCrc32c(""), "AAAAAA==");
}

TEST(SigV4, S3GetBucketLifecycleHasAnEmptyQueryValue) {
  SigningInput in = S3("GET", "/");
  in.query = {{"lifecycle", ""}};
  EXPECT_EQ(Sign(in, kS3Creds, kS3Date, "us-east-1", "s3").signature,
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4, S3ListObjects) {
  SigningInput in = S3("GET", "/");
  in.query = {{"prefix", "J"}, {"max-keys", "2"}};
  EXPECT_EQ(Sign(in, kS3Creds, kS3Date, "us-east-1", "s3").signature,
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4, HeaderValuesAreTrimmedAndRepeatsJoined) {
  SigningInput a = Suite("GET", "/");
  a.headers.emplace_back("My-Header1", "  a   b   c  ");
  a.headers.emplace_back("x-multi", "one");
  a.headers.emplace_back("X-Multi", "two");
  Signature s = Sign(a, kSuiteCreds, kSuiteDate, "us-east-1", "service");
  EXPECT_NE(s.canonical_request.find("my-header1:a b c\n"), std::string::npos);
  EXPECT_NE(s.canonical_request.find("x-multi:one,two\n"), std::string::npos);
  EXPECT_EQ(s.signed_headers, "host;my-header1;x-amz-date;x-multi");
}

TEST(SigV4, UriEncodeAndDecode) {
  EXPECT_EQ(UriEncode("a b+c/d~e_f.g-h", false), "a%20b%2Bc/d~e_f.g-h");
  EXPECT_EQ(UriEncode("a/b", true), "a%2Fb");
  EXPECT_EQ(UriEncode("=&?#%", true), "%3D%26%3F%23%25");
  std::string out;
  ASSERT_TRUE(UriDecode("a%20b%2Bc+d%2f", &out));
  EXPECT_EQ(out, "a b+c+d/");
  EXPECT_FALSE(UriDecode("bad%2", &out));
  EXPECT_FALSE(UriDecode("bad%", &out));
  EXPECT_FALSE(UriDecode("bad%zz", &out));
}

TEST(SigV4, AmzDate) { EXPECT_EQ(AmzDate(1440938160), "20150830T123600Z"); }

}  // namespace
}  // namespace archil::store
