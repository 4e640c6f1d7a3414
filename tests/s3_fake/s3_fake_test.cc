// The S3 fake over real HTTP: libcurl as the client, requests signed with store::Sign.
#include "s3_fake.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "store/sigv4.h"

namespace archil::testing {
namespace {

using Clock = std::chrono::steady_clock;
using Query = std::vector<std::pair<std::string, std::string>>;
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Response {
  CURLcode curl = CURLE_OK;
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string Code() const {
    size_t a = body.find("<Code>"), b = body.find("</Code>");
    if (a == std::string::npos || b == std::string::npos) return "";
    return body.substr(a + 6, b - a - 6);
  }
};

size_t WriteCb(char* p, size_t size, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, size * n);
  return size * n;
}

size_t HeaderCb(char* p, size_t size, size_t n, void* ud) {
  std::string line(p, size * n);
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.erase(0, 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(ud))[name] = value;
  }
  return size * n;
}

// Options for one request that let a test break it on purpose.
struct Tamper {
  std::string sign_body;  // sign this body instead of the one sent (if non-empty)
  std::string sign_path;  // sign this path instead of the one sent (if non-empty)
  std::string access_key;
  long timeout_ms = 10000;
  long clock_skew_s = 0;  // sign as if the time were now + this
};

std::string Md5(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_md5(), nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

template <typename T, typename V>
Tamper With(T Tamper::*field, V value) {
  Tamper t;
  t.*field = value;
  return t;
}

class S3FakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto f = S3Fake::Start(S3FakeOptions{});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    fake_ = std::move(f).value();
    host_ = "127.0.0.1:" + std::to_string(fake_->port());
  }

  // `path` is already URI-encoded ("/archil/key").
  Response Do(const std::string& method, const std::string& path, const Query& query = {},
              const std::string& body = "", const Headers& extra = {}, const Tamper& t = {}) {
    const std::string amz_date = store::AmzDate(std::time(nullptr) + t.clock_skew_s);
    store::SigningInput in;
    in.method = method;
    in.canonical_path = t.sign_path.empty() ? path : t.sign_path;
    in.query = query;
    in.payload_hash = store::Sha256Hex(t.sign_body.empty() ? body : t.sign_body);
    in.headers = {
        {"host", host_}, {"x-amz-date", amz_date}, {"x-amz-content-sha256", in.payload_hash}};
    for (const auto& h : extra) in.headers.push_back(h);
    store::AwsCredentials creds{t.access_key.empty() ? "archil-test" : t.access_key,
                                "archil-test-secret", ""};
    store::Signature sig = store::Sign(in, creds, amz_date, "us-east-1", "s3");

    std::string url = fake_->endpoint() + path;
    for (size_t i = 0; i < query.size(); ++i) {
      url += (i == 0 ? "?" : "&") + store::UriEncode(query[i].first, true);
      if (!query[i].second.empty() || query[i].first != "uploads") {
        url += "=" + store::UriEncode(query[i].second, true);
      }
    }
    Response r;
    CURL* c = curl_easy_init();
    curl_slist* hs = nullptr;
    hs = curl_slist_append(hs, ("x-amz-date: " + amz_date).c_str());
    hs = curl_slist_append(hs, ("x-amz-content-sha256: " + in.payload_hash).c_str());
    hs = curl_slist_append(hs, ("Authorization: " + sig.authorization).c_str());
    hs = curl_slist_append(hs, "Expect:");
    for (const auto& [k, v] : extra) hs = curl_slist_append(hs, (k + ": " + v).c_str());
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteCb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, HeaderCb);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, t.timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (method == "HEAD") {
      curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
    if (method == "PUT" || method == "POST") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    }
    r.curl = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(hs);
    curl_easy_cleanup(c);
    return r;
  }

  Response Put(const std::string& key, const std::string& body, const Headers& extra = {}) {
    return Do("PUT", "/archil/" + key, {}, body, extra);
  }
  Response Get(const std::string& key, const Headers& extra = {}) {
    return Do("GET", "/archil/" + key, {}, "", extra);
  }

  std::string Between(const std::string& s, const std::string& tag) {
    size_t a = s.find("<" + tag + ">");
    size_t b = s.find("</" + tag + ">");
    if (a == std::string::npos || b == std::string::npos) return "";
    a += tag.size() + 2;
    return s.substr(a, b - a);
  }

  std::unique_ptr<S3Fake> fake_;
  std::string host_;
};

