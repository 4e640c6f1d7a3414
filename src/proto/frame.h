// Frames of the disk protocol (docs/protocol.md §3, §12): the 32-byte header, the frame-level
// checks in their documented order, and a stream reader that assembles frames from bytes however
// they were split. Pure: no I/O, and memory bounded by the limits before anything is allocated.
//
//   0       4   5   6     8             16          20            24     26     28      32
//   | magic |ver|flg| type | request_id  | body_len  | payload_len | status| rsvd | crc32c |
//   then body_len bytes of body (protobuf), then payload_len bytes of payload.
//
// Integers are little-endian. crc32c covers header bytes [0, 28) and then the body; the payload
// carries its own CRC in the body.
//
// Thread-safety: functions are pure; a FrameReader belongs to one connection's reader.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "proto/wire_status.h"

namespace archil::proto {

inline constexpr size_t kHeaderSize = 32;
inline constexpr char kMagic[4] = {'A', 'R', 'C', 'D'};
inline constexpr uint8_t kFrameVersion = 1;

// Header flag bits; bits 4-7 must be 0.
inline constexpr uint8_t kFlagReply = 1;         // answers request_id
inline constexpr uint8_t kFlagServerOrigin = 2;  // request_id is in the server's id space
inline constexpr uint8_t kFlagReplayed = 4;      // the reply came from the reply cache
inline constexpr uint8_t kFlagSpaceLow = 8;      // server above its admission watermark
inline constexpr uint8_t kKnownFlags = 0x0f;

// Message types that may carry a payload (protocol.md §5.1): a WRITE request, a READ reply.
inline constexpr uint16_t kTypeRead = 0x0201;
inline constexpr uint16_t kTypeWrite = 0x0202;

struct FrameHeader {
  uint8_t flags = 0;
  uint16_t type = 0;
  uint64_t request_id = 0;
  uint32_t body_len = 0;
  uint32_t payload_len = 0;
  WireStatus status = WireStatus::kOk;
  uint32_t crc32c = 0;  // as read; the encoder computes it

  bool is_reply() const { return (flags & kFlagReply) != 0; }
  bool operator==(const FrameHeader&) const = default;
};

// The largest body and payload a connection accepts (protocol.md §12).
struct FrameLimits {
  uint32_t max_body;
  uint32_t max_payload;
};
inline constexpr FrameLimits kPreAuthLimits{64 << 10, 0};         // until the session is bound
inline constexpr FrameLimits kDefaultLimits{256 << 10, 4 << 20};  // negotiated defaults
// The body a server lets a list reply (READDIR's entries) grow to: the default body limit less
// 1 KiB for the fields around the list. Every client accepts kDefaultLimits in replies.
inline constexpr size_t kReplyBodyBudget = kDefaultLimits.max_body - 1024;

// A frame-level failure (protocol.md §12 rows 1-6). The byte stream can no longer be trusted: the
// connection closes, after a reply with `status` when `reply` is set (never for a bad magic: the
// peer is not an archil client).
struct FrameError {
  WireStatus status = WireStatus::kBadFrame;
  bool reply = true;
  std::string message;
};

// The 32 header bytes of a frame with this header and body; crc32c is computed (h.crc32c is
// ignored), body_len is the body's size. REQUIRES: body and h.payload_len fit in u32.
std::string EncodeHeader(const FrameHeader& h, std::string_view body);
// A frame ready for one gathered send (net::Stream::SendAll): its encoded header, then body and
// payload where they are, not copied; payload_len is the payload's size. The views must outlive
// it.
class OutFrame {
 public:
  OutFrame(FrameHeader h, std::string_view body, std::string_view payload);
  OutFrame(const OutFrame&) = delete;  // the pieces point into it
  OutFrame& operator=(const OutFrame&) = delete;
  std::span<iovec> pieces() { return iov_; }

