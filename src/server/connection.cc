#include "server/connection.h"

#include "base/log.h"
#include "proto/messages.h"

namespace archil::server {

void Connection::Reply(const proto::FrameHeader& request, proto::WireStatus status,
                       std::string_view body, std::string_view payload, uint8_t extra_flags) {
  proto::FrameHeader h;
  h.flags = static_cast<uint8_t>(proto::kFlagReply | extra_flags);
  h.type = request.type;
  h.request_id = request.request_id;
  h.status = status;
  // Every reply fits what every client reads (kDefaultLimits): the handlers bound what they
  // build, and one that did not would otherwise reach the client as a bad frame, which it could
  // only take for a broken connection and retry. It gets an error it maps to EIO instead.
  std::string refusal;
  if (body.size() > proto::kDefaultLimits.max_body ||
      payload.size() > proto::kDefaultLimits.max_payload) {
    ARCHIL_LOG(kError) << "server: " << peer_ << ": a reply of type " << request.type << " has "
                       << body.size() << " body and " << payload.size()
                       << " payload bytes, over the frame limits; answering EIO";
    v1::ErrorReply e;
    e.set_message("the reply (" + std::to_string(body.size() + payload.size()) +
                  " bytes) would not fit a frame");
    refusal = e.SerializeAsString();
    h.status = proto::WireStatus::kIo;
    body = refusal;
    payload = {};
  }
  const Status sent = Send(h, body, payload, send_timeout_ms_);
  if (!sent.ok()) {
    ARCHIL_LOG(kDebug) << "server: " << peer_ << ": " << sent.ToString() << "; closing";
    Shutdown();
  }
}

Status Connection::Send(proto::FrameHeader h, std::string_view body, std::string_view payload,
                        int timeout_ms) {
  proto::OutFrame frame(h, body, payload);
  MutexLock lock(&send_mu_);
  if (shut_) return Status::Unavailable("the connection is shut down");
  return stream_->SendAll(frame.pieces(), timeout_ms);
}

void Connection::SayGoodbye(const Session::Ending& why) {
  v1::Goodbye g;
  g.set_reason(why.reason);
  g.set_end_session(why.final);
  proto::FrameHeader h;
  h.flags = proto::kFlagServerOrigin;
  h.type = proto::kTypeGoodbye;
  h.request_id = next_push_id_++;
  (void)Send(h, g.SerializeAsString(), {}, /*timeout_ms=*/100);
  Shutdown();
}

void Connection::Shutdown() {
  if (shut_.exchange(true)) return;
  stream_->Shutdown();
}

std::optional<proto::Refusal> Connection::Admit(const proto::FrameHeader& h) {
  MutexLock lock(&mu_);
  return rules_.Admit(h);
}

void Connection::Answered(uint64_t request_id) {
  MutexLock lock(&mu_);
  rules_.Answered(request_id);
}

std::shared_ptr<Session> Connection::session() const {
  MutexLock lock(&mu_);
  return session_;
}

void Connection::Bind(const std::shared_ptr<Session>& s, uint32_t lane) {
  std::shared_ptr<Session> old;
  uint64_t old_key = 0;
  {
    MutexLock lock(&mu_);
    old = std::move(session_);
    old_key = attach_key_;
    session_ = s;
    rules_.Authenticated();
  }
  if (old) old->Detach(old_key);
  // The session holds a weak reference: it can close the connection, never keep it alive.
  const uint64_t key = s->Attach(
      [weak = weak_from_this()](const Session::Ending& why) {
        if (std::shared_ptr<Connection> c = weak.lock()) c->SayGoodbye(why);
      },
      lane, peer_);
  MutexLock lock(&mu_);
  attach_key_ = key;
}

void Connection::Unbind() {
  std::shared_ptr<Session> old;
  uint64_t key = 0;
  {
    MutexLock lock(&mu_);
    old = std::move(session_);
    key = attach_key_;
    session_.reset();
  }
  if (old) old->Detach(key);
}

bool Connection::authenticated() const {
  MutexLock lock(&mu_);
  return rules_.authenticated();
}

}  // namespace archil::server
