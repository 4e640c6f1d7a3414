#include "proto/frame.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "base/crc32c.h"
#include "base/test_seed.h"

namespace archil::proto {
namespace {

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

FrameHeader Ping(uint64_t id) {
  FrameHeader h;
  h.type = 0x0006;
  h.request_id = id;
  return h;
}

// The test vector of protocol.md §3: a PING request, request_id 1, body Ping{nonce: 42}.
TEST(Frame, MatchesTheDocumentedTestVector) {
  const std::string frame = EncodeFrame(Ping(1), std::string("\x08\x2a", 2));
  EXPECT_EQ(Hex(frame),
            "41 52 43 44 01 00 06 00 01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 "
            "15 90 79 d5 08 2a");
}

// The frame CRC is the standard CRC-32C: over no header bytes, "123456789" gives the check value.
TEST(Frame, AnOutFrameIsTheEncodedFrameInThreePieces) {
  FrameHeader h;
  h.type = 0x0302;
  h.request_id = 77;
  h.payload_len = 999;  // replaced by the payload's size
  const std::string body = "body bytes", payload(5000, 'p');
  OutFrame out(h, body, payload);
  std::string joined;
  for (const iovec& v : out.pieces()) joined.append(static_cast<char*>(v.iov_base), v.iov_len);
  EXPECT_EQ(joined, EncodeFrame(h, body, payload));
  EXPECT_EQ(out.pieces()[2].iov_base, payload.data()) << "the payload is not copied";
  OutFrame empty(h, "", "");
  EXPECT_EQ(empty.pieces()[1].iov_len + empty.pieces()[2].iov_len, 0u);
}

TEST(Frame, CrcIsTheStandardCrc32c) {
  EXPECT_EQ(FrameCrc("", "123456789"), 0xE3069283u);
  EXPECT_EQ(FrameCrc("1234", "56789"), 0xE3069283u);
}

std::optional<FrameError> Check(const std::string& bytes, FrameLimits limits = kDefaultLimits) {
  FrameHeader h;
  return CheckHeader(std::string_view(bytes).substr(0, kHeaderSize), limits, &h);
}

TEST(Frame, HeaderChecksRunInTheDocumentedOrder) {
  const std::string good = EncodeFrame(Ping(7), "body");
  FrameHeader h;
  ASSERT_FALSE(CheckHeader(std::string_view(good).substr(0, 32), kDefaultLimits, &h));
  EXPECT_EQ(h.request_id, 7u);
  EXPECT_EQ(h.body_len, 4u);

  // Each later corruption is hidden by an earlier one.
  std::string bad = good;
  bad[0] = 0x16;  // a TLS ClientHello
  bad[4] = 2;     // and a future frame version
  bad[26] = 1;    // and a reserved field
  auto e = Check(bad);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, WireStatus::kBadFrame);
  EXPECT_FALSE(e->reply) << "no reply to a peer that is not an archil client";
  bad[0] = 'A';
  e = Check(bad);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, WireStatus::kUnsupportedVersion);
  EXPECT_TRUE(e->reply);
  bad[4] = 1;
  e = Check(bad);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, WireStatus::kBadFrame);
  EXPECT_NE(e->message.find("reserved"), std::string::npos);
}

TEST(Frame, ReservedBitsStatusesAndLimitsAreChecked) {
  FrameHeader h = Ping(1);
  h.flags = 0x10;
  EXPECT_EQ(Check(EncodeFrame(h, ""))->status, WireStatus::kBadFrame);
  h = Ping(1);
  h.status = WireStatus::kNotFound;  // a request with a status
  EXPECT_EQ(Check(EncodeFrame(h, ""))->status, WireStatus::kBadFrame);
  h.flags = kFlagReply;  // fine on a reply
  EXPECT_FALSE(Check(EncodeFrame(h, "")));
  h.status = static_cast<WireStatus>(99);  // not in the table
  EXPECT_EQ(Check(EncodeFrame(h, ""))->status, WireStatus::kBadFrame);

  // A header claiming 4 GiB is refused from its 32 bytes: nothing else is read or allocated.
  std::string huge = EncodeHeader(Ping(1), "");
  huge[16] = huge[17] = huge[18] = huge[19] = '\xff';
  EXPECT_EQ(Check(huge)->status, WireStatus::kLimitExceeded);
  // Before authentication: 64 KiB of body, no payload.
  FrameHeader w;
  w.type = kTypeWrite;
  w.request_id = 2;
  EXPECT_EQ(Check(EncodeFrame(w, "x", "data"), kPreAuthLimits)->status, WireStatus::kLimitExceeded);
  EXPECT_FALSE(Check(EncodeFrame(w, "x", "data"), kDefaultLimits));
  EXPECT_FALSE(Check(EncodeFrame(w, std::string(64 << 10, 'b')), kPreAuthLimits));
  EXPECT_EQ(Check(EncodeFrame(w, std::string((64 << 10) + 1, 'b')), kPreAuthLimits)->status,
            WireStatus::kLimitExceeded);
}