TEST_F(S3FakeTest, PutGetRangeHeadDelete) {
  Response p = Put("dir/a", "hello world");
  ASSERT_EQ(p.curl, CURLE_OK);
  EXPECT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(p.headers["etag"], "\"" +
                                   HexEncode(std::string("\x5e\xb6\x3b\xbb\xe0\x1e\xee\xd0"
                                                         "\x93\xcb\x22\xbb\x8f\x5a\xcd\xc3",
                                                         16)) +
                                   "\"");
  Response g = Get("dir/a");
  EXPECT_EQ(g.status, 200);
  EXPECT_EQ(g.body, "hello world");
  Response r = Get("dir/a", {{"Range", "bytes=0-4"}});
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, "hello");
  EXPECT_EQ(r.headers["content-range"], "bytes 0-4/11");
  Response open = Get("dir/a", {{"Range", "bytes=6-"}});
  EXPECT_EQ(open.status, 206);
  EXPECT_EQ(open.body, "world");
  Response bad = Get("dir/a", {{"Range", "bytes=11-20"}});
  EXPECT_EQ(bad.status, 416);
  EXPECT_EQ(bad.Code(), "InvalidRange");
  Response h = Do("HEAD", "/archil/dir/a");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.headers["content-length"], "11");
  EXPECT_EQ(h.headers["etag"], p.headers["etag"]);
  EXPECT_EQ(Do("DELETE", "/archil/dir/a").status, 204);
  EXPECT_EQ(Do("DELETE", "/archil/dir/a").status, 204);
  EXPECT_EQ(Do("HEAD", "/archil/dir/a").status, 404);
  Response missing = Get("dir/a");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Code(), "NoSuchKey");
  EXPECT_NE(missing.body.find("<Resource>/archil/dir/a</Resource>"), std::string::npos);
}

TEST_F(S3FakeTest, IfNoneMatchRefusesSecondPut) {
  EXPECT_EQ(Put("k", "one", {{"If-None-Match", "*"}}).status, 200);
  Response second = Put("k", "two", {{"If-None-Match", "*"}});
  EXPECT_EQ(second.status, 412);
  EXPECT_EQ(second.Code(), "PreconditionFailed");
  EXPECT_EQ(fake_->Object("archil", "k"), "one");
  EXPECT_EQ(fake_->counters().precondition_failed, 1u);
}

TEST_F(S3FakeTest, IfMatchRightAndWrongEtag) {
  Response first = Put("k", "one");
  std::string etag = first.headers["etag"];
  EXPECT_EQ(Put("absent", "x", {{"If-Match", etag}}).status, 412);
  EXPECT_EQ(Put("k", "two", {{"If-Match", "\"0123\""}}).status, 412);
  EXPECT_EQ(fake_->Object("archil", "k"), "one");
  EXPECT_EQ(Put("k", "two", {{"If-Match", etag}}).status, 200);
  EXPECT_EQ(fake_->Object("archil", "k"), "two");
}

TEST_F(S3FakeTest, ConditionsIgnoredWhenNotEnforced) {
  fake_->SetEnforceConditions(false);
  EXPECT_EQ(Put("k", "one", {{"If-None-Match", "*"}}).status, 200);
  EXPECT_EQ(Put("k", "two", {{"If-None-Match", "*"}}).status, 200);
  EXPECT_EQ(Put("k", "three", {{"If-Match", "\"wrong\""}}).status, 200);
  EXPECT_EQ(fake_->Object("archil", "k"), "three");
}

