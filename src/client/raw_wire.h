// Raw exchanges on a disk-protocol socket, one frame at a time, for the tools and tests that must
// misbehave on purpose (an attacker that holds partial frames, a socket that never finishes its
// handshake). Well-behaved clients use DiskClient.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "net/socket.h"
#include "proto/frame.h"

namespace archil::client {

// The body of a HELLO offering protocol version 1 only.
std::string HelloBody();

// Sends request `type` with `body` and reads the next frame (the reply, or a push); nullopt if
// the socket closed, the bytes were not a frame, or nothing came within `timeout_ms`.
std::optional<proto::Frame> RawCall(int fd, uint16_t type, uint64_t id, const std::string& body,
                                    int timeout_ms = 2000);

// A new cleartext connection to `address` authenticated with `token` (HELLO, then
// SESSION_CREATE): what any holder of a disk token can open. Invalid if the server refused;
// `session_id` gets the new session's.
net::Fd AuthenticatedSocket(const std::string& address, const std::string& token,
                            std::string* session_id = nullptr);

}  // namespace archil::client