TEST(Frame, PayloadOnlyOnWriteRequestsAndReadReplies) {
  FrameHeader h;
  h.payload_len = 1;
  h.type = kTypeWrite;
  EXPECT_FALSE(CheckPayloadAllowed(h));
  h.flags = kFlagReply;
  EXPECT_EQ(CheckPayloadAllowed(h), WireStatus::kInvalid);
  h.type = kTypeRead;
  EXPECT_FALSE(CheckPayloadAllowed(h));
  h.flags = 0;
  EXPECT_EQ(CheckPayloadAllowed(h), WireStatus::kInvalid);
  h.type = 0x0006;
  EXPECT_EQ(CheckPayloadAllowed(h), WireStatus::kInvalid);
  h.payload_len = 0;
  EXPECT_FALSE(CheckPayloadAllowed(h));
}

std::vector<Frame> SomeFrames() {
  std::vector<Frame> frames;
  for (uint64_t i = 0; i < 6; ++i) {
    Frame f;
    f.header = Ping(i + 1);
    f.body = std::string(i * 37, static_cast<char>('a' + i));
    if (i % 2 == 1) {
      f.header.type = kTypeWrite;
      f.payload = std::string(i * 1000, static_cast<char>('p' + i));
    }
    frames.push_back(f);
  }
  return frames;
}

// Reads `stream` split into pieces of the given sizes (cycled); returns the frames.
std::vector<Frame> ReadAll(std::string_view stream, const std::vector<size_t>& pieces,
                           FrameReader* reader) {
  std::vector<Frame> out;
  size_t k = 0;
  while (!stream.empty()) {
    std::string_view piece = stream.substr(0, pieces[k++ % pieces.size()]);
    while (!piece.empty()) {
      const size_t used = reader->Feed(piece);
      if (reader->error()) return out;
      piece.remove_prefix(used);
      stream.remove_prefix(used);
      if (reader->ready()) out.push_back(reader->Take());
    }
  }
  if (reader->ready()) out.push_back(reader->Take());
  return out;
}

TEST(FrameReader, AssemblesFramesHoweverTheStreamIsSplit) {
  std::string stream;
  std::vector<Frame> want = SomeFrames();
  for (const Frame& f : want) stream += EncodeFrame(f.header, f.body, f.payload);
  const unsigned seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::vector<size_t>> splits = {{1}, {2}, {31}, {32}, {33}, {stream.size()}};
  for (int i = 0; i < 50; ++i) {
    std::vector<size_t> s;
    for (int j = 0; j < 8; ++j) s.push_back(1 + rng() % 3000);
    splits.push_back(s);
  }
  for (const auto& split : splits) {
    FrameReader reader(kDefaultLimits);
    std::vector<Frame> got = ReadAll(stream, split, &reader);
    ASSERT_FALSE(reader.error()) << reader.error()->message;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].header.request_id, want[i].header.request_id);
      EXPECT_EQ(got[i].header.type, want[i].header.type);
      EXPECT_EQ(got[i].body, want[i].body);
      EXPECT_EQ(got[i].payload, want[i].payload);
    }
    EXPECT_TRUE(reader.at_boundary());
  }
}

TEST(FrameReader, StopsAtTheFirstBadFrameAndConsumesNothingMore) {
  std::string stream = EncodeFrame(Ping(1), "ok");
  std::string bad = EncodeFrame(Ping(2), "corrupt");
  bad[kHeaderSize + 1] ^= 1;  // a body byte: only the CRC notices
  stream += bad + EncodeFrame(Ping(3), "never read");
  FrameReader reader(kDefaultLimits);
  std::vector<Frame> got = ReadAll(stream, {5}, &reader);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(reader.error());
  EXPECT_EQ(reader.error()->status, WireStatus::kBadFrame);
  EXPECT_EQ(reader.Feed("more"), 0u);
  EXPECT_FALSE(reader.at_boundary());
}

TEST(FrameReader, KnowsWhetherAStreamEndedMidFrame) {
  FrameReader reader(kDefaultLimits);
  EXPECT_TRUE(reader.at_boundary());
  std::string f = EncodeFrame(Ping(1), "abc");
  EXPECT_EQ(reader.Feed(std::string_view(f).substr(0, 10)), 10u);
  EXPECT_FALSE(reader.at_boundary());
  EXPECT_EQ(reader.Feed(std::string_view(f).substr(10)), f.size() - 10);
  ASSERT_TRUE(reader.ready());
  EXPECT_EQ(reader.Feed("x"), 0u) << "nothing is consumed past a complete frame";
  reader.Take();
  EXPECT_TRUE(reader.at_boundary());
}

