#include "engine/records/session_records.h"

#include "engine/records/field_codec.h"
#include "engine/records/record_util.h"

namespace archil::engine {

namespace {

constexpr std::string_view kSessionCf = "session";

// The layouts of formats.md §4.12, one line per field.
// clang-format off

// Then the hostname, the mount path and the token id (each u16 length + bytes).
constexpr auto kSessionLayout = Layout<SessionRecord>(
    Fmt(),
    Field(&SessionRecord::mode, "mode", SessionMode::kExclusive, SessionMode::kShared),
    Field(&SessionRecord::slots),
    Field(&SessionRecord::lease_ms),
    Field(&SessionRecord::client_id),
    Field(&SessionRecord::created),
    Field(&SessionRecord::root_ino),
    Field(&SessionRecord::incarnation),
    Reserved(4),
    Field(&SessionRecord::holder_id));
static_assert(kSessionLayout.size() == 56);

// Then body_len bytes of reply body.
constexpr auto kSlotLayout = Layout<SlotRecord>(
    Fmt(),
    Reserved(3),
    Field(&SlotRecord::status),
    Field(&SlotRecord::op_type),
    Field(&SlotRecord::seq),
    Count32(&SlotRecord::body));
static_assert(kSlotLayout.size() == 20);

constexpr auto kDelegationLayout = Layout<DelegationRecord>(
    Fmt(),
    Field(&DelegationRecord::mode, "mode", DelegationMode::kWrite, DelegationMode::kWrite),
    Field(&DelegationRecord::origin, "origin",
          DelegationOrigin::kMount, DelegationOrigin::kCreated),
    Reserved(5),
    Field(&DelegationRecord::root_ino),
    Field(&DelegationRecord::session_id),
    Field(&DelegationRecord::client_id),
    Field(&DelegationRecord::granted));
static_assert(kDelegationLayout.size() == 56);

constexpr auto kRevocationLayout = Layout<RevocationRecord>(
    Fmt(),
    Field(&RevocationRecord::reason),
    Reserved(6),
    Field(&RevocationRecord::root_ino),
    Field(&RevocationRecord::revoked),
    Field(&RevocationRecord::by_session));
static_assert(kRevocationLayout.size() == 40);

constexpr auto kInoGrantLayout = Layout<InoGrantRecord>(
    Fmt(),
    Reserved(7),
    Field(&InoGrantRecord::next),
    Field(&InoGrantRecord::end),
    Field(&InoGrantRecord::prev_next),
    Field(&InoGrantRecord::prev_end));
static_assert(kInoGrantLayout.size() == 40);
// clang-format on

}  // namespace

std::string EncodeSession(const SessionRecord& r) {
  std::string v = kSessionLayout.Encode(r);
  PutString16(&v, r.hostname);
  PutString16(&v, r.mount_path);
  PutString16(&v, r.token_id);
  return v;
}

Result<SessionRecord> DecodeSession(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kSessionCf, "session", v));
  if (v.size() < kSessionLayout.size()) {
    return BadLength("session", v.size(), "56 + three strings");
  }
  SessionRecord r;
  ARCHIL_RETURN_IF_ERROR(kSessionLayout.Get("session", v, &r));
  Decoder d(v.substr(kSessionLayout.size()));
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
  std::string v = kSlotLayout.Encode(r);
  v.append(r.body);
  return v;
}

Result<SlotRecord> DecodeSlot(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(kSessionCf, "slot", v));
  if (v.size() < kSlotLayout.size()) return BadLength("slot", v.size(), "20 + body");
  const size_t body_len = kSlotLayout.CountIn(v);
  if (body_len > kMaxSlotReplyBody || v.size() != kSlotLayout.size() + body_len) {
    return BadLength("slot", v.size(), "20 + body_len (at most 4096)");
  }
  SlotRecord r;
  ARCHIL_RETURN_IF_ERROR(kSlotLayout.Get("slot", v, &r));
  r.body.assign(v.substr(kSlotLayout.size()));
  return r;
}

std::string EncodeDelegation(const DelegationRecord& r) { return kDelegationLayout.Encode(r); }

Result<DelegationRecord> DecodeDelegation(std::string_view v) {
  return kDelegationLayout.DecodeExact(kSessionCf, "delegation", v);
}

std::string EncodeRevocation(const RevocationRecord& r) { return kRevocationLayout.Encode(r); }

Result<RevocationRecord> DecodeRevocation(std::string_view v) {
  return kRevocationLayout.DecodeExact(kSessionCf, "revocation", v);
}

std::string EncodeInoGrant(const InoGrantRecord& r) { return kInoGrantLayout.Encode(r); }

Result<InoGrantRecord> DecodeInoGrant(std::string_view v) {
  return kInoGrantLayout.DecodeExact(kSessionCf, "ino grant", v);
}

}  // namespace archil::engine