TEST_F(S3FakeTest, ListMaxKeysZero) {
  fake_->PutDirect("archil", "a", "1");
  Response r = Do("GET", "/archil", {{"list-type", "2"}, {"max-keys", "0"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Between(r.body, "KeyCount"), "0");
}

TEST_F(S3FakeTest, ListPrefixStartAfterAndPagination) {
  std::vector<std::string> want;
  for (int i = 0; i < 2500; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "p/%05d", i);
    fake_->PutDirect("archil", buf, "x");
    want.push_back(buf);
  }
  fake_->PutDirect("archil", "q/a&b<c", "yy");
  fake_->PutDirect("archil", "a-before", "z");

  std::vector<std::string> got;
  std::string token;
  int pages = 0;
  for (;;) {
    Query q = {{"list-type", "2"}, {"prefix", "p/"}};
    if (!token.empty()) q.emplace_back("continuation-token", token);
    Response r = Do("GET", "/archil", q);
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_NE(r.body.find("xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\""), std::string::npos);
    pages++;
    for (size_t pos = 0; (pos = r.body.find("<Key>", pos)) != std::string::npos;) {
      size_t end = r.body.find("</Key>", pos);
      got.push_back(r.body.substr(pos + 5, end - pos - 5));
      pos = end;
    }
    if (Between(r.body, "IsTruncated") != "true") break;
    EXPECT_EQ(Between(r.body, "KeyCount"), "1000");
    token = Between(r.body, "NextContinuationToken");
    ASSERT_FALSE(token.empty());
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(got, want);

  Response after =
      Do("GET", "/archil", {{"list-type", "2"}, {"start-after", "p/02497"}, {"max-keys", "10"}});
  EXPECT_EQ(Between(after.body, "KeyCount"), "3");  // p/02498, p/02499, q/a&b<c
  EXPECT_NE(after.body.find("<Key>q/a&amp;b&lt;c</Key>"), std::string::npos);
  EXPECT_EQ(after.body.find("a-before"), std::string::npos);
  EXPECT_EQ(Between(after.body, "IsTruncated"), "false");
  EXPECT_NE(after.body.find("<Size>2</Size>"), std::string::npos);

  Response small = Do("GET", "/archil", {{"list-type", "2"}, {"max-keys", "2"}});
  EXPECT_EQ(Between(small.body, "KeyCount"), "2");
  EXPECT_EQ(Between(small.body, "IsTruncated"), "true");
  EXPECT_NE(small.body.find("<Key>a-before</Key>"), std::string::npos);
}

class S3FakeMultipartTest : public S3FakeTest {
 protected:
  std::string Create(const std::string& key) {
    Response r = Do("POST", "/archil/" + key, {{"uploads", ""}});
    EXPECT_EQ(r.status, 200) << r.body;
    return Between(r.body, "UploadId");
  }
  std::string UploadPart(const std::string& key, const std::string& id, int n,
                         const std::string& data) {
    Response r =
        Do("PUT", "/archil/" + key, {{"partNumber", std::to_string(n)}, {"uploadId", id}}, data);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.headers["etag"];
  }
  Response Complete(const std::string& key, const std::string& id,
                    const std::vector<std::pair<int, std::string>>& parts,
                    const Headers& extra = {}) {
    std::string xml = "<CompleteMultipartUpload>";
    for (const auto& [n, etag] : parts) {
      xml += "<Part><PartNumber>" + std::to_string(n) + "</PartNumber><ETag>" + etag +
             "</ETag></Part>";
    }
    xml += "</CompleteMultipartUpload>";
    return Do("POST", "/archil/" + key, {{"uploadId", id}}, xml, extra);
  }
};

TEST_F(S3FakeMultipartTest, HappyPath) {
  const std::string a(5 << 20, 'a'), b(5 << 20, 'b'), c = "tail";
  std::string id = Create("big");
  ASSERT_FALSE(id.empty());
  std::string e1 = UploadPart("big", id, 1, a);
  std::string e2 = UploadPart("big", id, 2, b);
  std::string e3 = UploadPart("big", id, 3, c);
  Response done = Complete("big", id, {{1, e1}, {2, e2}, {3, e3}}, {{"If-None-Match", "*"}});
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(Between(done.body, "Key"), "big");
  EXPECT_EQ(Between(done.body, "Bucket"), "archil");
  std::string etag = Between(done.body, "ETag");
  std::string md5s;
  for (const std::string& e : {e1, e2, e3}) md5s += FromHex(e.substr(1, 32));
  EXPECT_EQ(e1, "\"" + HexEncode(Md5(a)) + "\"");
  EXPECT_EQ(etag, "&quot;" + HexEncode(Md5(md5s)) + "-3&quot;");
  EXPECT_EQ(fake_->Object("archil", "big"), a + b + c);
  // The upload is gone; completing again is NoSuchUpload.
  EXPECT_EQ(Complete("big", id, {{1, e1}}).Code(), "NoSuchUpload");
  // If-None-Match on complete.
  std::string id2 = Create("big");
  std::string f1 = UploadPart("big", id2, 1, "x");
  EXPECT_EQ(Complete("big", id2, {{1, f1}}, {{"If-None-Match", "*"}}).status, 412);
  EXPECT_EQ(Do("DELETE", "/archil/big", {{"uploadId", id2}}).status, 204);
  EXPECT_EQ(Do("DELETE", "/archil/big", {{"uploadId", id2}}).status, 404);
  auto n = fake_->counters();
  EXPECT_EQ(n.multipart_creates, 2u);
  EXPECT_EQ(n.parts, 4u);
  EXPECT_EQ(n.aborts, 1u);
}

TEST_F(S3FakeMultipartTest, EntityTooSmallInvalidPartAndOrder) {
  std::string id = Create("m");
  std::string e1 = UploadPart("m", id, 1, "small");
  std::string e2 = UploadPart("m", id, 2, "also small");
  Response small = Complete("m", id, {{1, e1}, {2, e2}});
  EXPECT_EQ(small.status, 400);
  EXPECT_EQ(small.Code(), "EntityTooSmall");
  Response wrong = Complete("m", id, {{1, "\"00000000000000000000000000000000\""}});
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(wrong.Code(), "InvalidPart");
  EXPECT_EQ(Complete("m", id, {{1, e1}, {7, e1}}).Code(), "InvalidPart");
  EXPECT_EQ(Complete("m", id, {{2, e2}, {1, e1}}).Code(), "InvalidPartOrder");
  EXPECT_EQ(Complete("m", "nope", {{1, e1}}).status, 404);
  EXPECT_FALSE(fake_->Object("archil", "m").has_value());
}

TEST_F(S3FakeTest, AChecksumThatIsNotTheBodysIsBadDigestAndStoresNothing) {
  Response bad = Put("c", "hello", {{"x-amz-checksum-crc32c", store::ChecksumCrc32c("hellO")}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Code(), "BadDigest");
  EXPECT_FALSE(fake_->Object("archil", "c").has_value());
  EXPECT_EQ(fake_->counters().checksums_verified, 0u);
  Response good = Put("c", "hello", {{"x-amz-checksum-crc32c", store::ChecksumCrc32c("hello")}});
  EXPECT_EQ(good.status, 200) << good.body;
  EXPECT_EQ(fake_->Object("archil", "c"), "hello");
  EXPECT_EQ(fake_->counters().checksums_verified, 1u);
}

// S3's rules for an upload created with x-amz-checksum-algorithm: every part carries its
// checksum, and the completion lists it; an upload created without one takes no part checksum.
TEST_F(S3FakeMultipartTest, AnUploadWithAChecksumAlgorithmNeedsEveryPartsChecksum) {
  const Headers algorithm{{"x-amz-checksum-algorithm", "CRC32C"}};
  Response created = Do("POST", "/archil/m", {{"uploads", ""}}, "", algorithm);
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = Between(created.body, "UploadId");
  const Query part1{{"partNumber", "1"}, {"uploadId", id}};
  EXPECT_EQ(Do("PUT", "/archil/m", part1, "data").Code(), "InvalidRequest");
  // The same part, with its checksum:
  Response up = Do("PUT", "/archil/m", part1, "data",
                   {{"x-amz-checksum-crc32c", store::ChecksumCrc32c("data")}});
  ASSERT_EQ(up.status, 200) << up.body;
  const std::string etag = up.headers["etag"];
  EXPECT_EQ(Complete("m", id, {{1, etag}}).Code(), "InvalidPart");  // no <ChecksumCRC32C>
  const std::string xml = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + etag +
                          "</ETag><ChecksumCRC32C>" + store::ChecksumCrc32c("data") +
                          "</ChecksumCRC32C></Part></CompleteMultipartUpload>";
  Response done = Do("POST", "/archil/m", {{"uploadId", id}}, xml);
  EXPECT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(fake_->Object("archil", "m"), "data");

  const std::string plain = Create("n");
  EXPECT_EQ(Do("PUT", "/archil/n", {{"partNumber", "1"}, {"uploadId", plain}}, "data",
               {{"x-amz-checksum-crc32c", store::ChecksumCrc32c("data")}})
                .Code(),
            "InvalidRequest");
  EXPECT_EQ(
      Do("POST", "/archil/o", {{"uploads", ""}}, "", {{"x-amz-checksum-algorithm", "MD5"}}).Code(),
      "InvalidRequest");
}

TEST_F(S3FakeTest, TamperedRequestsAreRefusedAndStoreNothing) {
  Response body = Do("PUT", "/archil/t", {}, "hello", {}, With(&Tamper::sign_body, "hellp"));
  EXPECT_EQ(body.status, 400);
  EXPECT_EQ(body.Code(), "XAmzContentSHA256Mismatch");
  Response path = Do("PUT", "/archil/t", {}, "hello", {}, With(&Tamper::sign_path, "/archil/u"));
  EXPECT_EQ(path.status, 403);
  EXPECT_EQ(path.Code(), "SignatureDoesNotMatch");
  // A path that is not canonically encoded ('+' must be %2B) is refused even if signed so.
  Response plus = Do("PUT", "/archil/a+b", {}, "hello");
  EXPECT_EQ(plus.Code(), "SignatureDoesNotMatch");
  EXPECT_EQ(Do("PUT", "/archil/a%2Bb", {}, "hello").status, 200);
  EXPECT_EQ(fake_->Keys("archil"), std::vector<std::string>{"a+b"});
  EXPECT_EQ(fake_->counters().bad_signatures, 2u);
}

TEST_F(S3FakeTest, WrongAccessKey) {
  Response r = Do("GET", "/archil/x", {}, "", {}, With(&Tamper::access_key, "someone-else"));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.Code(), "InvalidAccessKeyId");
}

TEST_F(S3FakeTest, SkewedClock) {
  Response r = Do("PUT", "/archil/x", {}, "v", {}, With(&Tamper::clock_skew_s, -16 * 60));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.Code(), "RequestTimeTooSkewed");
  EXPECT_EQ(Do("PUT", "/archil/x", {}, "v", {}, With(&Tamper::clock_skew_s, -60)).status, 200);
}

TEST_F(S3FakeTest, UnsignedRequestIsRefused) {
  std::string body;
  CURL* c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, (fake_->endpoint() + "/archil/x").c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteCb);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  ASSERT_EQ(curl_easy_perform(c), CURLE_OK);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  EXPECT_EQ(status, 403);
  EXPECT_NE(body.find("<Code>AccessDenied</Code>"), std::string::npos);
}

