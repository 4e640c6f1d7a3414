// The disk protocol's message types (docs/protocol.md §5.1) and their bodies (archil.proto, as
// protobuf-lite classes in archil::v1): which types exist, what each carries, and the parse of a
// frame's body into the type's message (checks 9 and 11 of §12).
//
// Thread-safety: the registry is immutable; parsing is pure.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "proto/archil.pb.h"  // IWYU pragma: export
#include "proto/frame.h"
#include "proto/wire_status.h"

namespace archil::proto {

using Message = google::protobuf::MessageLite;

// `m` as the concrete message M it is: the caller knows M from the frame's type code (ParseBody
// made the message of that code), so the cast is never checked at run time.
template <typename M>
const M& As(const Message& m) {
  return static_cast<const M&>(m);
}

// Type codes of §5.1 (kTypeRead and kTypeWrite are in frame.h).
inline constexpr uint16_t kTypeHello = 0x0001, kTypeSessionCreate = 0x0002,
                          kTypeSessionBind = 0x0003, kTypePing = 0x0006, kTypeGoodbye = 0x0007,
                          kTypeLookup = 0x0101, kTypeGetAttr = 0x0102, kTypeSetAttr = 0x0103,
                          kTypeReadLink = 0x0104, kTypeCreate = 0x0105, kTypeMkdir = 0x0106,
                          kTypeMknod = 0x0107, kTypeSymlink = 0x0108, kTypeLink = 0x0109,
                          kTypeUnlink = 0x010A, kTypeRmdir = 0x010B, kTypeRename = 0x010C,
                          kTypeReadDir = 0x010D, kTypeOpen = 0x010E, kTypeRelease = 0x010F,
                          kTypeStatFs = 0x0110, kTypeCommit = 0x0203, kTypeFallocate = 0x0204,
                          kTypeLseek = 0x0205, kTypePutAttrs = 0x0111, kTypeInoGrant = 0x0112,
                          kTypeGetXattr = 0x0301, kTypeListXattr = 0x0302, kTypeSetXattr = 0x0303,
                          kTypeRemoveXattr = 0x0304, kTypeLock = 0x0401, kTypeLockCancel = 0x0403,
                          kTypeDelegAcquire = 0x0501, kTypeDelegReturn = 0x0502,
                          kTypeCheckpointCreate = 0x0601;

struct MessageType {
  uint16_t code;
  std::string_view name;  // as in §5.1: "SESSION_CREATE"
  bool mutating;          // carries Mut and uses a slot (§7)
  bool pre_auth;          // allowed before the session is bound (§12 row 8)
  bool push;              // may be sent by the server (SERVER_ORIGIN)
  std::unique_ptr<Message> (*new_request)();
  std::unique_ptr<Message> (*new_reply)();
  // The request's Mut (slot, seq), or nullptr if the type has none or the request left it out.
  const v1::Mut* (*mut_of)(const Message& request);
};

// Every type of §5.1 this build knows, by code.
std::span<const MessageType> MessageTypes();
// The type with this code; nullptr if unknown (answered UNSUPPORTED_TYPE, the connection stays).
const MessageType* FindMessageType(uint16_t code);

// Parses the body of a frame whose header passed the frame checks: the type's request (or push),
// or for a reply its <Type>Reply when status is OK and an ErrorReply otherwise. Returns kOk and
// sets *out, kUnsupportedType for an unknown type, or kBadMessage if the body does not parse
// (*out untouched). Unknown fields are kept and ignored (version skew, §4).
WireStatus ParseBody(const FrameHeader& h, std::string_view body, std::unique_ptr<Message>* out);

}  // namespace archil::proto
