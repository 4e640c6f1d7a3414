// MemoryStore: an in-memory ObjectStore for the tier's unit tests, that never links and can be
// made to fail (SetDown). Not for anything shipped.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "base/mutex.h"
#include "store/object_store.h"

namespace archil::tier {

// The whole content of a local file ("" if it cannot be read).
inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An in-memory store that never links, enforces both conditions (etags change with every Put),
// and whose Put/PutFile can be made to fail.
class MemoryStore final : public store::ObjectStore {
 public:
  Result<std::string> Put(std::string_view key, std::string_view data,
                          const store::PutOptions& options) override {
    MutexLock lock(&mu_);
    ++puts_;
    if (down_) return Status::Unavailable("the store is down");
    const std::string k(key);
    if (options.condition == store::Condition::kIfAbsent && objects_.count(k)) {
      return Status::AlreadyExists("exists");
    }
    if (options.condition == store::Condition::kIfMatch &&
        (!objects_.count(k) || etags_[k] != options.etag)) {
      return Status::FailedPrecondition("the etag does not match");
    }
    objects_[k] = std::string(data);
    etags_[k] = std::string("e") + std::to_string(puts_);
    return etags_[k];
  }
  Result<FileUpload> PutFile(std::string_view key, const std::string& path,
                             uint64_t size) override {
    const std::string data = ReadWholeFile(path);
    if (data.size() != size) return Status::IoError("short file");
    ARCHIL_ASSIGN_OR_RETURN(std::string etag, Put(key, data, {store::Condition::kIfAbsent, ""}));
    return FileUpload{etag, false};
  }
  Result<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override {
    MutexLock lock(&mu_);
    auto it = objects_.find(std::string(key));
    if (it == objects_.end()) return Status::NotFound("no object");
    if (offset >= it->second.size()) return std::string();
    return it->second.substr(offset, length);
  }
  Result<store::ObjectInfo> Head(std::string_view key) override {
    MutexLock lock(&mu_);
    auto it = objects_.find(std::string(key));
    if (it == objects_.end()) return Status::NotFound("no object");
    return store::ObjectInfo{it->first, it->second.size(), etags_[it->first]};
  }
  Result<store::ListPage> List(std::string_view prefix, std::string_view start_after,
                               size_t limit) override {
    MutexLock lock(&mu_);
    store::ListPage page;
    for (auto it = objects_.upper_bound(std::string(start_after)); it != objects_.end(); ++it) {
      if (!it->first.starts_with(prefix)) continue;
      if (page.objects.size() == limit) {
        page.truncated = true;
        break;
      }
      page.objects.push_back({it->first, it->second.size(), etags_[it->first]});
    }
    return page;
  }
  Status Delete(std::string_view key) override {
    MutexLock lock(&mu_);
    objects_.erase(std::string(key));
    etags_.erase(std::string(key));
    return Status::Ok();
  }
  bool EnforcesConditions() const override { return true; }
  std::string Describe() const override { return "memory"; }

  void SetDown(bool down) {
    MutexLock lock(&mu_);
    down_ = down;
  }
  void Set(const std::string& key, std::string data) {
    MutexLock lock(&mu_);
    objects_[key] = std::move(data);
    etags_[key] = "set" + std::to_string(++puts_);
  }
  std::map<std::string, std::string> objects() {
    MutexLock lock(&mu_);
    return objects_;
  }

 private:
  Mutex mu_;
  std::map<std::string, std::string> objects_ ARCHIL_GUARDED_BY(mu_);
  std::map<std::string, std::string> etags_ ARCHIL_GUARDED_BY(mu_);
  bool down_ ARCHIL_GUARDED_BY(mu_) = false;
  int puts_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil::tier
