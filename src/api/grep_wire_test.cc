#include "api/grep_wire.h"

#include <gtest/gtest.h>

namespace archil::wire {
namespace {

Status Refused(std::string_view body) { return DecodeGrepRequest(body).status(); }

TEST(GrepWireTest, ARequestRoundTripsAndTakesItsDefaults) {
  GrepRequest r;
  r.directory = "/src";
  r.pattern = "needle|(?i)hay";
  r.recursive = true;
  r.max_duration_seconds = 5;
  r.concurrency = 2;
  r.max_results = 10;
  r.checkpoint = "before";
  Result<GrepRequest> back = DecodeGrepRequest(ToJson(r).dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);

  Result<GrepRequest> minimal = DecodeGrepRequest(R"({"pattern": "x"})");
  ASSERT_TRUE(minimal.ok()) << minimal.status().ToString();
  EXPECT_EQ(minimal->directory, "/");
  EXPECT_FALSE(minimal->recursive);
  EXPECT_EQ(minimal->max_duration_seconds, 30u);
  EXPECT_EQ(minimal->concurrency, 4u);
  EXPECT_EQ(minimal->max_results, 1000u);
  EXPECT_FALSE(minimal->checkpoint.has_value());
}

TEST(GrepWireTest, BadRequestsAreRefusedNamingTheField) {
  struct Case {
    const char* body;
    const char* names;
  };
  for (const Case& c : {
           Case{R"({})", "pattern"},
           Case{R"({"pattern": 7})", "pattern"},
           Case{R"({"pattern": "x", "directory": ["/"]})", "directory"},
           Case{R"({"pattern": "x", "recursive": "yes"})", "recursive"},
           Case{R"({"pattern": "x", "maxResults": 0})", "maxResults"},
           Case{R"({"pattern": "x", "maxResults": 10001})", "maxResults"},
           Case{R"({"pattern": "x", "maxResults": -1})", "maxResults"},
           Case{R"({"pattern": "x", "concurrency": 17})", "concurrency"},
           Case{R"({"pattern": "x", "concurrency": 1.5})", "concurrency"},
           Case{R"({"pattern": "x", "maxDurationSeconds": 3601})", "maxDurationSeconds"},
           Case{R"({"pattern": "x", "maxDurationSeconds": "30"})", "maxDurationSeconds"},
           Case{R"({"pattern": "x", "checkpoint": false})", "checkpoint"},
           Case{R"({"pattern": "x", "patern": "y"})", "patern"},
           Case{R"({"pattern": "x", "pattern": "y"})", "pattern"},
       }) {
    Status s = Refused(c.body);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.body;
    EXPECT_NE(s.message().find(c.names), std::string::npos) << c.body << ": " << s.ToString();
  }
  for (const char* body : {"", "[]", "\"x\"", "{", R"({"pattern": "x"} trailing)"}) {
    EXPECT_EQ(Refused(body).code(), Status::Code::kInvalidArgument) << body;
  }
}

TEST(GrepWireTest, AReplyRoundTripsAndABadOneIsCorruption) {
  GrepReply r;
  r.matches = {{"/a", 1, "one"}, {"/b/c", 42, "two \"quoted\""}};
  r.stopped_reason = "max_results";
  r.files_scanned = 9;
  r.duration_ms = 1234;
  Result<GrepReply> back = DecodeGrepReply(ToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  nlohmann::json bad = ToJson(r);
  bad["matches"][1]["line"] = "42";
  EXPECT_EQ(DecodeGrepReply(bad).status().code(), Status::Code::kCorruption);
  bad = ToJson(r);
  bad.erase("stoppedReason");
  EXPECT_EQ(DecodeGrepReply(bad).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeGrepReply(nlohmann::json::array()).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace archil::wire
