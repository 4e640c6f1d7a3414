#include "store/object_store.h"

namespace archil::store {
namespace {

constexpr size_t kMaxKey = 900;  // S3 allows 1024 bytes; a prefix of up to 124 must still fit

Status CheckChars(std::string_view s, std::string_view what) {
  for (unsigned char c : s) {
    if (c < 0x21 || c > 0x7e || c == '\\') {
      return Status::InvalidArgument(std::string(what) +
                                     " holds a byte that is not printable ASCII (or is '\\')");
    }
  }
  return Status::Ok();
}

Status CheckComponents(std::string_view s, std::string_view what) {
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('/', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      return Status::InvalidArgument(std::string(what) + " '" + std::string(s) +
                                     "' has an empty, '.' or '..' component");
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace

Status ValidateKey(std::string_view key) {
  if (key.empty()) return Status::InvalidArgument("object key is empty");
  if (key.size() > kMaxKey) {
    return Status::InvalidArgument("object key is longer than " + std::to_string(kMaxKey));
  }
  ARCHIL_RETURN_IF_ERROR(CheckChars(key, "object key"));
  return CheckComponents(key, "object key");
}

Status ValidatePrefix(std::string_view prefix) {
  if (prefix.empty()) return Status::Ok();
  if (prefix.size() > kMaxKey) {
    return Status::InvalidArgument("object prefix is longer than " + std::to_string(kMaxKey));
  }
  ARCHIL_RETURN_IF_ERROR(CheckChars(prefix, "object prefix"));
  if (prefix.back() == '/') prefix.remove_suffix(1);
  return CheckComponents(prefix, "object prefix");
}

Result<std::vector<ObjectInfo>> ListAll(ObjectStore* store, std::string_view prefix) {
  std::vector<ObjectInfo> out;
  std::string after;
  for (;;) {
    ARCHIL_ASSIGN_OR_RETURN(ListPage page, store->List(prefix, after, 1000));
    for (ObjectInfo& o : page.objects) out.push_back(std::move(o));
    if (!page.truncated || page.objects.empty()) return out;
    after = out.back().key;
  }
}

}  // namespace archil::store
