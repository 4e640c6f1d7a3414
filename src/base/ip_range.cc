#include "base/ip_range.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace archil {
namespace {

// An IPv4-mapped IPv6 address: ::ffff:0:0/96.
bool IsV4Mapped(const std::array<uint8_t, 16>& a) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(a.data(), kMapped, 12) == 0;
}

bool PrefixMatches(const uint8_t* a, const uint8_t* b, unsigned prefix) {
  const unsigned whole = prefix / 8, rest = prefix % 8;
  if (std::memcmp(a, b, whole) != 0) return false;
  if (rest == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff00 >> rest);
  return (a[whole] & mask) == (b[whole] & mask);
}

void MaskTo(std::array<uint8_t, 16>* a, unsigned prefix, unsigned bits) {
  for (unsigned i = 0; i < bits / 8; ++i) {
    const unsigned start = i * 8;
    if (start >= prefix) {
      (*a)[i] = 0;
    } else if (prefix - start < 8) {
      (*a)[i] &= static_cast<uint8_t>(0xff00 >> (prefix - start));
    }
  }
}

// A host as sockets report it, as an IpRange of one address (v4 for a mapped one).
bool ParseHost(std::string_view host, IpRange* out) {
  const std::string h(host.substr(0, host.find('%')));
  if (h.empty() || h.size() > kMaxIpRangeText) return false;
  if (::inet_pton(AF_INET, h.c_str(), out->addr.data()) == 1) {
    out->v4 = true;
    out->prefix = 32;
    return true;
  }
  if (::inet_pton(AF_INET6, h.c_str(), out->addr.data()) != 1) return false;
  out->v4 = false;
  out->prefix = 128;
  if (IsV4Mapped(out->addr)) {
    std::memmove(out->addr.data(), out->addr.data() + 12, 4);
    std::memset(out->addr.data() + 4, 0, 12);
    out->v4 = true;
    out->prefix = 32;
  }
  return true;
}

}  // namespace

std::string IpRange::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(v4 ? AF_INET : AF_INET6, addr.data(), text, sizeof text);
  return std::string(text) + "/" + std::to_string(prefix);
}

Result<IpRange> ParseIpRange(std::string_view text) {
  const std::string shown = text.size() > kMaxIpRangeText
                                ? std::string(text.substr(0, kMaxIpRangeText)) + "..."
                                : std::string(text);
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("invalid address or CIDR range '" + shown +
                                   "': " + std::string(why));
  };
  if (text.empty()) return bad("empty");
  if (text.size() > kMaxIpRangeText) return bad("too long");
  for (char c : text) {  // also keeps a NUL from cutting the text short for inet_pton
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                    c == '.' || c == ':' || c == '/';
    if (!ok) return bad("not an IPv4 or IPv6 address");
  }
  const size_t slash = text.find('/');
  const std::string address(text.substr(0, slash));
  IpRange r;
  if (::inet_pton(AF_INET, address.c_str(), r.addr.data()) == 1) {
    r.v4 = true;
  } else if (address.find(':') != std::string::npos &&
             ::inet_pton(AF_INET6, address.c_str(), r.addr.data()) == 1) {
    r.v4 = false;
  } else {
    return bad("not an IPv4 or IPv6 address");
  }
  const unsigned bits = r.v4 ? 32 : 128;
  unsigned prefix = bits;
  if (slash != std::string_view::npos) {
    const std::string_view p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3 || (p.size() > 1 && p[0] == '0')) {
      return bad("the prefix length must be a number from 0 to " + std::to_string(bits));
    }
    prefix = 0;
    for (char c : p) {
      if (c < '0' || c > '9') {
        return bad("the prefix length must be a number from 0 to " + std::to_string(bits));
      }
      prefix = prefix * 10 + static_cast<unsigned>(c - '0');
    }
    if (prefix > bits) {
      return bad("the prefix length must be a number from 0 to " + std::to_string(bits));
    }
  }
  r.prefix = static_cast<uint8_t>(prefix);
  IpRange masked = r;
  MaskTo(&masked.addr, prefix, bits);
  if (masked.addr != r.addr) {
    return bad("bits are set beyond the prefix length (the range is " + masked.ToString() + ")");
  }
  if (!r.v4 && IsV4Mapped(r.addr) && prefix >= 96) {
    IpRange v4;
    std::memcpy(v4.addr.data(), r.addr.data() + 12, 4);
    v4.prefix = static_cast<uint8_t>(prefix - 96);
    return v4;
  }
  return r;
}

bool IpRangeContains(const IpRange& range, std::string_view host) {
  IpRange h;
  if (!ParseHost(host, &h) || h.v4 != range.v4) return false;
  return PrefixMatches(h.addr.data(), range.addr.data(), range.prefix);
}

bool IpAllowed(const std::vector<IpRange>& allowed, std::string_view host) {
  if (allowed.empty()) return true;
  for (const IpRange& r : allowed) {
    if (IpRangeContains(r, host)) return true;
  }
  return false;
}

}  // namespace archil
