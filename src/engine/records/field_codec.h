// One declaration per record layout (ADR 0024): a record's fixed fields, in docs/formats.md's order
// and widths, are declared once as a constexpr RecordLayout, and the encoded size, the encoder and
// the decoder all come from that one list, so the two directions cannot drift apart.
//
//   constexpr auto kSchemaLayout = Layout<SchemaRecord>(
//       Fmt(), Reserved(3), Field(&SchemaRecord::schema), Field(&SchemaRecord::min_reader),
//       Field(&SchemaRecord::created));
//   std::string EncodeSchema(const SchemaRecord& r) { return kSchemaLayout.Encode(r); }
//   Result<SchemaRecord> DecodeSchema(std::string_view v) {
//     return kSchemaLayout.DecodeExact("default", "SCHEMA", v);
//   }
//
// Elements, each at the offset where the previous one ends (little-endian, formats.md §1):
//   Fmt()             u8 = kValueFmt. Only first; decoders check it before anything else.
//   Reserved(n)       n bytes, written as zero and ignored on read.
//   Field(&R::m)      a member, its width given by its type: uint8_t, uint16_t, uint32_t,
//                     uint64_t, int64_t (8 bytes, two's complement), a StrongInt id (Ino, Epoch,
//                     SegNo, Seq, DiskNo: its u64 value()), std::array<uint8_t, N> (N raw bytes).
//   Field(&R::m, "name", lo, hi)
//                     the same, refused on read unless lo <= m <= hi, with BadEnum(record, "name",
//                     m) (record_util.h). Members of at most 4 bytes. An enum member (u8, u16 or
//                     u32 underneath) must be declared this way...
//   UncheckedEnum(&R::m)
//                     ...or this way: read as is, for a decoder that checks it with a message of
//                     its own (an operand's op, the envelope's kind).
//   Count16(&R::c), Count32(&R::c)
//                     the size() of a container member that follows the layout (a list or a
//                     string), as u16 / u32. Skipped on read: CountIn(v) gives it to the decoder,
//                     which reads the tail itself. REQUIRES (encode): the size fits.
//
// A RecordLayout<R> (all const, no state but the declaration):
//   size()            its encoded bytes, a constant expression.
//   Put(&dst, r)      appends r's bytes.  Encode(r): the same into a new string.
//   Get(record, v, &r)
//                     reads every field from the first size() bytes of v (REQUIRES: v.size() >=
//                     size(), and the fmt byte checked). Then checks the ranged fields in order:
//                     Ok, or the first one's BadEnum.
//   CountIn(v)        the Count element's value in v (REQUIRES: as Get; exactly one Count).
//   DecodeExact(cf, record, v)
//                     a whole value that is exactly this layout, checked as CheckFixed does
//                     (record_util.h: "<cf> fmt N unsupported", "<record> record: N bytes, want
//                     M"), then Get. Without Fmt(): DecodeExact(record, v), the length only.
//
// Thread-safety: constant declarations and pure functions.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "base/coding.h"
#include "base/ids.h"
#include "base/status.h"
#include "engine/records/record_util.h"

