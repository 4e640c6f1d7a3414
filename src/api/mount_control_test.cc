#include "api/mount_control.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace archil {
namespace {

TEST(MountControlTest, RequestsAndRepliesRoundTrip) {
  Result<ControlRequest> req =
      DecodeControlRequest(EncodeControlRequest({"checkpoint_create", "cp-1", ""}));
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->op, "checkpoint_create");
  EXPECT_EQ(req->name, "cp-1");

  ControlReply ok{Status::Ok(), "cp-1", "committed", 123, 7, ""};
  Result<ControlReply> r = DecodeControlReply(EncodeControlReply(ok));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->status.ok());
  EXPECT_EQ(r->checkpoint_name, "cp-1");
  EXPECT_EQ(r->created_at_ns, 123);
  EXPECT_EQ(r->epoch, 7u);

  ControlReply err;
  err.status = Status::Errno(EEXIST, "checkpoint 'cp-1' exists");
  r = DecodeControlReply(EncodeControlReply(err));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ErrnoFor(r->status), EEXIST);
  EXPECT_EQ(r->status.message(), "checkpoint 'cp-1' exists");
}

TEST(MountControlTest, MetricsRequestsAndRepliesRoundTrip) {
  ControlRequest ask;
  ask.op = "metrics";
  ask.format = "json";
  Result<ControlRequest> req = DecodeControlRequest(EncodeControlRequest(ask));
  ASSERT_TRUE(req.ok()) << req.status().ToString();
  EXPECT_EQ(req->op, "metrics");
  EXPECT_EQ(req->format, "json");
  ControlReply m;
  m.metrics = "# TYPE a counter\na 1\n";
  Result<ControlReply> r = DecodeControlReply(EncodeControlReply(m));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->status.ok());
  EXPECT_EQ(r->metrics, m.metrics);
  for (const char* bad : {R"({"v":1,"op":"metrics"})", R"({"v":1,"op":"metrics","format":"xml"})",
                          R"({"v":1,"op":"metrics","format":1})"}) {
    EXPECT_EQ(DecodeControlRequest(bad).status().code(), Status::Code::kInvalidArgument) << bad;
  }
  for (const char* bad : {R"({"ok":true,"metrics":""})", R"({"ok":true,"metrics":3})"}) {
    EXPECT_EQ(DecodeControlReply(bad).status().code(), Status::Code::kCorruption) << bad;
  }
}

TEST(MountControlTest, BadInputIsRefused) {
  for (const char* bad :
       {"", "x", "[]", R"({"v":1,"op":"checkpoint_create"})",
        R"({"v":2,"op":"checkpoint_create","name":"a"})",
        R"({"op":"checkpoint_create","name":"a"})", R"({"v":1,"op":"format_disk","name":"a"})",
        R"({"v":1,"op":"checkpoint_create","name":"a","x":1})",
        R"({"v":1,"op":"checkpoint_create","name":7})"}) {
    EXPECT_EQ(DecodeControlRequest(bad).status().code(), Status::Code::kInvalidArgument) << bad;
  }
  for (const char* bad : {"", "{", R"({"ok":"yes"})", R"({"ok":false})",
                          R"({"ok":false,"errno":"x","error":"e"})", R"({"ok":true})",
                          R"({"ok":true,"checkpoint_name":"a","status":"committed",)"
                          R"("created_at_ns":1,"epoch":-1})"}) {
    EXPECT_EQ(DecodeControlReply(bad).status().code(), Status::Code::kCorruption) << bad;
  }
  // An errno out of range is still an error, never success.
  Result<ControlReply> r = DecodeControlReply(R"({"ok":false,"errno":99999,"error":"e"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ErrnoFor(r->status), EIO);
}

TEST(MountControlTest, SocketPathsFitAndDiffer) {
  std::string a = MountControlPath("/run/archil", "/mnt/a");
  std::string b = MountControlPath("/run/archil", "/mnt/b");
  EXPECT_NE(a, b);
  EXPECT_EQ(a, MountControlPath("/run/archil", "/mnt/a"));
  EXPECT_LT(MountControlPath("/run/archil", "/" + std::string(4000, 'x')).size(), 108u);
}

TEST(MountControlTest, LongSocketPathsGoThroughTheDirectory) {
  Result<UnixAddress> a = UnixAddress::For("/tmp/" + std::string(200, 'd') + "/x.sock");
  EXPECT_FALSE(a.ok());  // no such directory to open
  Result<UnixAddress> b = UnixAddress::For("/tmp" + std::string(150, '/') + "x.sock");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(std::string(reinterpret_cast<const sockaddr_un*>(b->addr())->sun_path)
                .rfind("/proc/self/fd/", 0),
            0u);
}

}  // namespace
}  // namespace archil
