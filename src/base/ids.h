// Strong identifier types: a disk id is not any string, and (in the engine) an inode number is not
// a sequence number. Mixing them up is a compile error.
//
// Thread-safety: values; copy freely.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "base/status.h"

namespace archil {

// A disk's id: "dsk-" followed by 16 lower-case hex digits. Only Parse(), Generate() and
// Trusted() make a non-empty one, so holding a non-empty DiskId means the text is well formed.
// Default-constructed: empty (no disk).
class DiskId {
 public:
  DiskId() = default;

  static bool IsValid(std::string_view text);
  // InvalidArgument (naming the expected form) unless IsValid(text).
  static Result<DiskId> Parse(std::string_view text);
  // A fresh random id (64 bits from the OS's CSPRNG).
  static Result<DiskId> Generate();
  // For ids read back from our own stores, which checked them on the way in. Not checked again
  // (a damaged store gives an id that matches nothing, never a crash).
  static DiskId Trusted(std::string text) { return DiskId(std::move(text)); }

  const std::string& str() const { return text_; }
  bool empty() const { return text_.empty(); }

  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
  auto operator<=>(const DiskId&) const = default;
  bool operator==(const DiskId&) const = default;

 private:
  explicit DiskId(std::string text) : text_(std::move(text)) {}
  std::string text_;
};

inline std::ostream& operator<<(std::ostream& os, const DiskId& id) { return os << id.str(); }

// An integer that means one thing (inode number, sequence, generation): `Tag` makes each a type of
// its own, with no implicit conversion to or from uint64_t or between tags.
template <typename Tag>
class StrongInt {
 public:
  constexpr StrongInt() = default;
  constexpr explicit StrongInt(uint64_t value) : value_(value) {}
  constexpr uint64_t value() const { return value_; }
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
  constexpr auto operator<=>(const StrongInt&) const = default;

 private:
  uint64_t value_ = 0;
};

}  // namespace archil

template <>
struct std::hash<archil::DiskId> {
  size_t operator()(const archil::DiskId& id) const noexcept {
    return std::hash<std::string>()(id.str());
  }
};
template <typename Tag>
struct std::hash<archil::StrongInt<Tag>> {
  size_t operator()(const archil::StrongInt<Tag>& v) const noexcept {
    return std::hash<uint64_t>()(v.value());
  }
};
