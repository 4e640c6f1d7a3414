#include "api/wire.h"

#include <gtest/gtest.h>

namespace archil::wire {
namespace {

using nlohmann::json;

Disk SampleDisk() {
  Disk d;
  d.id = "dsk-0123456789abcdef";
  d.name = "data";
  d.status = "available";
  d.region = "local";
  d.created_at = "2026-11-30T03:24:25.123Z";
  d.root = {1000, 1000, 0750};
  d.users.push_back({"token", "ci", "wxyz", "00000000000000aa", "2026-11-30T03:24:25.123Z", {}});
  return d;
}

TEST(WireTest, RepliesRoundTripThroughTheirJson) {
  Disk d = SampleDisk();
  EXPECT_EQ(*DecodeDisk(ToJson(d)), d);
  EXPECT_EQ(*DecodeDiskList(json::array({ToJson(d), ToJson(d)})), (std::vector<Disk>{d, d}));

  CreateDiskReply reply{d.id, true, d.users, d};
  reply.users[0].token = "adt_00000000000000aa_secret";
  EXPECT_EQ(*DecodeCreateDiskReply(ToJson(reply)), reply);

  ApiKey k{"00000000000000bb",           "admin", "first key", "abcd", "2026-11-30T00:00:00.000Z",
           "key-00000000000000bb_secret"};
  EXPECT_EQ(*DecodeApiKey(ToJson(k)), k);
  EXPECT_EQ(*DecodeKeyList(json{{"tokens", json::array({ToJson(k)})}}), std::vector<ApiKey>{k});
}

// The names on the wire are Archil's: a rename here breaks every client.
TEST(WireTest, FieldNamesAreTheDocumentedOnes) {
  json j = ToJson(SampleDisk());
  for (const char* f : {"id", "name", "organization", "status", "provider", "region", "createdAt",
                        "rootAttrs", "authorizedUsers"}) {
    EXPECT_TRUE(j.contains(f)) << f;
  }
  EXPECT_EQ(j["rootAttrs"], (json{{"uid", 1000}, {"gid", 1000}, {"mode", 0750}}));
  EXPECT_TRUE(j["authorizedUsers"][0].contains("tokenSuffix"));
  EXPECT_FALSE(j["authorizedUsers"][0].contains("token"));  // only when just created
  EXPECT_EQ(ToJson(CreateDiskRequest{"x", std::nullopt, 7, std::nullopt}),
            (json{{"name", "x"}, {"rootAttrs", {{"gid", 7}}}}));
}

TEST(WireTest, RequestsAreDecodedStrictly) {
  auto create = DecodeCreateDiskRequest(R"({"name":"a","rootAttrs":{"uid":5,"mode":448}})");
  ASSERT_TRUE(create.ok()) << create.status().ToString();
  EXPECT_EQ(*create, (CreateDiskRequest{"a", 5, std::nullopt, 0700}));
  EXPECT_EQ(*DecodeCreateDiskRequest(ToJson(*create).dump()), *create);

  for (const char* bad :
       {R"({})", R"({"name":1})", R"({"name":"a","extra":1})", R"({"name":"a","rootAttrs":[]})",
        R"({"name":"a","rootAttrs":{"x":1}})", R"({"name":"a","rootAttrs":{"mode":4096}})",
        R"({"name":"a","rootAttrs":{"uid":-1}})"}) {
    EXPECT_EQ(DecodeCreateDiskRequest(bad).status().code(), Status::Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(DecodeAddUserRequest(R"({"nickname":"n"})")->type, "token");
  EXPECT_EQ(DecodeAddUserRequest(R"({"type":"oidc","nickname":"n"})").status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(*DecodeCreateKeyRequest(R"({"name":"k"})"), (CreateKeyRequest{"k", ""}));
  EXPECT_EQ(DecodeCreateKeyRequest(R"({"name":"k","description":3})").status().code(),
            Status::Code::kInvalidArgument);
}

// Replies from a server we cannot trust: wrong types are Corruption naming the field, never a
// crash or an exception; unknown fields are ignored (a newer server may add some).
TEST(WireTest, RepliesWithWrongTypesAreCorruption) {
  json ok = ToJson(SampleDisk());
  ok["futureField"] = {1, 2};
  EXPECT_TRUE(DecodeDisk(ok).ok());
  for (auto [field, value] : std::vector<std::pair<const char*, json>>{{"id", 1},
                                                                       {"name", nullptr},
                                                                       {"rootAttrs", "x"},
                                                                       {"authorizedUsers", {1}},
                                                                       {"status", json::array()},
                                                                       {"createdAt", 1.5}}) {
    json bad = ToJson(SampleDisk());
    bad[field] = value;
    Result<Disk> r = DecodeDisk(bad);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption) << field;
  }
  json attrs = ToJson(SampleDisk());
  attrs["rootAttrs"]["uid"] = 4294967296;  // > UINT32_MAX
  EXPECT_EQ(DecodeDisk(attrs).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeDiskList(json{{"a", 1}}).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeDiskList(json::array({1})).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeKeyList(json::array()).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeCreateDiskReply(json{{"diskId", "d"}, {"created", "yes"}}).status().code(),
            Status::Code::kCorruption);
  // The message says what the server sent and which field is wrong; a nested record's error is
  // named once, by the innermost record.
  json no_id = ToJson(SampleDisk());
  no_id.erase("id");
  EXPECT_EQ(DecodeDisk(no_id).status().message(),
            "server sent a disk that does not decode: missing required field id");
  json bad_user = ToJson(SampleDisk());
  bad_user["authorizedUsers"][0]["identifier"] = 7;
  EXPECT_EQ(DecodeDisk(bad_user).status().message(),
            "server sent a disk user that does not decode: identifier must be a string");
}

// Checkpoint and branch records are snake_case, as Archil's are.
TEST(WireTest, CheckpointAndBranchRecords) {
  Checkpoint c{"cp-1", "committed", "2026-12-01T00:00:00.000Z"};
  EXPECT_EQ(ToJson(c), (json{{"checkpoint_name", "cp-1"},
                             {"status", "committed"},
                             {"created_at", "2026-12-01T00:00:00.000Z"}}));
  EXPECT_EQ(*DecodeCheckpointList(json::array({ToJson(c)})), std::vector<Checkpoint>{c});
  Branch b{"br-1",      "dsk-00000000000000aa",    "dsk-00000000000000bb", "cp-1",
           "available", "2026-12-01T00:00:00.000Z"};
  json j = ToJson(b);
  for (const char* f : {"branch_name", "filesystem_id", "from_checkpoint_name", "created_at"}) {
    EXPECT_TRUE(j.contains(f)) << f;
  }
  EXPECT_EQ(*DecodeBranchList(json::array({j})), std::vector<Branch>{b});
  j["filesystem_id"] = 7;
  EXPECT_EQ(DecodeBranch(j).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeCheckpoint(json{{"checkpoint_name", "x"}}).status().code(),
            Status::Code::kCorruption);

  auto req = DecodeCreateBranchRequest(R"({"branch_name":"b","from_checkpoint":"cp"})");
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(*req, (CreateBranchRequest{"b", "cp", std::nullopt}));
  req =
      DecodeCreateBranchRequest(R"({"branch_name":"b","from_checkpoint":"cp","from_branch":"x"})");
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(*DecodeCreateBranchRequest(ToJson(*req).dump()), *req);
  for (const char* bad : {R"({})", R"({"branch_name":"b"})", R"({"from_checkpoint":"c"})",
                          R"({"branch_name":1,"from_checkpoint":"c"})",
                          R"({"branch_name":"b","from_checkpoint":"c","from_branch":2})",
                          R"({"branch_name":"b","from_checkpoint":"c","name":"x"})", "[]"}) {
    EXPECT_EQ(DecodeCreateBranchRequest(bad).status().code(), Status::Code::kInvalidArgument)
        << bad;
  }
}

TEST(WireTest, EnvelopesEncodeAndDecode) {
  std::string cursor = "c42";
  Result<Envelope> e = DecodeEnvelope(EncodeOk(json::array({1}), &cursor));
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->success);
  EXPECT_EQ(e->data, json::array({1}));
  EXPECT_EQ(e->next_cursor, "c42");

  std::string last;
  e = DecodeEnvelope(EncodeOk(json::object(), &last));
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->next_cursor.has_value());  // null on the last page

  e = DecodeEnvelope(EncodeError("not_found", "no disk named 'x'"));
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->success);
  EXPECT_EQ(e->error, "no disk named 'x'");
  EXPECT_EQ(e->code, "not_found");

  for (const std::string& bad :
       {std::string(""), std::string("<html>"), std::string("[]"), std::string("{}"),
        std::string(R"({"success":"true"})"), std::string(R"({"success":false})"),
        std::string(R"({"success":false,"error":7})"),
        std::string(R"({"success":true,"nextCursor":5})"), std::string(100000, '['),
        std::string("{\"success\":true,\"data\":\"\xff\"}")}) {
    Result<Envelope> r = DecodeEnvelope(bad);
    ASSERT_FALSE(r.ok()) << bad.substr(0, 40);
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption) << bad.substr(0, 40);
  }
}

}  // namespace
}  // namespace archil::wire
