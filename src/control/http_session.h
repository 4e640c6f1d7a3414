// One HTTP/1.1 connection of the API server (http_server.h), on Boost.Beast: reads requests in
// order (pipelined ones included) under total budgets (a head or body over its budget is answered
// 408), answers what waits on nothing on the I/O thread (ApiRouter::AnswersInline) and hands every
// other request to the ApiRouter on the HandlerPool, whose thread starts writing the response
// itself (docs/adr/0026-one-hand-off-and-408.md); responses go out in order. The framing is strict:
// a request with two Content-Lengths, Content-Length and Transfer-Encoding, a Transfer-Encoding
// other than `chunked`, or a bad chunk is answered 400 and the connection closed. The session never
// applies Range itself: the router reads it for share links only (ApiRequest::range). A response
// with a body stream (ApiResponse::stream, a share link's file) is sent in chunks of 256 KiB as
// they are read on the HandlerPool, one at a time, each write under the write deadline. Every error
// the session answers itself carries the API's JSON envelope.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>

#include "control/after_reply.h"
#include "control/api_router.h"
#include "control/connection_limits.h"
#include "control/handler_pool.h"

namespace archil {

struct SessionConfig {
  const ApiRouter* router = nullptr;
  HandlerPool* pool = nullptr;
  AfterReplyRunner* after_reply = nullptr;  // runs what handlers defer; null: the handler thread
  std::atomic<int>* in_flight = nullptr;    // requests handed to the pool and not yet written
  std::chrono::milliseconds handshake_timeout{10000};  // TLS handshake, total
  std::chrono::milliseconds head_timeout{10000};       // request line and headers, total
  std::chrono::milliseconds body_timeout{10000};       // body, total
  std::chrono::milliseconds write_timeout{10000};      // one response, total
  std::chrono::milliseconds keep_alive{2000};          // idle between requests
  size_t max_body_bytes = 64 * 1024;
  size_t max_header_bytes = 16 * 1024;
  size_t max_target_bytes = 8 * 1024;
  size_t max_requests = 1000;  // per connection
};

// Serves `socket` until the peer or a deadline closes it. `tls` null: plain HTTP. `config` and
// `tls` must outlive the socket's io_context's handlers; `slot` is released when the connection
// ends.
void StartSession(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls,
                  const SessionConfig* config, std::unique_ptr<ConnectionLimits::Slot> slot);

// The router's view of a request: the path as sent (never percent-decoded: "/%61pi/tokens" must
// not route as "/api/tokens"), the query's parameters decoded. Exposed for tests.
ApiRequest ToApiRequest(std::string_view method, std::string_view target);

}  // namespace archil
