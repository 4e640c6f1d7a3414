#include "proto/connection_rules.h"

#include "proto/messages.h"

namespace archil::proto {

std::optional<Refusal> ConnectionRules::Admit(const FrameHeader& h) {
  if (h.is_reply()) return Refusal{WireStatus::kBadFrame, true, "a reply given to Admit"};
  if (!hello_seen_) {
    if (h.type != kTypeHello) {
      return Refusal{WireStatus::kProtocolState, true, "the first frame must be HELLO"};
    }
    hello_seen_ = true;
  } else if (h.type == kTypeHello) {
    return Refusal{WireStatus::kProtocolState, true, "HELLO sent twice"};
  }
  if (!authenticated_) {
    const MessageType* t = FindMessageType(h.type);
    if (t == nullptr || !t->pre_auth) {
      return Refusal{WireStatus::kProtocolState, true,
                     "only HELLO, SESSION_CREATE, SESSION_BIND, PING and GOODBYE before the "
                     "session is bound"};
    }
  }
  if (in_flight_.count(h.request_id) != 0) {
    return Refusal{WireStatus::kBadFrame, true,
                   "request id " + std::to_string(h.request_id) + " is already in flight"};
  }
  if (in_flight_.size() >= max_in_flight_) {
    return Refusal{WireStatus::kDelay, false,
                   std::to_string(in_flight_.size()) + " requests already in flight"};
  }
  in_flight_.insert(h.request_id);
  return std::nullopt;
}

}  // namespace archil::proto
