#include "proto/frame.h"

#include <algorithm>
#include <cstring>

#include "base/coding.h"
#include "base/crc32c.h"

namespace archil::proto {
namespace {

FrameError Error(WireStatus status, std::string message, bool reply = true) {
  return FrameError{status, reply, std::move(message)};
}

}  // namespace

uint32_t FrameCrc(std::string_view header28, std::string_view body) {
  return Crc32cExtend(Crc32c(header28), body.data(), body.size());
}

std::string EncodeHeader(const FrameHeader& h, std::string_view body) {
  std::string out(kMagic, sizeof(kMagic));
  out.push_back(static_cast<char>(kFrameVersion));
  out.push_back(static_cast<char>(h.flags));
  PutFixed16LE(&out, h.type);
  PutFixed64LE(&out, h.request_id);
  PutFixed32LE(&out, static_cast<uint32_t>(body.size()));
  PutFixed32LE(&out, h.payload_len);
  PutFixed16LE(&out, static_cast<uint16_t>(h.status));
  PutFixed16LE(&out, 0);
  PutFixed32LE(&out, FrameCrc(out, body));
  return out;
}

OutFrame::OutFrame(FrameHeader h, std::string_view body, std::string_view payload) {
  h.payload_len = static_cast<uint32_t>(payload.size());
  header_ = EncodeHeader(h, body);
  iov_[0] = {header_.data(), header_.size()};
  iov_[1] = {const_cast<char*>(body.data()), body.size()};
  iov_[2] = {const_cast<char*>(payload.data()), payload.size()};
}

std::string EncodeFrame(FrameHeader h, std::string_view body, std::string_view payload) {
  h.payload_len = static_cast<uint32_t>(payload.size());
  std::string out = EncodeHeader(h, body);
  out.append(body);
  out.append(payload);
  return out;
}

std::optional<FrameError> CheckHeader(std::string_view b, const FrameLimits& limits,
                                      FrameHeader* out) {
  if (std::memcmp(b.data(), kMagic, sizeof(kMagic)) != 0) {
    return Error(WireStatus::kBadFrame, "not an archil client (bad magic)", /*reply=*/false);
  }
  if (static_cast<uint8_t>(b[4]) != kFrameVersion) {
    return Error(
        WireStatus::kUnsupportedVersion,
        "frame version " + std::to_string(static_cast<uint8_t>(b[4])) + " (this side speaks 1)");
  }
  FrameHeader h;
  h.flags = static_cast<uint8_t>(b[5]);
  h.type = DecodeFixed16LE(b.data() + 6);
  h.request_id = DecodeFixed64LE(b.data() + 8);
  h.body_len = DecodeFixed32LE(b.data() + 16);
  h.payload_len = DecodeFixed32LE(b.data() + 20);
  const uint16_t status = DecodeFixed16LE(b.data() + 24);
  const uint16_t reserved = DecodeFixed16LE(b.data() + 26);
  h.crc32c = DecodeFixed32LE(b.data() + 28);
  if ((h.flags & ~kKnownFlags) != 0) return Error(WireStatus::kBadFrame, "reserved flag bits set");
  if (reserved != 0) return Error(WireStatus::kBadFrame, "reserved header field not zero");
  if (!h.is_reply() && status != 0) {
    return Error(WireStatus::kBadFrame, "a request or push with a status");
  }
  if (!IsKnownWireStatus(status)) {
    return Error(WireStatus::kBadFrame, "unknown status " + std::to_string(status));
  }
  h.status = static_cast<WireStatus>(status);
  if (h.body_len > limits.max_body) {
    return Error(WireStatus::kLimitExceeded, "body of " + std::to_string(h.body_len) +
                                                 " bytes, over the limit of " +
                                                 std::to_string(limits.max_body));
  }
  if (h.payload_len > limits.max_payload) {
    return Error(WireStatus::kLimitExceeded, "payload of " + std::to_string(h.payload_len) +
                                                 " bytes, over the limit of " +
                                                 std::to_string(limits.max_payload));
  }
  *out = h;
  return std::nullopt;
}

std::optional<FrameError> CheckCrc(const FrameHeader& h, std::string_view header28,
                                   std::string_view body) {
  if (FrameCrc(header28, body) != h.crc32c) return Error(WireStatus::kBadFrame, "bad frame CRC");
  return std::nullopt;
}

std::optional<WireStatus> CheckPayloadAllowed(const FrameHeader& h) {
  if (h.payload_len == 0) return std::nullopt;
  const bool allowed =
      (h.type == kTypeWrite && !h.is_reply()) || (h.type == kTypeRead && h.is_reply());
  if (allowed) return std::nullopt;
  return WireStatus::kInvalid;
}

void FrameReader::Admit() {
  admitted_ = true;
  frame_.body.clear();
  frame_.body.reserve(frame_.header.body_len);
  frame_.payload.resize(frame_.header.payload_len);
  payload_filled_ = 0;
  if (gated_) (void)Feed({});  // a frame with an empty body (and payload) is complete now
}

size_t FrameReader::Feed(std::string_view bytes) {
  if (error_ || ready_ || awaiting_admission()) return 0;
  size_t used = 0;
  if (!have_header_) {
    const size_t n = std::min(bytes.size(), kHeaderSize - header_buf_.size());
    header_buf_.append(bytes.substr(0, n));
    used += n;
    if (header_buf_.size() < kHeaderSize) return used;
    if (std::optional<FrameError> e = CheckHeader(header_buf_, limits_, &frame_.header)) {
      error_ = std::move(e);
      return used;
    }
    have_header_ = true;
    if (gated_) return used;
    Admit();
  }
  const FrameHeader& h = frame_.header;
  if (!body_checked_) {
    const size_t n = std::min(bytes.size() - used, h.body_len - frame_.body.size());
    frame_.body.append(bytes.substr(used, n));
    used += n;
    if (frame_.body.size() < h.body_len) return used;
    if (std::optional<FrameError> e =
            CheckCrc(h, std::string_view(header_buf_).substr(0, 28), frame_.body)) {
      error_ = std::move(e);
      return used;
    }
    body_checked_ = true;
  }
  const size_t n = std::min(bytes.size() - used, payload_missing());
  std::copy_n(bytes.data() + used, n, frame_.payload.data() + payload_filled_);
  used += n;
  PayloadFilled(n);
  return used;
}

size_t FrameReader::payload_missing() const {
  if (!body_checked_ || ready_) return 0;
  return frame_.header.payload_len - payload_filled_;
}

void FrameReader::PayloadFilled(size_t n) {
  payload_filled_ += n;
  if (body_checked_ && payload_filled_ == frame_.header.payload_len) ready_ = true;
}

Frame FrameReader::Take() {
  Frame out = std::move(frame_);
  frame_ = Frame();
  header_buf_.clear();
  have_header_ = false;
  admitted_ = false;
  body_checked_ = false;
  ready_ = false;
  payload_filled_ = 0;
  return out;
}

}  // namespace archil::proto
