// Executes one authenticated request of a session on its disk (docs/protocol.md §5.3-5.5) with
// the exactly-once rule of §7: a mutating request goes through the session's slot table, and a
// durable one writes its slot record in its own commit (engine/commit/commit_hooks.h), so a retry
// after a lost reply or a server restart gets the original answer and never a second effect.
//
// The request has passed the frame, connection and stateless checks (proto/validate.h); what
// needs the disk (does the parent exist, is it a directory) is the engine's to answer, and its
// errno becomes the status through the one table of proto/wire_status.h.
//
// Replies. A reply from the cache is the reply first sent, byte for byte (flag REPLAYED). The
// attributes a mutation's reply carries are the operation's result (the new inode, the written
// file); parent attributes are not sent (clients drop their cached parent attributes after a
// namespace change), and a durable operation whose engine call returns no attributes (unlink,
// rename, xattrs, fallocate) carries none.
//
// Thread-safety: safe for concurrent use on one session; requests of one inode are ordered by
// the client (protocol.md §6), the engine serializes commits.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "proto/messages.h"
#include "server/session.h"

namespace archil::server {

struct Response {
  proto::WireStatus status = proto::WireStatus::kOk;
  std::string body;     // the encoded <Type>Reply, or an ErrorReply
  std::string payload;  // READ replies only
  bool replayed = false;
};

// REQUIRES: `type` is a request type of §5.1 other than the connection and session types, and
// `request` is its parsed, validated message.
// `on_queued` (WRITE only; the other types ignore it) runs as soon as the write's commit has its
// place in the engine's queue, before it is durable: the disk server starts the next mutation of
// the file then (ADR 0015). It does not run for a replay or a write that fails before that.
Response Execute(Session& session, uint16_t type, const proto::Message& request,
                 std::string_view payload, const std::function<void()>& on_queued = {});

// The answer to a mutating request refused before it ran (it failed validation): the refusal
// still takes the request's seq in its slot, as a failed operation does (§7), so the client's
// next request on the slot is in order; a retry gets the same refusal. The attribute puts it
// carries (§5.3.2) are applied first when `apply_puts` (the request alone is refused: a bad name,
// an unsupported xattr), and otherwise lost, which the refusal says.
Response Refuse(Session& session, const v1::Mut& mut, Response refusal, bool apply_puts = false);

// An error reply: `status` with an ErrorReply whose message is `message`.
Response ErrorResponse(proto::WireStatus status, std::string_view message);
// DELAY: nothing ran; the client sends the request again after `retry_after_ms`.
Response DelayResponse(std::string_view message, uint32_t retry_after_ms);

}  // namespace archil::server
