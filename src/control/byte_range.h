// The Range header of a share-link GET (docs/api.md "Share links"), RFC 9110 §14: which bytes of
// a body of known size to send.
//
// One range is honoured: "bytes=a-b", "bytes=a-" and "bytes=-n". Anything else is answered with
// the whole body, as the RFC lets a server do: no header, another unit, a malformed value, a
// range whose last byte is before its first, and several ranges (no multipart/byteranges).
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace archil {

struct ByteRange {
  enum class Kind {
    kWhole,          // 200 with the whole body
    kPartial,        // 206 with [offset, offset + length)
    kUnsatisfiable,  // 416 with "Content-Range: bytes */size"
  };
  Kind kind = Kind::kWhole;
  uint64_t offset = 0;
  uint64_t length = 0;  // kWhole: the size
  bool operator==(const ByteRange&) const = default;
};

// What `header` (the Range header's value, "" when absent) asks of a body of `size` bytes. A
// range that starts at or past the end (or a suffix of 0 bytes, or any range of an empty body) is
// unsatisfiable; one that ends past the end is cut to it.
ByteRange ResolveByteRange(std::string_view header, uint64_t size);

}  // namespace archil
