// Values of the `session` CF (formats.md §4.12): sessions, reply-cache slots, write delegations
// and revocations. Server-local (never logged or uploaded); each value starts with fmt = 1.
// Decoders: Corruption for an unknown fmt ("session fmt N unsupported"), a wrong length or an
// out-of-range enum.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/types.h"

namespace archil::engine {

using Id16 = std::array<uint8_t, 16>;

enum class SessionMode : uint8_t { kExclusive = 0, kShared = 1 };
using Id8 = std::array<uint8_t, 8>;
struct SessionRecord {  // 56 bytes + three u16-length strings
  SessionMode mode = SessionMode::kExclusive;
  uint16_t slots = 0;
  uint32_t lease_ms = 0;
  Id16 client_id{};
  int64_t created = 0;
  Ino root_ino;
  uint32_t incarnation = 0;  // at creation
  Id8 holder_id{};           // the session's public id (protocol.md §5.2)
  std::string hostname;      // REQUIRES (encode): each string <= 65535 bytes
  std::string mount_path;
  std::string token_id;
  bool operator==(const SessionRecord&) const = default;
};
std::string EncodeSession(const SessionRecord& r);
Result<SessionRecord> DecodeSession(std::string_view v);

inline constexpr size_t kMaxSlotReplyBody = 4096;
struct SlotRecord {      // 20 bytes + body
  uint16_t status = 0;   // protocol Status of the reply
  uint16_t op_type = 0;  // protocol message type
  uint64_t seq = 0;
  std::string body;  // encoded <Type>Reply or ErrorReply, <= 4 KiB
  bool operator==(const SlotRecord&) const = default;
};
std::string EncodeSlot(const SlotRecord& r);
Result<SlotRecord> DecodeSlot(std::string_view v);

enum class DelegationMode : uint8_t { kWrite = 2 };  // read delegations live in memory only
enum class DelegationOrigin : uint8_t { kMount = 0, kCheckout = 1, kCreated = 2 };
struct DelegationRecord {  // 56 bytes
  DelegationMode mode = DelegationMode::kWrite;
  DelegationOrigin origin = DelegationOrigin::kMount;
  Ino root_ino;
  Id16 session_id{};
  Id16 client_id{};
  int64_t granted = 0;
  bool operator==(const DelegationRecord&) const = default;
};
std::string EncodeDelegation(const DelegationRecord& r);
Result<DelegationRecord> DecodeDelegation(std::string_view v);

struct RevocationRecord {  // 40 bytes
  uint8_t reason = 0;  // protocol DelegRevoked.Reason, kept as read (the protocol may add reasons)
  Ino root_ino;
  int64_t revoked = 0;
  Id16 by_session{};
  bool operator==(const RevocationRecord&) const = default;
};
std::string EncodeRevocation(const RevocationRecord& r);
Result<RevocationRecord> DecodeRevocation(std::string_view v);

// The inode numbers granted to a session for the creates it answers itself (ADR 0025): the
// current range and the one before it (a client asks for the next range before the current one
// runs out), each as [next, end): `next` is the lowest number of the range not yet used. A
// create must name a number in one of them, which then moves that range's `next` past it: a
// granted number is used at most once. An empty range has next == end.
struct InoGrantRecord {  // 40 bytes
  Ino next;
  Ino end;
  Ino prev_next;
  Ino prev_end;
  bool operator==(const InoGrantRecord&) const = default;
};
std::string EncodeInoGrant(const InoGrantRecord& r);
Result<InoGrantRecord> DecodeInoGrant(std::string_view v);

}  // namespace archil::engine