TEST_F(S3FakeTest, FailNextFailsExactlyThatMany) {
  fake_->FailNext(2, 503, "SlowDown");
  Response a = Put("k", "v");
  Response b = Put("k", "v");
  Response c = Put("k", "v");
  EXPECT_EQ(a.status, 503);
  EXPECT_EQ(a.Code(), "SlowDown");
  EXPECT_EQ(b.status, 503);
  EXPECT_EQ(c.status, 200);
  EXPECT_EQ(fake_->counters().injected_errors, 2u);
  EXPECT_EQ(fake_->counters().puts, 1u);
}

TEST_F(S3FakeTest, ErrorRateOneFailsEverything) {
  fake_->SetErrorRate(1.0, 500, "InternalError", 7);
  EXPECT_EQ(Put("k", "v").Code(), "InternalError");
  EXPECT_FALSE(fake_->Object("archil", "k").has_value());
  fake_->SetErrorRate(0, 500, "InternalError", 7);
  EXPECT_EQ(Put("k", "v").status, 200);
}

TEST_F(S3FakeTest, TornResponseIsATransferError) {
  fake_->PutDirect("archil", "k", std::string(100000, 'z'));
  fake_->TearNext(1);
  Response torn = Get("k");
  EXPECT_NE(torn.curl, CURLE_OK);
  EXPECT_EQ(Get("k").body.size(), 100000u);
}