namespace archil::engine {

namespace field_codec_detail {

// How each field type is written: its width, Put and Get.
template <typename M>
struct FieldType;  // not defined: a member of a type the formats do not use

template <>
struct FieldType<uint8_t> {
  static constexpr size_t kSize = 1;
  static void Put(std::string* dst, uint8_t v) { dst->push_back(static_cast<char>(v)); }
  static uint8_t Get(const char* p) { return static_cast<uint8_t>(*p); }
};
template <>
struct FieldType<uint16_t> {
  static constexpr size_t kSize = 2;
  static void Put(std::string* dst, uint16_t v) { PutFixed16LE(dst, v); }
  static uint16_t Get(const char* p) { return DecodeFixed16LE(p); }
};
template <>
struct FieldType<uint32_t> {
  static constexpr size_t kSize = 4;
  static void Put(std::string* dst, uint32_t v) { PutFixed32LE(dst, v); }
  static uint32_t Get(const char* p) { return DecodeFixed32LE(p); }
};
template <>
struct FieldType<uint64_t> {
  static constexpr size_t kSize = 8;
  static void Put(std::string* dst, uint64_t v) { PutFixed64LE(dst, v); }
  static uint64_t Get(const char* p) { return DecodeFixed64LE(p); }
};
template <>
struct FieldType<int64_t> {
  static constexpr size_t kSize = 8;
  static void Put(std::string* dst, int64_t v) { PutFixed64LE(dst, static_cast<uint64_t>(v)); }
  static int64_t Get(const char* p) { return static_cast<int64_t>(DecodeFixed64LE(p)); }
};
template <typename Tag>
struct FieldType<StrongInt<Tag>> {
  static constexpr size_t kSize = 8;
  static void Put(std::string* dst, StrongInt<Tag> v) { PutFixed64LE(dst, v.value()); }
  static StrongInt<Tag> Get(const char* p) { return StrongInt<Tag>(DecodeFixed64LE(p)); }
};
template <size_t N>
struct FieldType<std::array<uint8_t, N>> {
  static constexpr size_t kSize = N;
  static void Put(std::string* dst, const std::array<uint8_t, N>& v) {
    dst->append(reinterpret_cast<const char*>(v.data()), N);
  }
  static std::array<uint8_t, N> Get(const char* p) {
    std::array<uint8_t, N> v;
    for (size_t i = 0; i < N; ++i) v[i] = static_cast<uint8_t>(p[i]);
    return v;
  }
};
template <typename E>
requires std::is_enum_v<E>
struct FieldType<E> {
  using Under = FieldType<std::underlying_type_t<E>>;
  static constexpr size_t kSize = Under::kSize;
  static void Put(std::string* dst, E v) {
    Under::Put(dst, static_cast<std::underlying_type_t<E>>(v));
  }
  static E Get(const char* p) { return static_cast<E>(Under::Get(p)); }
};

// The value a range is checked on.
template <typename M>
constexpr uint64_t RangeValue(M v) {
  if constexpr (std::is_enum_v<M>) {
    return static_cast<uint64_t>(static_cast<std::underlying_type_t<M>>(v));
  } else {
    return static_cast<uint64_t>(v);
  }
}

struct FmtElement {
  static constexpr size_t size() { return 1; }
  template <typename R>
  void Put(std::string* dst, const R&) const {
    dst->push_back(static_cast<char>(kValueFmt));
  }
  template <typename R>
  void Read(const char*, R*) const {}
};

struct ReservedElement {
  size_t bytes;
  constexpr size_t size() const { return bytes; }
  template <typename R>
  void Put(std::string* dst, const R&) const {
    dst->append(bytes, '\0');
  }
  template <typename R>
  void Read(const char*, R*) const {}
};

template <typename R, typename M>
struct FieldElement {
  M R::*member;
  static constexpr size_t size() { return FieldType<M>::kSize; }
  void Put(std::string* dst, const R& r) const { FieldType<M>::Put(dst, r.*member); }
  void Read(const char* p, R* r) const { r->*member = FieldType<M>::Get(p); }
};

template <typename R, typename M>
struct RangedFieldElement : FieldElement<R, M> {
  std::string_view name;
  uint64_t lo;
  uint64_t hi;
  Status Check(std::string_view record, const R& r) const {
    const uint64_t v = RangeValue(r.*(this->member));
    if (v < lo || v > hi) return BadEnum(record, name, static_cast<unsigned>(v));
    return Status::Ok();
  }
};

template <typename R, typename C, typename N>
struct CountElement {
  C R::*member;
  static constexpr size_t size() { return sizeof(N); }
  void Put(std::string* dst, const R& r) const {
    FieldType<N>::Put(dst, static_cast<N>((r.*member).size()));
  }
  void Read(const char*, R*) const {}
  static size_t Count(const char* p) { return FieldType<N>::Get(p); }
};

template <typename E>
inline constexpr bool kIsFmt = std::is_same_v<E, FmtElement>;
template <typename E, typename R>
concept Checked = requires(const E& e, std::string_view record, const R& r) {
  { e.Check(record, r) } -> std::same_as<Status>;
};
template <typename E>
inline constexpr bool kIsCount = false;
template <typename R, typename C, typename N>
inline constexpr bool kIsCount<CountElement<R, C, N>> = true;

}  // namespace field_codec_detail

// ---- The elements of a layout (see the header comment) ----

constexpr field_codec_detail::FmtElement Fmt() { return {}; }

constexpr field_codec_detail::ReservedElement Reserved(size_t bytes) { return {bytes}; }

template <typename R, typename M>
constexpr field_codec_detail::FieldElement<R, M> Field(M R::*member) {
  static_assert(!std::is_enum_v<M>,
                "an enum field needs its range, Field(&R::m, \"name\", lo, hi), or UncheckedEnum");
  return {member};
}

template <typename R, typename M>
constexpr field_codec_detail::RangedFieldElement<R, M> Field(M R::*member, std::string_view name,
                                                             std::type_identity_t<M> lo,
                                                             std::type_identity_t<M> hi) {
  static_assert(field_codec_detail::FieldType<M>::kSize <= 4, "BadEnum reports an unsigned");
  return {{member}, name, field_codec_detail::RangeValue(lo), field_codec_detail::RangeValue(hi)};
}

template <typename R, typename M>
requires std::is_enum_v<M>
constexpr field_codec_detail::FieldElement<R, M> UncheckedEnum(M R::*member) { return {member}; }

template <typename R, typename C>
constexpr field_codec_detail::CountElement<R, C, uint16_t> Count16(C R::*member) {
  return {member};
}

template <typename R, typename C>
constexpr field_codec_detail::CountElement<R, C, uint32_t> Count32(C R::*member) {
  return {member};
}

// ---- The layout ----

template <typename R, typename... Elements>
class RecordLayout {
 public:
  static_assert(sizeof...(Elements) > 0, "a layout has at least one element");
  static constexpr bool kHasFmt =
      sizeof...(Elements) > 0 &&
      field_codec_detail::kIsFmt<std::tuple_element_t<0, std::tuple<Elements...>>>;
  static_assert((int{field_codec_detail::kIsFmt<Elements>} + ... + 0) == int{kHasFmt},
                "Fmt() is only the first element");

