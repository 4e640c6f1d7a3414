#include "store/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace archil::store {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Upload {
  std::string_view data;
  size_t pos = 0;
};

size_t ReadBody(char* out, size_t size, size_t n, void* user) {
  auto* up = static_cast<Upload*>(user);
  const size_t len = std::min(size * n, up->data.size() - up->pos);
  std::copy_n(up->data.data() + up->pos, len, out);
  up->pos += len;
  return len;
}

size_t WriteBody(char* in, size_t size, size_t n, void* user) {
  static_cast<HttpResponse*>(user)->body.append(in, size * n);
  return size * n;
}

size_t WriteHeader(char* in, size_t size, size_t n, void* user) {
  auto* resp = static_cast<HttpResponse*>(user);
  std::string_view line(in, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    resp->headers.clear();  // a new status line (after 100 Continue, or a redirect)
    return size * n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  resp->headers[name] = std::string(value);
  return size * n;
}

}  // namespace

std::string HttpResponse::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

HttpTransport::HttpTransport(TransportOptions options) : options_(std::move(options)) {
  GlobalInit();
}

HttpTransport::~HttpTransport() {
  MutexLock lock(&mu_);
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpTransport::Borrow() {
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpTransport::Return(void* handle) {
  curl_easy_reset(static_cast<CURL*>(handle));  // keeps its connection and DNS caches
  MutexLock lock(&mu_);
  idle_.push_back(handle);
}

Result<HttpResponse> HttpTransport::Perform(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(Borrow());
  if (curl == nullptr) return Status::Internal("curl_easy_init failed");
  HttpResponse resp;
  Upload upload{request.body, 0};
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : request.headers) {
    headers = curl_slist_append(headers, (k + ": " + v).c_str());
  }
  // curl adds these unless told not to; neither is signed, and Expect costs a round trip.
  headers = curl_slist_append(headers, "Expect:");
  headers = curl_slist_append(headers, "Content-Type:");
  headers = curl_slist_append(headers, "Accept:");

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.total_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                   std::max(1L, static_cast<long>(options_.stall_timeout.count() / 1000)));
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &resp);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &resp);
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    // A handle whose transfer failed may hold a broken connection; do not reuse it.
    curl_easy_cleanup(curl);
    return Status::Unavailable(request.method + " " + request.url + ": " + curl_easy_strerror(rc));
  }
  Return(curl);
  resp.status = static_cast<int>(status);
  return resp;
}

}  // namespace archil::store
