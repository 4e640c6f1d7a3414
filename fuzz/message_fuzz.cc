// Fuzzes the parse of the disk protocol's message bodies (docs/protocol.md §5, §12 rows 9 and 11):
// any type code, request or reply, any status, any body bytes. The parse must never crash; a body
// that parses must serialize to a canonical form that parses again to the same canonical bytes
// (the round-trip property of §12), and a failed parse must leave the output untouched. A request
// that parses then goes through ValidateRequest (row 12), with the rest of the body as its
// payload: it must answer, and give a reason exactly when it refuses.
//
// Input: bytes 0-1 the type (little-endian), byte 2 bit 0 reply and bit 1 error status, then the
// body.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "proto/messages.h"
#include "proto/validate.h"

namespace archil::proto {
namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void Run(const uint8_t* data, size_t size) {
  if (size < 3) return;
  FrameHeader h;
  h.type = static_cast<uint16_t>(data[0] | (data[1] << 8));
  // Small type codes are rare in random input: also try the registered ones.
  if (FindMessageType(h.type) == nullptr && !MessageTypes().empty()) {
    h.type = MessageTypes()[h.type % MessageTypes().size()].code;
  }
  h.flags = (data[2] & 1) ? kFlagReply : 0;
  h.status = (h.flags != 0 && (data[2] & 2)) ? WireStatus::kNotFound : WireStatus::kOk;
  std::string_view body(reinterpret_cast<const char*>(data) + 3, size - 3);
  std::unique_ptr<Message> m;
  const WireStatus s = ParseBody(h, body, &m);
  if (s != WireStatus::kOk) {
    Check(s == WireStatus::kBadMessage && m == nullptr);
    return;
  }
  Check(m != nullptr);
  const std::string canonical = m->SerializeAsString();
  std::unique_ptr<Message> again;
  Check(ParseBody(h, canonical, &again) == WireStatus::kOk);
  Check(again->SerializeAsString() == canonical);
  if (!h.is_reply()) {
    std::string why;
    ValidationContext ctx;
    ctx.posix_acl = (data[2] & 4) != 0;
    const WireStatus v = ValidateRequest(h, *m, body.substr(body.size() / 2), ctx, &why);
    Check(IsKnownWireStatus(static_cast<uint16_t>(v)));
    Check((v == WireStatus::kOk) == why.empty());
  }
}

}  // namespace
}  // namespace archil::proto

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archil::proto::Run(data, size);
  return 0;
}
