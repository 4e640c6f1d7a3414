// Fuzzes the CLI's handling of what a control-plane server answers: the envelope, then every
// typed reply decoder over whatever `data` holds. A server (or whoever sits in its place) must
// never crash the CLI; a reply that decodes must survive a re-encode unchanged.
//
// Input: first byte picks the HTTP status (from a table), the rest is the body.
#include <cstdint>
#include <string_view>

#include "api/wire.h"
#include "cli/api_client.h"

namespace {

template <typename T, typename Decode>
void RoundTrip(const nlohmann::json& data, Decode decode) {
  archil::Result<T> first = decode(data);
  if (!first.ok()) {
    if (first.status().code() != archil::Status::Code::kCorruption) __builtin_trap();
    return;
  }
  archil::Result<T> again = decode(archil::wire::ToJson(*first));
  if (!again.ok() || !(*again == *first)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr int kStatuses[] = {200, 201, 204, 301, 400, 401, 403, 404,
                                      409, 413, 500, 502, 503, 507, 599, 99};
  int status = kStatuses[data[0] % (sizeof(kStatuses) / sizeof(kStatuses[0]))];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  archil::Result<archil::ApiReply> reply = archil::DecodeApiReply(status, body);
  if (!reply.ok()) {
    if (reply.status().code() == archil::Status::Code::kOk) __builtin_trap();
    return 0;
  }
  if (status < 200 || status > 299) __builtin_trap();  // success only for 2xx
  const nlohmann::json& d = reply->data;
  namespace w = archil::wire;
  RoundTrip<w::Disk>(d, w::DecodeDisk);
  RoundTrip<w::User>(d, w::DecodeUser);
  RoundTrip<w::CreateDiskReply>(d, w::DecodeCreateDiskReply);
  RoundTrip<w::ApiKey>(d, w::DecodeApiKey);
  RoundTrip<w::Checkpoint>(d, w::DecodeCheckpoint);
  RoundTrip<w::Branch>(d, w::DecodeBranch);
  RoundTrip<w::AllowedIps>(d, w::DecodeAllowedIps);
  // Lists: their elements' decoders are covered above; a list decodes or is Corruption.
  for (auto code :
       {w::DecodeDiskList(d).status().code(), w::DecodeKeyList(d).status().code(),
        w::DecodeCheckpointList(d).status().code(), w::DecodeBranchList(d).status().code()}) {
    if (code != archil::Status::Code::kOk && code != archil::Status::Code::kCorruption) {
      __builtin_trap();
    }
  }
  return 0;
}
