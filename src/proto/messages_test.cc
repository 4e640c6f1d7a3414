#include "proto/messages.h"

#include <gtest/gtest.h>

#include <set>

namespace archil::proto {
namespace {

// The codes and names of protocol.md §5.1, except the reserved COPY_RANGE and the control
// socket's.
TEST(Messages, EveryTypeOfTheTableIsRegisteredOnce) {
  const std::vector<std::pair<uint16_t, std::string_view>> want = {
      {0x0001, "HELLO"},
      {0x0002, "SESSION_CREATE"},
      {0x0003, "SESSION_BIND"},
      {0x0004, "LEASE_RENEW"},
      {0x0005, "RECLAIM_COMPLETE"},
      {0x0006, "PING"},
      {0x0007, "GOODBYE"},
      {0x0101, "LOOKUP"},
      {0x0102, "GETATTR"},
      {0x0103, "SETATTR"},
      {0x0104, "READLINK"},
      {0x0105, "CREATE"},
      {0x0106, "MKDIR"},
      {0x0107, "MKNOD"},
      {0x0108, "SYMLINK"},
      {0x0109, "LINK"},
      {0x010A, "UNLINK"},
      {0x010B, "RMDIR"},
      {0x010C, "RENAME"},
      {0x010D, "READDIR"},
      {0x010E, "OPEN"},
      {0x010F, "RELEASE"},
      {0x0110, "STATFS"},
      {0x0111, "PUT_ATTRS"},
      {0x0112, "INO_GRANT"},
      {0x0201, "READ"},
      {0x0202, "WRITE"},
      {0x0203, "COMMIT"},
      {0x0204, "FALLOCATE"},
      {0x0205, "LSEEK"},
      {0x0301, "GETXATTR"},
      {0x0302, "LISTXATTR"},
      {0x0303, "SETXATTR"},
      {0x0304, "REMOVEXATTR"},
      {0x0401, "LOCK"},
      {0x0402, "LOCK_TEST"},
      {0x0403, "LOCK_CANCEL"},
      {0x0501, "DELEG_ACQUIRE"},
      {0x0502, "DELEG_RETURN"},
      {0x0503, "DELEG_LIST"},
      {0x0601, "CHECKPOINT_CREATE"},
      {0x0F01, "INVALIDATE"},
      {0x0F02, "DELEG_RECALL"},
      {0x0F03, "DELEG_REVOKED"},
      {0x0F04, "LOCK_GRANTED"},
  };
  EXPECT_EQ(MessageTypes().size(), want.size());
  std::set<uint16_t> codes;
  for (const MessageType& t : MessageTypes()) EXPECT_TRUE(codes.insert(t.code).second) << t.name;
  for (auto [code, name] : want) {
    const MessageType* t = FindMessageType(code);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->name, name);
  }
  EXPECT_EQ(FindMessageType(0x0206), nullptr) << "COPY_RANGE is reserved";
  EXPECT_EQ(FindMessageType(0x0000), nullptr);
  // What §5.1 and §12 row 8 say of a few.
  EXPECT_TRUE(FindMessageType(0x0202)->mutating);
  EXPECT_FALSE(FindMessageType(0x0201)->mutating);
  EXPECT_FALSE(FindMessageType(0x0203)->mutating) << "COMMIT carries no Mut";
  EXPECT_TRUE(FindMessageType(0x0006)->pre_auth);
  EXPECT_FALSE(FindMessageType(0x0101)->pre_auth);
  EXPECT_TRUE(FindMessageType(0x0F01)->push);
  EXPECT_TRUE(FindMessageType(0x0007)->push) << "GOODBYE is also a push";
}

FrameHeader Header(uint16_t type, uint8_t flags = 0, WireStatus status = WireStatus::kOk) {
  FrameHeader h;
  h.type = type;
  h.flags = flags;
  h.status = status;
  return h;
}

// The body of protocol.md §3's test vector.
TEST(Messages, ParsesTheDocumentedPing) {
  std::unique_ptr<Message> m;
  ASSERT_EQ(ParseBody(Header(0x0006), std::string("\x08\x2a", 2), &m), WireStatus::kOk);
  auto* ping = dynamic_cast<v1::Ping*>(m.get());
  ASSERT_NE(ping, nullptr);
  EXPECT_EQ(ping->nonce(), 42u);
}

TEST(Messages, RepliesParseAsTheirReplyOrAsAnError) {
  v1::LookupReply ok;
  ok.mutable_attr()->set_ino(7);
  std::unique_ptr<Message> m;
  ASSERT_EQ(ParseBody(Header(0x0101, kFlagReply), ok.SerializeAsString(), &m), WireStatus::kOk);
  ASSERT_NE(dynamic_cast<v1::LookupReply*>(m.get()), nullptr);
  EXPECT_EQ(dynamic_cast<v1::LookupReply*>(m.get())->attr().ino(), 7u);

  v1::ErrorReply err;
  err.set_message("no such entry");
  ASSERT_EQ(
      ParseBody(Header(0x0101, kFlagReply, WireStatus::kNotFound), err.SerializeAsString(), &m),
      WireStatus::kOk);
  ASSERT_NE(dynamic_cast<v1::ErrorReply*>(m.get()), nullptr);
  EXPECT_EQ(dynamic_cast<v1::ErrorReply*>(m.get())->message(), "no such entry");
}

TEST(Messages, UnknownTypesAndBadBodiesAreRefusedWithoutTouchingTheOutput) {
  std::unique_ptr<Message> m;
  EXPECT_EQ(ParseBody(Header(0x0206), "", &m), WireStatus::kUnsupportedType);
  EXPECT_EQ(ParseBody(Header(0x0101), "\xff\xff\xff", &m), WireStatus::kBadMessage);
  // A varint field whose value is cut off, and a length that runs past the body.
  EXPECT_EQ(ParseBody(Header(0x0006), "\x08", &m), WireStatus::kBadMessage);
  EXPECT_EQ(ParseBody(Header(0x0101),
                      std::string("\x12\x05"
                                  "ab",
                                  4),
                      &m),
            WireStatus::kBadMessage);
  EXPECT_EQ(m, nullptr);
}

// proto3 `string` fields (human text and ids we mint) must be UTF-8; a body that breaks that is
// refused, and refused quietly: protobuf's own ERROR log line would let a peer flood the log.
TEST(Messages, InvalidUtf8InAStringFieldIsABadMessageAndLogsNothing) {
  std::unique_ptr<Message> m;
  testing::internal::CaptureStderr();
  // SessionCreate.disk (field 2, a string) = "\xff".
  EXPECT_EQ(ParseBody(Header(0x0002), std::string("\x12\x01\xff", 3), &m), WireStatus::kBadMessage);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// Names are bytes: any byte but none of UTF-8's rules, and unknown fields (a newer peer's) are
// skipped.
TEST(Messages, NamesAreBytesAndUnknownFieldsAreIgnored) {
  v1::Lookup lookup;
  const std::string name("\xff\xfe\x80not utf-8", 12);
  lookup.set_name(name);
  std::string body = lookup.SerializeAsString();
  body += std::string("\xf8\x07\x01", 3);  // field 127, varint 1: not in this version
  std::unique_ptr<Message> m;
  ASSERT_EQ(ParseBody(Header(0x0101), body, &m), WireStatus::kOk);
  EXPECT_EQ(dynamic_cast<v1::Lookup*>(m.get())->name(), name);
}

}  // namespace
}  // namespace archil::proto
