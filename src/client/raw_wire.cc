#include "client/raw_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include "proto/messages.h"

namespace archil::client {

std::string HelloBody() {
  v1::Hello hello;
  hello.mutable_versions()->set_min(1);
  hello.mutable_versions()->set_max(1);
  return hello.SerializeAsString();
}

std::optional<proto::Frame> RawCall(int fd, uint16_t type, uint64_t id, const std::string& body,
                                    int timeout_ms) {
  proto::FrameHeader h;
  h.type = type;
  h.request_id = id;
  const std::string f = proto::EncodeFrame(h, body);
  if (::send(fd, f.data(), f.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(f.size())) {
    return std::nullopt;
  }
  proto::FrameReader r(proto::kDefaultLimits);
  char buf[4096];
  while (!r.ready()) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    std::string_view bytes(buf, static_cast<size_t>(n));
    while (!bytes.empty() && !r.ready() && !r.error()) bytes.remove_prefix(r.Feed(bytes));
    if (r.error()) return std::nullopt;
  }
  return r.Take();
}

net::Fd AuthenticatedSocket(const std::string& address, const std::string& token,
                            std::string* session_id) {
  Result<net::Fd> fd = net::Connect(address, 2000);
  if (!fd.ok()) return net::Fd();
  std::optional<proto::Frame> hello = RawCall(fd->get(), proto::kTypeHello, 1, HelloBody());
  if (!hello || hello->header.status != proto::WireStatus::kOk) return net::Fd();
  v1::SessionCreate create;
  create.set_token(token);
  std::optional<proto::Frame> created =
      RawCall(fd->get(), proto::kTypeSessionCreate, 2, create.SerializeAsString());
  if (!created || created->header.status != proto::WireStatus::kOk) return net::Fd();
  v1::SessionCreateReply reply;
  if (session_id && reply.ParseFromString(created->body)) *session_id = reply.session_id();
  return std::move(*fd);
}

}  // namespace archil::client
