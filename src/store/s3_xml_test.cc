#include "store/s3_xml.h"

#include <gtest/gtest.h>

namespace archil::store {
namespace {

TEST(S3Xml, Error) {
  S3Error e = ParseS3Error(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code>"
      "<Message>The specified key does not exist.</Message><Key>a</Key></Error>");
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "The specified key does not exist.");
  EXPECT_EQ(ParseS3Error("").code, "");
  EXPECT_EQ(ParseS3Error("<html>502 Bad Gateway</html>").code, "");
  EXPECT_EQ(ParseS3Error("\xff\xfe<<<").code, "");
}

TEST(S3Xml, ListObjectsV2) {
  Result<ListResult> r = ParseListObjectsV2(
      "<?xml version=\"1.0\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>"
      "<Contents><Key>p/a&amp;b</Key><Size>5</Size><ETag>&quot;abc&quot;</ETag></Contents>"
      "<Contents><Key>p/c</Key><Size>18446744073709551615</Size><ETag>\"d\"</ETag></Contents>"
      "</ListBucketResult>");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->truncated);
  ASSERT_EQ(r->objects.size(), 2u);
  EXPECT_EQ(r->objects[0].key, "p/a&b");
  EXPECT_EQ(r->objects[0].size, 5u);
  EXPECT_EQ(r->objects[0].etag, "abc");
  EXPECT_EQ(r->objects[1].size, UINT64_MAX);
}

TEST(S3Xml, ListRepliesThatAreNotListsAreCorruption) {
  for (const char* body :
       {"", "garbage", "<Error><Code>X</Code></Error>",
        "<ListBucketResult><Contents><Key>a</Key><Size>5</Size></Contents></ListBucketResult>",
        "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key><Size>-1</Size>"
        "</Contents></ListBucketResult>",
        "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Size>1</Size></Contents>"
        "</ListBucketResult>",
        "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key><Size>1x</Size>"
        "</Contents></ListBucketResult>"}) {
    EXPECT_EQ(ParseListObjectsV2(body).status().code(), Status::Code::kCorruption) << body;
  }
}

TEST(S3Xml, Multipart) {
  Result<std::string> id = ParseInitiateMultipart(
      "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>u-1</UploadId>"
      "</InitiateMultipartUploadResult>");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "u-1");
  EXPECT_EQ(ParseInitiateMultipart("<InitiateMultipartUploadResult/>").status().code(),
            Status::Code::kCorruption);
  EXPECT_EQ(CompleteMultipartBody({{1, "a", ""}, {2, "b", ""}}),
            "<?xml version=\"1.0\"?><CompleteMultipartUpload "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1</PartNumber>"
            "<ETag>\"a\"</ETag></Part><Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag></Part>"
            "</CompleteMultipartUpload>");
  EXPECT_EQ(CompleteMultipartBody({{1, "a", "yZRlqg=="}}),
            "<?xml version=\"1.0\"?><CompleteMultipartUpload "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><PartNumber>1</PartNumber>"
            "<ETag>\"a\"</ETag><ChecksumCRC32C>yZRlqg==</ChecksumCRC32C></Part>"
            "</CompleteMultipartUpload>");
  Result<std::string> done = ParseCompleteMultipart(
      "<CompleteMultipartUploadResult><ETag>\"x-2\"</ETag></CompleteMultipartUploadResult>");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, "x-2");
  EXPECT_EQ(ParseCompleteMultipart("<Error><Code>InternalError</Code></Error>").status().code(),
            Status::Code::kUnavailable);
  EXPECT_EQ(ParseCompleteMultipart("<Error><Code>InvalidPart</Code></Error>").status().code(),
            Status::Code::kInternal);
}

}  // namespace
}  // namespace archil::store
