#include "cli/api_client.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(ApiReplyTest, SuccessCarriesDataAndCursor) {
  Result<ApiReply> r =
      DecodeApiReply(200, R"({"success":true,"data":[{"id":1}],"nextCursor":"c9"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->http_status, 200);
  EXPECT_EQ(r->data, nlohmann::json::parse(R"([{"id":1}])"));
  EXPECT_EQ(r->next_cursor, "c9");
  r = DecodeApiReply(201, R"({"success":true,"data":{},"nextCursor":null})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->next_cursor, "");
}

// An error envelope keeps the server's message; the code follows the HTTP status.
TEST(ApiReplyTest, ErrorsMapTheirHttpStatus) {
  struct Case {
    int http;
    Status::Code code;
  };
  for (Case c :
       {Case{400, Status::Code::kInvalidArgument}, Case{401, Status::Code::kUnauthenticated},
        Case{403, Status::Code::kPermissionDenied}, Case{404, Status::Code::kNotFound},
        Case{409, Status::Code::kAlreadyExists}, Case{413, Status::Code::kTooLarge},
        Case{503, Status::Code::kUnavailable}, Case{500, Status::Code::kInternal}}) {
    Result<ApiReply> r =
        DecodeApiReply(c.http, R"({"success":false,"error":"no disk named 'x'","code":"x"})");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << c.http;
    EXPECT_EQ(r.status().message(), "no disk named 'x'");
  }
  // An error envelope with a 2xx status is still an error, never a success.
  EXPECT_EQ(DecodeApiReply(200, R"({"success":false,"error":"e"})").status().code(),
            Status::Code::kInternal);
}

// Whatever else comes back (a proxy's page, a truncated body, another service) is a clear error
// with the HTTP status's meaning, never a crash, never a success.
TEST(ApiReplyTest, AnythingElseIsAnError) {
  EXPECT_EQ(DecodeApiReply(200, "<html>hi</html>").status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeApiReply(200, R"({"success":true,"da)").status().code(),
            Status::Code::kCorruption);
  EXPECT_EQ(DecodeApiReply(502, "Bad Gateway").status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(DecodeApiReply(404, "").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(DecodeApiReply(500, R"({"success":true,"data":1})").status().code(),
            Status::Code::kCorruption);
  EXPECT_EQ(DecodeApiReply(200, R"({"success":"yes","data":1})").status().code(),
            Status::Code::kCorruption);
  EXPECT_EQ(DecodeApiReply(200, std::string(10000, '[')).status().code(),
            Status::Code::kCorruption);
  Result<ApiReply> r = DecodeApiReply(200, "<html>");
  EXPECT_NE(r.status().message().find("HTTP 200"), std::string::npos) << r.status().ToString();
}

TEST(ApiClientTest, HttpStatusesMapBack) {
  EXPECT_EQ(CodeForHttpStatus(200), Status::Code::kOk);
  EXPECT_EQ(CodeForHttpStatus(409), Status::Code::kAlreadyExists);
  EXPECT_EQ(CodeForHttpStatus(413), Status::Code::kTooLarge);
  EXPECT_EQ(CodeForHttpStatus(503), Status::Code::kUnavailable);
  EXPECT_EQ(CodeForHttpStatus(500), Status::Code::kInternal);
}

}  // namespace
}  // namespace archil
