#include "base/address_key.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace archil {

std::string AddressKey(std::string_view host) {
  const std::string h(host.substr(0, host.find('%')));  // without a zone ("fe80::1%eth0")
  in6_addr a6{};
  if (::inet_pton(AF_INET6, h.c_str(), &a6) != 1) return std::string(host);
  char text[INET6_ADDRSTRLEN] = {};
  if (IN6_IS_ADDR_V4MAPPED(&a6)) {
    ::inet_ntop(AF_INET, &a6.s6_addr[12], text, sizeof text);
    return text;
  }
  std::memset(&a6.s6_addr[8], 0, 8);
  ::inet_ntop(AF_INET6, &a6, text, sizeof text);
  return std::string(text) + "/64";
}

}  // namespace archil
