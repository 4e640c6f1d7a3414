// Fuzzes the CLI's HTTP response parser: any bytes a server (or an attacker in its place) sends
// must parse or fail with a Status, never crash or read out of bounds.
#include <cstdint>
#include <string_view>

#include "http/http_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  archil::Result<archil::HttpResponse> r = archil::ParseHttpResponse(raw);
  if (r.ok() && (r->status < 100 || r->status > 599)) __builtin_trap();
  size_t expected = archil::ExpectedResponseSize(raw);
  if (r.ok() && expected != SIZE_MAX && expected > raw.size()) __builtin_trap();
  (void)archil::ParseUrl(raw);
  return 0;
}
