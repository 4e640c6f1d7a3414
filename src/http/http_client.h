// A small HTTP/1.1 client for the CLI and the mount helper: plain TCP or TLS (OpenSSL, linked
// statically), bounded in time and size. SendHttpRequest sends one request on a connection of its
// own; an HttpSession sends its requests one after another on one kept-alive connection (a CLI
// command that makes several calls pays one TCP and TLS handshake, not one each).
//
// Why not cpp-httplib's client: Debian ships it only as a shared library that pulls in dynamic
// OpenSSL, brotli and zlib, which alone costs the CLI ~8 ms of start-up (docs/adr/0001). This
// client needs none of that and is fuzzed through ParseHttpResponse.
//
// Thread-safety: the free functions share no state; an HttpSession is used by one thread at a
// time.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace archil {

struct Url {
  bool tls = false;
  std::string host;  // without brackets for IPv6
  std::string port;
  std::string base_path;  // "" or "/prefix" (no trailing slash)
};

// Parses "http[s]://host[:port][/prefix]". InvalidArgument says what is wrong.
Result<Url> ParseUrl(std::string_view s);

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
};

struct HttpRequest {
  std::string method = "GET";
  std::string target = "/";  // path and query, already percent-encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpClientOptions {
  int timeout_ms = 30000;  // connect, and each send/receive
  std::string ca_file;     // PEM bundle to trust instead of the system store (self-signed servers)
  size_t max_response_bytes = 16 << 20;
};

// Sends one request and reads the whole response. Unavailable for connection and TLS failures
// (the message names the address), Corruption for a malformed or truncated response.
Result<HttpResponse> SendHttpRequest(const Url& url, const HttpRequest& request,
                                     const HttpClientOptions& options);

// Requests on one kept-alive connection to `url`, opened at the first request. Before each later
// request the connection is checked, and opened again if the server closed it meanwhile (its
// keep-alive ended). A request on a reused connection that got no answer (the connection ended,
// or a read failed) is sent once more on a fresh connection unless it is a POST or a PATCH: the
// server may have acted on those, so their failure is returned. A response that
// says `Connection: close` ends the connection after it.
class HttpSession {
 public:
  HttpSession(Url url, HttpClientOptions options);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // As SendHttpRequest.
  Result<HttpResponse> Send(const HttpRequest& request);

  // Connections opened so far (for tests).
  int connections() const { return connections_; }

 private:
  class Connection;
  const Url url_;
  const HttpClientOptions options_;
  std::unique_ptr<Connection> conn_;
  int connections_ = 0;
};

// Parses a complete HTTP/1.1 response (status line, headers, body by Content-Length, chunked
// encoding or end of stream). Exposed for tests and the fuzzer.
Result<HttpResponse> ParseHttpResponse(std::string_view raw);

// The total size of a response whose beginning is `received`: 0 while its headers are not all
// in, SIZE_MAX when only the end of the stream tells (chunked, no Content-Length, malformed).
size_t ExpectedResponseSize(std::string_view received);

// Percent-encodes a query value or path segment (RFC 3986 unreserved characters kept).
std::string UrlEncode(std::string_view s);

}  // namespace archil
