#include "api/share_wire.h"

#include <gtest/gtest.h>

namespace archil::wire {
namespace {

TEST(ShareWire, DecodesTheRequestWithItsDefault) {
  Result<ShareRequest> r = DecodeShareRequest(R"({"key": "a/b.txt"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (ShareRequest{"a/b.txt", 86400}));
  r = DecodeShareRequest(R"({"key": "x", "expiresIn": 604800})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->expires_in, 604800u);
  EXPECT_EQ(*DecodeShareRequest(ToJson(ShareRequest{"k", 7}).dump()), (ShareRequest{"k", 7}));
}

TEST(ShareWire, RefusesBadBodiesNamingTheField) {
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "JSON"},
           {"[]", "object"},
           {"{}", "key"},
           {R"({"key": 5})", "key"},
           {R"({"key": "x", "expiresIn": 0})", "expiresIn"},
           {R"({"key": "x", "expiresIn": 604801})", "expiresIn"},
           {R"({"key": "x", "expiresIn": -1})", "expiresIn"},
           {R"({"key": "x", "expiresIn": "60"})", "expiresIn"},
           {R"({"key": "x", "expires": 60})", "expires"},
       }) {
    Result<ShareRequest> r = DecodeShareRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << c.body;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << c.body << ": " << r.status().message();
  }
}

TEST(ShareWire, TheReplyRoundTripsAndAMalformedOneIsCorruption) {
  ShareReply reply{"http://h:1/api/share/abc", 60};
  EXPECT_EQ(*DecodeShareReply(ToJson(reply)), reply);
  EXPECT_EQ(DecodeShareReply(nlohmann::json{{"url", 1}}).status().code(),
            Status::Code::kCorruption);
  EXPECT_EQ(DecodeShareReply(nlohmann::json::array()).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace archil::wire
