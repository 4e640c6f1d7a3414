#include "engine/records/session_records.h"

#include <algorithm>

#include "engine/records/record_util.h"

namespace archil::engine {

namespace {
constexpr std::string_view kSessionCf = "session";
}

std::string EncodeSession(const SessionRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.mode));
  PutFixed16LE(&v, r.slots);
  PutFixed32LE(&v, r.lease_ms);
  PutBytes16(&v, r.client_id);
  PutI64(&v, r.created);
  PutFixed64LE(&v, r.root_ino.value());
  PutFixed32LE(&v, r.incarnation);
  PutZeros(&v, 4);
  v.append(reinterpret_cast<const char*>(r.holder_id.data()), r.holder_id.size());
  PutString16(&v, r.hostname);
  PutString16(&v, r.mount_path);
  PutString16(&v, r.token_id);
  return v;
}

Result<SessionRecord> DecodeSession(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kSessionCf, "session", v));
  if (v.size() < 56) return BadLength("session", v.size(), "56 + three strings");
  SessionRecord r;
  const uint8_t mode = U8(v, 1);
  if (mode > 1) return BadEnum("session", "mode", mode);
  r.mode = static_cast<SessionMode>(mode);
  r.slots = U16(v, 2);
  r.lease_ms = U32(v, 4);
  r.client_id = GetBytes16(v.data() + 8);
  r.created = I64(v, 24);
  r.root_ino = Ino(U64(v, 32));
  r.incarnation = U32(v, 40);
  std::copy_n(v.data() + 48, r.holder_id.size(), reinterpret_cast<char*>(r.holder_id.data()));
  Decoder d(v.substr(56));
  std::string_view host, path, token;
  if (!d.GetString16(&host) || !d.GetString16(&path) || !d.GetString16(&token) ||
      d.remaining() != 0) {
    return BadLength("session", v.size(), "56 + exactly three strings");
  }
  r.hostname.assign(host);
  r.mount_path.assign(path);
  r.token_id.assign(token);
  return r;
}

std::string EncodeSlot(const SlotRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  PutZeros(&v, 3);
  PutFixed16LE(&v, r.status);
  PutFixed16LE(&v, r.op_type);
  PutFixed64LE(&v, r.seq);
  PutFixed32LE(&v, static_cast<uint32_t>(r.body.size()));
  v.append(r.body);
  return v;
}

Result<SlotRecord> DecodeSlot(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kSessionCf, "slot", v));
  if (v.size() < 20) return BadLength("slot", v.size(), "20 + body");
  const uint32_t body_len = U32(v, 16);
  if (body_len > kMaxSlotReplyBody || v.size() != 20 + size_t{body_len}) {
    return BadLength("slot", v.size(), "20 + body_len (at most 4096)");
  }
  return SlotRecord{U16(v, 4), U16(v, 6), U64(v, 8), std::string(v.substr(20))};
}

std::string EncodeDelegation(const DelegationRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.mode));
  v.push_back(static_cast<char>(r.origin));
  PutZeros(&v, 5);
  PutFixed64LE(&v, r.root_ino.value());
  PutBytes16(&v, r.session_id);
  PutBytes16(&v, r.client_id);
  PutI64(&v, r.granted);
  return v;
}

Result<DelegationRecord> DecodeDelegation(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kSessionCf, "delegation", v, 56));
  const uint8_t mode = U8(v, 1);
  const uint8_t origin = U8(v, 2);
  if (mode != static_cast<uint8_t>(DelegationMode::kWrite)) {
    return BadEnum("delegation", "mode", mode);
  }
  if (origin > 2) return BadEnum("delegation", "origin", origin);
  return DelegationRecord{static_cast<DelegationMode>(mode),
                          static_cast<DelegationOrigin>(origin),
                          Ino(U64(v, 8)),
                          GetBytes16(v.data() + 16),
                          GetBytes16(v.data() + 32),
                          I64(v, 48)};
}

std::string EncodeRevocation(const RevocationRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  v.push_back(static_cast<char>(r.reason));
  PutZeros(&v, 6);
  PutFixed64LE(&v, r.root_ino.value());
  PutI64(&v, r.revoked);
  PutBytes16(&v, r.by_session);
  return v;
}

Result<RevocationRecord> DecodeRevocation(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFixed(kSessionCf, "revocation", v, 40));
  return RevocationRecord{U8(v, 1), Ino(U64(v, 8)), I64(v, 16), GetBytes16(v.data() + 24)};
}

}  // namespace archil::engine
