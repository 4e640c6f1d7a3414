// AddressKey: the unit per-address connection limits count a peer host by (the disk server's
// and the HTTP API's): an IPv4 address itself (also when written as ::ffff:a.b.c.d), and for
// IPv6 its /64 ("2001:db8:1:2::/64"), since one machine commonly holds a whole /64 and could
// otherwise take a limit's worth of connections from each of its addresses.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace archil {

// `host` is an address without a port, as accepted sockets report it (a zone, "%eth0", is
// ignored). A host that does not parse is its own key.
std::string AddressKey(std::string_view host);

}  // namespace archil