TEST_F(S3FakeTest, HangTimesOutTheClient) {
  fake_->SetHang(true);
  Response r = Do("GET", "/archil/k", {}, "", {}, With(&Tamper::timeout_ms, 300));
  EXPECT_EQ(r.curl, CURLE_OPERATION_TIMEDOUT);
  fake_->SetHang(false);
  EXPECT_EQ(Get("k").status, 404);
}

TEST_F(S3FakeTest, FirstByteLatency) {
  fake_->PutDirect("archil", "k", "v");
  fake_->SetFirstByteLatency(std::chrono::milliseconds(50));
  auto start = Clock::now();
  EXPECT_EQ(Get("k").status, 200);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(50));
}

TEST_F(S3FakeTest, Bandwidth) {
  fake_->SetBandwidth(10'000'000);
  auto start = Clock::now();
  EXPECT_EQ(Put("k", std::string(5'000'000, 'b')).status, 200);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(450));
  EXPECT_EQ(fake_->counters().bytes_in, 5'000'000u);
}

TEST_F(S3FakeTest, UnreachableAndBack) {
  fake_->SetUnreachable(true);
  EXPECT_NE(Put("k", "v").curl, CURLE_OK);
  fake_->SetUnreachable(false);
  EXPECT_EQ(Put("k", "v").status, 200);
}