  constexpr explicit RecordLayout(Elements... elements) : elements_(elements...) {}

  constexpr size_t size() const {
    return std::apply([](const auto&... e) { return (e.size() + ... + size_t{0}); }, elements_);
  }

  void Put(std::string* dst, const R& r) const {
    std::apply([&](const auto&... e) { (e.Put(dst, r), ...); }, elements_);
  }

  std::string Encode(const R& r) const {
    std::string v;
    v.reserve(size());
    Put(&v, r);
    return v;
  }

  Status Get(std::string_view record, std::string_view v, R* r) const {
    // Every field first, then the ranges in order: the first one out of range is the error.
    size_t off = 0;
    std::apply([&](const auto&... e) { ((e.Read(v.data() + off, r), off += e.size()), ...); },
               elements_);
    Status status = Status::Ok();
    std::apply([&](const auto&... e) { (CheckOne(e, record, *r, &status) && ...); }, elements_);
    return status;
  }

  size_t CountIn(std::string_view v) const {
    static_assert((int{field_codec_detail::kIsCount<Elements>} + ... + 0) == 1,
                  "CountIn needs exactly one Count element");
    size_t off = 0;
    size_t count = 0;
    std::apply(
        [&](const auto&... e) { ((ReadCount(e, v.data() + off, &count), off += e.size()), ...); },
        elements_);
    return count;
  }

  Result<R> DecodeExact(std::string_view cf, std::string_view record,
                        std::string_view v) const requires kHasFmt {
    ARCHIL_RETURN_IF_ERROR(CheckFixed(cf, record, v, size()));
    R r;
    ARCHIL_RETURN_IF_ERROR(Get(record, v, &r));
    return r;
  }

  Result<R> DecodeExact(std::string_view record, std::string_view v) const requires(!kHasFmt) {
    if (v.size() != size()) return BadLength(record, v.size(), std::to_string(size()));
    R r;
    ARCHIL_RETURN_IF_ERROR(Get(record, v, &r));
    return r;
  }

 private:
  template <typename E>
  static bool CheckOne(const E& e, std::string_view record, const R& r, Status* status) {
    if constexpr (field_codec_detail::Checked<E, R>) *status = e.Check(record, r);
    return status->ok();
  }

  template <typename E>
  static void ReadCount(const E&, const char* p, size_t* count) {
    if constexpr (field_codec_detail::kIsCount<E>) *count = E::Count(p);
  }

  std::tuple<Elements...> elements_;
};

// Layout<R>(elements...): the layout of record type R.
template <typename R, typename... Elements>
constexpr RecordLayout<R, Elements...> Layout(Elements... elements) {
  return RecordLayout<R, Elements...>(elements...);
}

}  // namespace archil::engine
