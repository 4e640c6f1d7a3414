// IpRange: an address range in CIDR form (IPv4 or IPv6), as a disk's list of allowed client
// addresses holds it (docs/api.md, "Allowed addresses").
//
// ParseIpRange accepts an address ("10.1.2.3", "2001:db8::1") or an address with a prefix
// length ("10.0.0.0/8", "2001:db8::/32") and refuses anything else with InvalidArgument: spaces,
// leading zeros in an IPv4 part or a prefix length, a prefix beyond 32 (IPv4) or 128 (IPv6), a
// zone ("%eth0"), and an address with bits set beyond its prefix ("10.1.0.0/8": the message
// names the range meant, "10.0.0.0/8"), since a typo there would silently grant a larger range.
// The canonical text (ToString) always has the prefix: "10.0.0.0/8", "10.1.2.3/32",
// "2001:db8::/32"; an IPv4-mapped IPv6 range (::ffff:a.b.c.d/96 or longer) becomes the IPv4 one.
//
// Thread-safety: values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace archil {

struct IpRange {
  bool v4 = true;
  std::array<uint8_t, 16> addr{};  // IPv4: the first 4 bytes
  uint8_t prefix = 0;              // 0..32 or 0..128
  bool operator==(const IpRange&) const = default;
  std::string ToString() const;
};

// The longest text ParseIpRange looks at ("ffff:...:ffff/128" is 43 characters).
inline constexpr size_t kMaxIpRangeText = 64;

Result<IpRange> ParseIpRange(std::string_view text);

// Whether `host` (an address as an accepted socket reports it, with no port; "::ffff:a.b.c.d"
// counts as a.b.c.d, a zone is ignored) lies in `range`. A host that is not an address is in none.
bool IpRangeContains(const IpRange& range, std::string_view host);

// An empty list allows every host; otherwise `host` must lie in one of the ranges.
bool IpAllowed(const std::vector<IpRange>& allowed, std::string_view host);

}  // namespace archil
