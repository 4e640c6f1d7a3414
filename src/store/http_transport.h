// HttpTransport: one HTTP/1.1 request over libcurl, with a pool of easy handles so that
// connections are kept alive across requests. It knows nothing of S3: S3Store signs, retries
// and interprets replies (s3_store.h).
//
// Thread-safety: safe for concurrent use; each Perform borrows its own handle.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace archil::store {

struct HttpRequest {
  std::string method;  // GET, HEAD, PUT, POST, DELETE
  std::string url;     // scheme://host[:port]/path?query, already encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;  // PUT and POST; must outlive Perform
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& name) const;  // "" if absent
};

struct TransportOptions {
  std::chrono::milliseconds connect_timeout{2000};
  // A transfer that moves fewer than 1 KiB/s for this long is abandoned (a hung store).
  std::chrono::milliseconds stall_timeout{10000};
  std::chrono::milliseconds total_timeout{300000};
  std::string ca_file;  // empty: the system's trust store
};

class HttpTransport {
 public:
  explicit HttpTransport(TransportOptions options);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // One attempt. Any HTTP status is a response; kUnavailable when no complete response came
  // (refused, timed out, reset, a torn body), with curl's reason in the message.
  Result<HttpResponse> Perform(const HttpRequest& request) ARCHIL_EXCLUDES(mu_);

 private:
  void* Borrow() ARCHIL_EXCLUDES(mu_);
  void Return(void* handle) ARCHIL_EXCLUDES(mu_);

  const TransportOptions options_;
  Mutex mu_;
  std::vector<void*> idle_ ARCHIL_GUARDED_BY(mu_);  // CURL*
};

}  // namespace archil::store
