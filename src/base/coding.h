// Fixed-width integer coding for keys, values, log records and wire frames (docs/formats.md §1).
//
// Keys use big-endian (bytewise order is numeric order); everything else little-endian. There are
// no varints anywhere: every field has a fixed offset, so a decoder can check a whole record's
// length once and then read.
//
// Decoding from untrusted bytes goes through Decoder, which never reads past its input: every Get
// returns false (and leaves the decoder failed) on underflow.
//
// Thread-safety: pure functions; a Decoder is used by one thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace archil {

inline void PutFixed16LE(std::string* dst, uint16_t v) {
  char b[2] = {static_cast<char>(v), static_cast<char>(v >> 8)};
  dst->append(b, 2);
}
inline void PutFixed32LE(std::string* dst, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
  dst->append(b, 4);
}
inline void PutFixed64LE(std::string* dst, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  dst->append(b, 8);
}
inline void PutFixed32BE(std::string* dst, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * (3 - i)));
  dst->append(b, 4);
}
inline void PutFixed64BE(std::string* dst, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * (7 - i)));
  dst->append(b, 8);
}

// REQUIRES: p points at (at least) the field's width of bytes.
inline uint16_t DecodeFixed16LE(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}
inline uint32_t DecodeFixed32LE(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | u[i];
  return v;
}
inline uint64_t DecodeFixed64LE(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | u[i];
  return v;
}
inline uint32_t DecodeFixed32BE(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | u[i];
  return v;
}
inline uint64_t DecodeFixed64BE(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | u[i];
  return v;
}

// Reads fields in order from bytes it does not trust.
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}

  bool GetU8(uint8_t* v) {
    return Take(1, [&](const char* p) { *v = static_cast<uint8_t>(*p); });
  }
  bool Get16LE(uint16_t* v) {
    return Take(2, [&](const char* p) { *v = DecodeFixed16LE(p); });
  }
  bool Get32LE(uint32_t* v) {
    return Take(4, [&](const char* p) { *v = DecodeFixed32LE(p); });
  }
  bool Get64LE(uint64_t* v) {
    return Take(8, [&](const char* p) { *v = DecodeFixed64LE(p); });
  }
  bool Get32BE(uint32_t* v) {
    return Take(4, [&](const char* p) { *v = DecodeFixed32BE(p); });
  }
  bool Get64BE(uint64_t* v) {
    return Take(8, [&](const char* p) { *v = DecodeFixed64BE(p); });
  }
  // `n` raw bytes (a view into the input).
  bool GetBytes(size_t n, std::string_view* v) {
    return Take(n, [&](const char* p) { *v = std::string_view(p, n); });
  }
  // A u16 length and that many bytes (formats.md "Strings in values").
  bool GetString16(std::string_view* v) {
    uint16_t n = 0;
    return Get16LE(&n) && GetBytes(n, v);
  }
  bool Skip(size_t n) {
    return Take(n, [](const char*) {});
  }

  size_t remaining() const { return failed_ ? 0 : in_.size() - pos_; }
  std::string_view rest() const { return failed_ ? std::string_view() : in_.substr(pos_); }
  // False once any Get ran past the end.
  bool ok() const { return !failed_; }

 private:
  template <typename Fn>
  bool Take(size_t n, Fn fn) {
    if (failed_ || in_.size() - pos_ < n) {
      failed_ = true;
      return false;
    }
    fn(in_.data() + pos_);
    pos_ += n;
    return true;
  }

  std::string_view in_;
  size_t pos_ = 0;
  bool failed_ = false;
};

inline void PutString16(std::string* dst, std::string_view s) {
  PutFixed16LE(dst, static_cast<uint16_t>(s.size()));
  dst->append(s);
}

}  // namespace archil
