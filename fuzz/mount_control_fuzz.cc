// Fuzzes the mount control socket's decoders (api/mount_control.h): what a local process sends
// the mount daemon, and what the CLI reads back. Neither may crash; a request that decodes is a
// known op, and a reply that decodes survives a re-encode unchanged.
//
// Input: first byte even: a request line; odd: a reply line.
#include <cstdint>
#include <string_view>

#include "api/mount_control.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    archil::Result<archil::ControlRequest> r = archil::DecodeControlRequest(line);
    if (!r.ok()) {
      if (r.status().code() != archil::Status::Code::kInvalidArgument) __builtin_trap();
      return 0;
    }
    if (r->op != "checkpoint_create") __builtin_trap();
    archil::Result<archil::ControlRequest> again =
        archil::DecodeControlRequest(archil::EncodeControlRequest(*r));
    if (!again.ok() || again->name != r->name) __builtin_trap();
    return 0;
  }
  archil::Result<archil::ControlReply> r = archil::DecodeControlReply(line);
  if (!r.ok()) {
    if (r.status().code() != archil::Status::Code::kCorruption) __builtin_trap();
    return 0;
  }
  archil::Result<archil::ControlReply> again =
      archil::DecodeControlReply(archil::EncodeControlReply(*r));
  if (!again.ok() || again->status.ok() != r->status.ok() ||
      again->checkpoint_name != r->checkpoint_name || again->epoch != r->epoch ||
      again->created_at_ns != r->created_at_ns) {
    __builtin_trap();
  }
  return 0;
}
