#include "api/json_body.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

TEST(JsonBodyTest, ParsesObjects) {
  Result<nlohmann::json> j = ParseJsonObject(R"({"name": "x", "n": 3})");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(*RequiredString(*j, "name"), "x");
  EXPECT_EQ(**OptionalUint(*j, "n", 10), 3u);
  EXPECT_FALSE(OptionalString(*j, "missing")->has_value());
}

TEST(JsonBodyTest, RejectsBadBodies) {
  for (const std::string& bad :
       {std::string(""), std::string("null"), std::string("[1]"), std::string("\"s\""),
        std::string("{"), std::string("{\"a\":}"), std::string("{\"a\":\"\xff\"}"),
        std::string("{\"a\":1} trailing")}) {
    Result<nlohmann::json> j = ParseJsonObject(bad);
    ASSERT_FALSE(j.ok()) << bad;
    EXPECT_EQ(j.status().code(), Status::Code::kInvalidArgument);
  }
}

TEST(JsonBodyTest, AKeyGivenTwiceIsRefusedAndNamed) {
  for (const char* body : {R"({"name":"a","name":"b"})", R"({"r":{"mode":1,"mode":2}})"}) {
    Result<nlohmann::json> j = ParseJsonObject(body);
    ASSERT_FALSE(j.ok()) << body;
    EXPECT_EQ(j.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(j.status().message().find("given twice"), std::string::npos) << j.status().message();
  }
  // The same key in two different objects is fine.
  EXPECT_TRUE(ParseJsonObject(R"({"a":{"mode":1},"b":{"mode":2},"mode":3})").ok());
}

TEST(JsonBodyTest, DeepNestingIsRejectedBeforeParsing) {
  std::string deep = "{\"a\":" + std::string(1000000, '[') + std::string(1000000, ']') + "}";
  Result<nlohmann::json> j = ParseJsonObject(deep);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("nested"), std::string::npos);
  // Brackets inside strings do not count.
  EXPECT_TRUE(ParseJsonObject("{\"a\":\"" + std::string(100, '[') + "\\\"\"}").ok());
}

TEST(JsonBodyTest, WrongTypesNameTheField) {
  nlohmann::json j = *ParseJsonObject(R"({"name": 5, "uid": -1, "gid": 1.5, "mode": "0755"})");
  EXPECT_NE(RequiredString(j, "name").status().message().find("name must be a string"),
            std::string::npos);
  EXPECT_FALSE(OptionalUint(j, "uid", 100).ok());
  EXPECT_FALSE(OptionalUint(j, "gid", 100).ok());
  EXPECT_FALSE(OptionalUint(j, "mode", 100).ok());
  EXPECT_FALSE(RequiredString(j, "absent").ok());
}

TEST(JsonBodyTest, RequiredAndDefaultedMembers) {
  nlohmann::json j = *ParseJsonObject(R"({"n": 7, "b": true, "s": "x", "z": null, "big": 300})");
  EXPECT_EQ(*RequiredUint(j, "n", 10), 7u);
  EXPECT_EQ(RequiredUint(j, "big", 255).status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(RequiredUint(j, "absent", 10).status().message().find("missing required field absent"),
            std::string::npos);
  EXPECT_TRUE(*RequiredBool(j, "b"));
  EXPECT_NE(RequiredBool(j, "n").status().message().find("n must be a boolean"), std::string::npos);
  EXPECT_FALSE(RequiredBool(j, "z").ok());  // null is absent
  EXPECT_FALSE(OptionalBool(j, "z")->has_value());
  EXPECT_EQ(*StringOr(j, "s", "d"), "x");
  EXPECT_EQ(*StringOr(j, "z", "d"), "d");
  EXPECT_EQ(*StringOr(j, "absent", "d"), "d");
  EXPECT_FALSE(StringOr(j, "n", "d").ok());
  EXPECT_TRUE(RequireObject(j, "it").ok());
  EXPECT_EQ(RequireObject(nlohmann::json::array(), "a list").message(), "a list must be an object");
  // A value that is not an object has no members.
  EXPECT_FALSE(OptionalString(nlohmann::json("s"), "s")->has_value());
}

TEST(JsonBodyTest, UnknownFieldsAreNamed) {
  nlohmann::json j = *ParseJsonObject(R"({"name": "x", "mounts": []})");
  Status s = CheckKnownFields(j, {"name"});
  EXPECT_NE(s.message().find("\"mounts\""), std::string::npos);
}

TEST(JsonBodyTest, DumpNeverThrowsOnBadUtf8) {
  nlohmann::json j = std::string("bad \xff byte");
  EXPECT_EQ(DumpJson(j), "\"bad \xEF\xBF\xBD byte\"");
}

}  // namespace
}  // namespace archil
