// Fuzzes the decoders of what the object store hands back at recovery: log objects
// (src/tier/log_object.h) and the log records in them (src/engine/records/log_record.h). A bucket
// can hold any bytes. Each decoder returns a value or Corruption, never crashes; what it accepts
// encodes back to the same bytes (the formats have one encoding), and byte 0 of the input picks
// the decoder.
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/records/log_record.h"
#include "tier/log_object.h"

namespace archil::tier {
namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    Result<LogObject> o = DecodeLogObject(body);
    if (o.ok()) {
      Check(!o->records.empty());
      Check(EncodeLogObject(*o) == body);
    } else {
      Check(o.status().code() == Status::Code::kCorruption);
    }
  } else {
    // Records of disk 1 (a record of another disk is refused like any other mismatch).
    Result<engine::LogRecord> r = engine::DecodeLogRecord(body, engine::DiskNo(1));
    if (r.ok()) {
      Check(engine::EncodeLogRecord(*r) == body);
    } else {
      Check(r.status().code() == Status::Code::kCorruption);
    }
  }
}

}  // namespace
}  // namespace archil::tier

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archil::tier::Run(data, size);
  return 0;
}