 private:
  std::string header_;
  iovec iov_[3];
};
// Header, body and payload in one buffer (tests, small frames); payload_len is the payload's size.
std::string EncodeFrame(FrameHeader h, std::string_view body, std::string_view payload = {});
// The CRC a header with these first 28 bytes and this body must carry.
uint32_t FrameCrc(std::string_view header28, std::string_view body);

// Checks 2-5 of protocol.md §12 on 32 header bytes, in that order: magic, frame version, reserved
// bits and fields (status 0 unless a reply; status a known value), body and payload lengths
// within `limits`. The CRC (check 6) needs the body: CheckCrc.
// REQUIRES: bytes.size() == kHeaderSize.
std::optional<FrameError> CheckHeader(std::string_view bytes, const FrameLimits& limits,
                                      FrameHeader* out);
// Check 6: the header's crc32c over its first 28 bytes and the body.
std::optional<FrameError> CheckCrc(const FrameHeader& h, std::string_view header28,
                                   std::string_view body);
// Check 10 (message level: the connection stays): a payload only on a WRITE request or a READ
// reply. kInvalid when not allowed.
std::optional<WireStatus> CheckPayloadAllowed(const FrameHeader& h);

struct Frame {
  FrameHeader header;
  std::string body;
  std::string payload;
};

// Assembles frames from a byte stream. Feed consumes bytes only up to the end of the frame being
// read, so the reader never holds more than one frame (at most 32 + max_body + max_payload bytes,
// allocated only after its header passed CheckHeader); the caller keeps the rest for the next one.
//
// A gated reader (the server's) stops after each header that passed its checks, before it
// allocates anything for the frame: the owner decides whether the frame's bytes fit its budget
// and calls Admit() (until then Feed consumes nothing), or leaves the frame waiting.
class FrameReader {
 public:
  enum class Gate { kOpen, kAdmitEachFrame };
  explicit FrameReader(FrameLimits limits, Gate gate = Gate::kOpen)
      : limits_(limits), gated_(gate == Gate::kAdmitEachFrame) {}

  // Applies to frames whose header has not been read yet (after authentication).
  void set_limits(FrameLimits limits) { limits_ = limits; }

  // Consumes a prefix of `bytes` and returns its length: 0 once a frame is complete (take it with
  // Take) or after an error.
  size_t Feed(std::string_view bytes);
  // The error that stopped the stream, if any; every later Feed consumes nothing.
  const std::optional<FrameError>& error() const { return error_; }
  // True when a complete frame waits.
  bool ready() const { return ready_; }
  // The complete frame; the reader then starts on the next. REQUIRES: ready().
  Frame Take();
  // Bytes of the current frame's payload not received yet; 0 unless the header and body are in
  // and checked. A reader may receive them from its socket straight into payload_tail() and then
  // call PayloadFilled (sparing a copy of large payloads), or Feed them as any other bytes.
  size_t payload_missing() const;
  // REQUIRES: payload_missing() > 0. Where the next payload byte goes.
  char* payload_tail() { return frame_.payload.data() + payload_filled_; }
  // `n` bytes were written at payload_tail(). REQUIRES: n <= payload_missing().
  void PayloadFilled(size_t n);
  // A gated reader: the header of the next frame has passed its checks and waits for Admit().
  bool awaiting_admission() const { return have_header_ && !admitted_; }
  // The header read so far. REQUIRES: awaiting_admission(), or a frame being read.
  const FrameHeader& header() const { return frame_.header; }
  // Lets the waiting frame in: its buffers are allocated, and Feed goes on.
  // REQUIRES: awaiting_admission().
  void Admit();
  // True between frames: a connection closed here lost nothing mid-frame (protocol.md §12 row 1).
  bool at_boundary() const { return header_buf_.empty() && !have_header_ && !ready_; }

 private:
  FrameLimits limits_;
  const bool gated_;
  std::string header_buf_;
  bool have_header_ = false;   // header_buf_ holds a header that passed CheckHeader
  bool admitted_ = false;      // its buffers are allocated (at once unless gated_)
  bool body_checked_ = false;  // the body is complete and its CRC matched
  bool ready_ = false;
  size_t payload_filled_ = 0;  // bytes of frame_.payload (sized at the header) received
  Frame frame_;
  std::optional<FrameError> error_;
};

}  // namespace archil::proto