// A gated reader stops after each good header and allocates nothing until the frame is
// admitted; it then reads the frame as an open reader would.
TEST(FrameReader, AGatedReaderWaitsForEachFrameToBeAdmitted) {
  FrameHeader w;
  w.type = kTypeWrite;
  w.request_id = 4;
  const std::string stream = EncodeFrame(w, "body", std::string(5000, 'p')) + EncodeFrame(Ping(5), "x");
  FrameReader r(kDefaultLimits, FrameReader::Gate::kAdmitEachFrame);
  EXPECT_FALSE(r.awaiting_admission());
  std::string_view rest(stream);
  rest.remove_prefix(r.Feed(rest));
  ASSERT_TRUE(r.awaiting_admission());
  EXPECT_EQ(rest.size(), stream.size() - kHeaderSize) << "only the header is taken";
  EXPECT_EQ(r.header().payload_len, 5000u);
  EXPECT_EQ(r.payload_missing(), 0u);
  EXPECT_EQ(r.Feed(rest), 0u) << "nothing more before Admit";
  EXPECT_FALSE(r.at_boundary());
  r.Admit();
  rest.remove_prefix(r.Feed(rest));
  ASSERT_TRUE(r.ready());
  Frame f = r.Take();
  EXPECT_EQ(f.payload, std::string(5000, 'p'));
  rest.remove_prefix(r.Feed(rest));
  ASSERT_TRUE(r.awaiting_admission());
  EXPECT_EQ(r.header().request_id, 5u);
  r.Admit();
  rest.remove_prefix(r.Feed(rest));
  ASSERT_TRUE(r.ready());
  EXPECT_EQ(r.Take().body, "x");
  EXPECT_TRUE(rest.empty());
  EXPECT_TRUE(r.at_boundary());
  // A frame with neither body nor payload is complete once admitted, with no byte more to feed.
  const std::string empty = EncodeFrame(Ping(6), "");
  EXPECT_EQ(r.Feed(empty), kHeaderSize);
  ASSERT_TRUE(r.awaiting_admission());
  r.Admit();
  ASSERT_TRUE(r.ready());
  EXPECT_EQ(r.Take().header.request_id, 6u);
}

// A large payload can be received straight into the frame (no copy through Feed), in pieces,
// and the reader then goes on with the bytes of the next frame as usual.
TEST(FrameReader, PayloadsCanBeFilledInPlace) {
  FrameHeader w;
  w.type = kTypeWrite;
  w.request_id = 9;
  const std::string payload(100000, 'p');
  const std::string first = EncodeFrame(w, "body", payload);
  const std::string second = EncodeFrame(Ping(10), "");
  FrameReader r(kDefaultLimits);
  EXPECT_EQ(r.payload_missing(), 0u);
  const size_t head = kHeaderSize + 4 + 10;  // header, body and ten payload bytes
  ASSERT_EQ(r.Feed(std::string_view(first).substr(0, head)), head);
  ASSERT_EQ(r.payload_missing(), payload.size() - 10);
  size_t at = head;
  while (r.payload_missing() > 0) {
    const size_t n = std::min<size_t>(r.payload_missing(), 30000);
    std::copy_n(first.data() + at, n, r.payload_tail());
    r.PayloadFilled(n);
    at += n;
  }
  ASSERT_TRUE(r.ready());
  EXPECT_EQ(r.Feed(second), 0u);  // nothing is taken while a frame waits
  Frame f = r.Take();
  EXPECT_EQ(f.header.request_id, 9u);
  EXPECT_EQ(f.body, "body");
  EXPECT_EQ(f.payload, payload);
  ASSERT_EQ(r.Feed(second), second.size());
  ASSERT_TRUE(r.ready());
  EXPECT_EQ(r.Take().header.request_id, 10u);
}

TEST(FrameReader, NewLimitsApplyFromTheNextHeader) {
  FrameHeader w;
  w.type = kTypeWrite;
  w.request_id = 9;
  const std::string frame = EncodeFrame(w, "b", std::string(4096, 'd'));
  FrameReader before(kPreAuthLimits);
  before.Feed(frame);
  ASSERT_TRUE(before.error());
  EXPECT_EQ(before.error()->status, WireStatus::kLimitExceeded);
  FrameReader after(kPreAuthLimits);
  after.set_limits(kDefaultLimits);
  EXPECT_EQ(after.Feed(frame), frame.size());
  EXPECT_TRUE(after.ready());
}

}  // namespace
}  // namespace archil::proto
