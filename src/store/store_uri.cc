#include "store/store_uri.h"

#include <cctype>

#include "store/dir_store.h"
#include "store/sigv4.h"

namespace archil::store {
namespace {

// S3's bucket naming rules: 3-63 of [a-z0-9.-], starting and ending with a letter or digit.
bool ValidBucket(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-')) {
      return false;
    }
  }
  return std::isalnum(static_cast<unsigned char>(b.front())) &&
         std::isalnum(static_cast<unsigned char>(b.back()));
}

}  // namespace

Result<StoreUri> ParseStoreUri(std::string_view uri, const GetEnv& env) {
  StoreUri out;
  if (uri.rfind("dir://", 0) == 0) {
    out.path = std::string(uri.substr(6));
    if (out.path.empty() || out.path.front() != '/') {
      return Status::InvalidArgument("--object-store dir://PATH needs an absolute PATH");
    }
    return out;
  }
  if (uri.rfind("s3://", 0) != 0) {
    return Status::InvalidArgument("--object-store '" + std::string(uri) +
                                   "': expected dir://PATH or s3://BUCKET[/PREFIX][?...]");
  }
  out.kind = StoreUri::Kind::kS3;
  std::string_view rest = uri.substr(5);
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const size_t slash = rest.find('/');
  out.s3.bucket = std::string(rest.substr(0, slash));
  if (!ValidBucket(out.s3.bucket)) {
    return Status::InvalidArgument("--object-store: '" + out.s3.bucket +
                                   "' is not a valid S3 bucket name (3-63 of a-z 0-9 . -)");
  }
  if (slash != std::string_view::npos) {
    std::string prefix(rest.substr(slash + 1));
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (!prefix.empty()) {
      ARCHIL_RETURN_IF_ERROR(ValidateKey(prefix).WithContext("--object-store prefix"));
      out.s3.prefix = prefix + "/";
    }
  }
  out.s3.region = env("AWS_REGION").value_or(env("AWS_DEFAULT_REGION").value_or("us-east-1"));
  std::string addressing;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    std::string name(pair.substr(0, eq)), value;
    if (eq == std::string_view::npos || !UriDecode(pair.substr(eq + 1), &value) || value.empty()) {
      return Status::InvalidArgument("--object-store: parameter '" + std::string(pair) +
                                     "' has no value");
    }
    if (name == "endpoint") {
      while (!value.empty() && value.back() == '/') value.pop_back();
      out.s3.endpoint = value;
    } else if (name == "region") {
      out.s3.region = value;
    } else if (name == "payload") {
      if (value != "signed" && value != "unsigned") {
        return Status::InvalidArgument("--object-store: payload is signed or unsigned");
      }
      out.s3.payload =
          value == "signed" ? S3Config::Payload::kSigned : S3Config::Payload::kUnsigned;
    } else if (name == "addressing") {
      if (value != "path" && value != "virtual") {
        return Status::InvalidArgument("--object-store: addressing is path or virtual");
      }
      addressing = value;
    } else {
      return Status::InvalidArgument("--object-store: unknown parameter '" + name +
                                     "' (endpoint, region, addressing, payload)");
    }
  }
  if (out.s3.endpoint.empty()) {
    out.s3.endpoint = "https://s3." + out.s3.region + ".amazonaws.com";
    out.s3.virtual_hosted = addressing != "path";
  } else {
    out.s3.virtual_hosted = addressing == "virtual";
    if (out.s3.endpoint.rfind("http://", 0) != 0 && out.s3.endpoint.rfind("https://", 0) != 0) {
      return Status::InvalidArgument(
          "--object-store: endpoint must start with http:// or https://");
    }
    if (out.s3.endpoint.find('/', out.s3.endpoint.find("://") + 3) != std::string::npos) {
      return Status::InvalidArgument("--object-store: endpoint is scheme://HOST[:PORT], no path");
    }
  }
  return out;
}

Result<std::unique_ptr<ObjectStore>> OpenObjectStore(std::string_view uri, const GetEnv& env) {
  ARCHIL_ASSIGN_OR_RETURN(StoreUri parsed, ParseStoreUri(uri, env));
  if (parsed.kind == StoreUri::Kind::kDir) {
    ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<DirStore> dir, DirStore::Open(parsed.path));
    return std::unique_ptr<ObjectStore>(std::move(dir));
  }
  ARCHIL_ASSIGN_OR_RETURN(parsed.s3.credentials, LoadAwsCredentials(env));
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<S3Store> s3, S3Store::Open(std::move(parsed.s3)));
  return std::unique_ptr<ObjectStore>(std::move(s3));
}

}  // namespace archil::store
