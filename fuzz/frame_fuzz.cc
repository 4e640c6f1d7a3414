// Fuzzes the disk protocol's frame reader (docs/protocol.md §3, §12): arbitrary bytes, fed in
// pieces whose sizes come from the input, under pre-auth or default limits. The reader must never
// crash, never hold a frame larger than its limits, consume nothing after an error or past a
// complete frame, and every frame it returns must re-encode to exactly the bytes it was read from.
//
// A gated reader (bit 1: the server's) must stop at every good header, allocate nothing until
// admitted, and read the same frames once each is admitted.
//
// Input: byte 0 picks the limits (bit 0), the gate (bit 1) and the piece sizes (the rest); then
// the stream.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/frame.h"

namespace archil::proto {
namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const FrameLimits limits = (data[0] & 1) ? kDefaultLimits : kPreAuthLimits;
  const bool gated = (data[0] & 2) != 0;
  const size_t piece = 1 + (data[0] >> 2) * 7;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  FrameReader reader(limits, gated ? FrameReader::Gate::kAdmitEachFrame : FrameReader::Gate::kOpen);
  size_t frame_start = 0, pos = 0;
  while (pos < stream.size()) {
    std::string_view chunk = stream.substr(pos, piece);
    if (reader.awaiting_admission()) {
      Check(gated && reader.payload_missing() == 0 && reader.Feed(chunk) == 0);
      Check(reader.header().body_len <= limits.max_body &&
            reader.header().payload_len <= limits.max_payload);
      reader.Admit();
    }
    const size_t used = reader.Feed(chunk);
    Check(used <= chunk.size());
    pos += used;
    if (reader.error()) {
      Check(reader.Feed(stream.substr(pos)) == 0);
      return;
    }
    if (reader.ready()) {
      Check(reader.Feed("x") == 0);
      Frame f = reader.Take();
      Check(f.body.size() <= limits.max_body && f.payload.size() <= limits.max_payload);
      Check(f.header.body_len == f.body.size() && f.header.payload_len == f.payload.size());
      const std::string again = EncodeFrame(f.header, f.body, f.payload);
      Check(again == stream.substr(frame_start, pos - frame_start));
      frame_start = pos;
      Check(reader.at_boundary());
    } else if (used == 0 && !reader.awaiting_admission()) {
      __builtin_trap();  // neither progress, nor a frame, nor an error
    }
  }
}

}  // namespace
}  // namespace archil::proto

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archil::proto::Run(data, size);
  return 0;
}