TEST_F(S3FakeTest, RemovedBucket) {
  fake_->PutDirect("archil", "k", "v");
  fake_->RemoveBucket("archil");
  Response r = Get("k");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Code(), "NoSuchBucket");
  EXPECT_EQ(Do("GET", "/other/k").Code(), "NoSuchBucket");
}

TEST_F(S3FakeTest, UnsupportedOperation) {
  Response r = Do("GET", "/archil/k", {{"acl", ""}});
  EXPECT_EQ(r.status, 501);
  EXPECT_EQ(r.Code(), "NotImplemented");
}

// Sends `in` on a fresh TCP connection, half-closes, and returns everything the server answers.
std::string RawExchange(uint16_t port, const std::string& in) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)::send(fd, in.data(), in.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
  }
  ::close(fd);
  return out;
}

TEST_F(S3FakeTest, BodyOverLimitIsEntityTooLarge) {
  std::string reply = RawExchange(
      fake_->port(), "PUT /archil/x HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  EXPECT_NE(reply.find("<Code>EntityTooLarge</Code>"), std::string::npos);
}

TEST_F(S3FakeTest, GarbageDoesNotCrash) {
  const std::vector<std::string> inputs = {
      std::string("\x00\x01\x02\xff\xfe garbage\r\n\r\n", 18),
      "GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
      "PUT /archil/x HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999\r\n\r\n",
      "GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET /archil/x HTTP/1.1\r\nAuthorization: AWS4-HMAC-SHA256 Credential=/, Signature=\r\n\r\n",
      std::string(100000, 'A') + "\r\n\r\n",
  };
  for (const auto& in : inputs) RawExchange(fake_->port(), in);
  EXPECT_EQ(Put("k", "still here").status, 200);
  EXPECT_EQ(Get("k").body, "still here");
}

}  // namespace
}  // namespace archil::testing
