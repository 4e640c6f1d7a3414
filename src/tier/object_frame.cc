#include "tier/object_frame.h"

#include "base/coding.h"
#include "base/crc32c.h"

namespace archil::tier {

Status CheckFrame(std::string_view v, std::string_view magic, std::string_view end_magic,
                  size_t header_size, std::string_view what) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption(std::string(what) + ": " + why);
  };
  if (v.size() < header_size + kFrameTrailer) {
    return bad(std::to_string(v.size()) + " bytes, too short");
  }
  if (v.substr(0, 8) != magic) return bad("bad magic");
  if (v.substr(v.size() - 8) != end_magic) return bad("bad end magic (torn?)");
  const size_t crc_at = header_size - 4;
  if (DecodeFixed32LE(v.data() + crc_at) != Crc32c(v.data(), crc_at)) {
    return bad("header CRC mismatch");
  }
  const size_t end = v.size() - kFrameTrailer;
  if (DecodeFixed32LE(v.data() + end) != v.size()) return bad("length field mismatch");
  if (DecodeFixed32LE(v.data() + end + 4) != Crc32c(v.data(), end + 4)) {
    return bad("object CRC mismatch");
  }
  if (DecodeFixed16LE(v.data() + 8) != 1) return bad("fmt unsupported");
  if (DecodeFixed16LE(v.data() + 10) != 0) return bad("reserved bytes set");
  return Status::Ok();
}

void FinishFrame(std::string* v, size_t header_size, std::string_view end_magic) {
  const size_t crc_at = header_size - 4;
  std::string crc;
  PutFixed32LE(&crc, Crc32c(v->data(), crc_at));
  v->replace(crc_at, 4, crc);
  PutFixed32LE(v, static_cast<uint32_t>(v->size() + kFrameTrailer));
  PutFixed32LE(v, Crc32c(*v));
  v->append(end_magic);
}

}  // namespace archil::tier
