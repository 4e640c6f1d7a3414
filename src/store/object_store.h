// ObjectStore: the bucket a server keeps its disks in (docs/tiering.md, docs/formats.md §8).
//
// Two implementations: DirStore (dir://PATH, a directory on a local or mounted file system, the
// embedded default) and S3Store (s3://BUCKET[/PREFIX], any S3-compatible store, over libcurl with
// our SigV4 signer). OpenObjectStore (store_uri.h) picks one from a URI.
//
// Keys are '/'-separated names relative to the store's prefix ("disks/0001/log/3/17"). A valid
// key (ValidateKey) is 1..900 bytes of printable ASCII other than '\\', has no empty, "." or ".."
// component and does not start or end with '/'. Every method refuses any other key with
// kInvalidArgument before it touches the store.
//
// Errors, the same for every implementation:
//   kNotFound           the key (Get, Head) or the bucket (every call) does not exist
//   kAlreadyExists      Put/PutFile with kIfAbsent on a key that exists
//   kFailedPrecondition Put with kIfMatch whose etag is not the object's (or it is absent)
//   kPermissionDenied   the store refused the credentials
//   kUnavailable        the store did not answer, or answered 5xx/throttled, after every retry
//   kCorruption         a reply that is not what the protocol says (bad XML, short body)
//   kNoSpace, kIoError  (DirStore) the local file system's errors
// A failed Put may still have stored the object (the reply was lost): a later kIfAbsent Put of
// the same key says kAlreadyExists, and the caller compares contents (docs/tiering.md §1).
//
// Thread-safety: every implementation is safe for concurrent use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace archil::store {

// The condition a write is made under (docs/tiering.md §5, the bucket's fence).
enum class Condition {
  kNone,      // overwrite whatever is there
  kIfAbsent,  // If-None-Match: *   (only if no object has the key)
  kIfMatch,   // If-Match: <etag>   (only if the object is the one read)
};

struct PutOptions {
  Condition condition = Condition::kNone;
  std::string etag;  // for kIfMatch
};

struct ObjectInfo {
  std::string key;  // relative to the store's prefix
  uint64_t size = 0;
  std::string etag;  // opaque; quotes stripped
};

struct ListPage {
  std::vector<ObjectInfo> objects;  // in key order (bytewise)
  bool truncated = false;           // more keys follow the last one
};

// Get's length meaning "to the end of the object".
inline constexpr uint64_t kToEnd = UINT64_MAX;

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Stores `data` under `key` under `options`; returns the new object's etag.
  virtual Result<std::string> Put(std::string_view key, std::string_view data,
                                  const PutOptions& options) = 0;
  // Stores the first `size` bytes of the local file `path` under `key`, if no object has the key
  // (kIfAbsent). The file must not change while this runs (sealed segments are immutable).
  // DirStore links the file when it is on the store's file system (docs/tiering.md §1; `linked`
  // says so) and copies it otherwise; S3Store uploads it in parts when it is large.
  struct FileUpload {
    std::string etag;
    bool linked = false;
  };
  virtual Result<FileUpload> PutFile(std::string_view key, const std::string& path,
                                     uint64_t size) = 0;
  // Bytes [offset, offset + length) of the object, fewer if it ends first (none at or past its
  // end). kToEnd reads to the end.
  virtual Result<std::string> Get(std::string_view key, uint64_t offset = 0,
                                  uint64_t length = kToEnd) = 0;
  virtual Result<ObjectInfo> Head(std::string_view key) = 0;
  // At most `limit` (1..1000) keys that start with `prefix` and sort after `start_after`.
  virtual Result<ListPage> List(std::string_view prefix, std::string_view start_after,
                                size_t limit) = 0;
  // Removes the object; OK if there is none.
  virtual Status Delete(std::string_view key) = 0;
  // True if the object under `key` is the local file `path` itself (an earlier PutFile linked
  // it); false otherwise, on any error, and always for stores that never link.
  virtual bool HoldsFile(std::string_view key, const std::string& path) {
    (void)key;
    (void)path;
    return false;
  }

  // Whether Put's conditions are enforced by the store (DirStore: always; S3Store: probed when
  // it is opened, since some S3-compatible stores ignore them; docs/tiering.md §5).
  virtual bool EnforcesConditions() const = 0;
  // What the store is, for logs and `archil status`: "dir:///var/lib/archil/objects",
  // "s3://bucket/prefix at http://127.0.0.1:9000". Never a credential.
  virtual std::string Describe() const = 0;
};

// OK if `key` is a valid key (above); kInvalidArgument naming what is wrong otherwise.
Status ValidateKey(std::string_view key);
// As ValidateKey, for a List prefix: may be empty, and may end with '/'.
Status ValidatePrefix(std::string_view prefix);

// Every object under `prefix`, in key order (List, page after page).
Result<std::vector<ObjectInfo>> ListAll(ObjectStore* store, std::string_view prefix);

}  // namespace archil::store
