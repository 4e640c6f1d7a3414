// MountCore: what a mount does between the kernel's requests and a disk (docs/semantics.md §5),
// knowing nothing of FUSE. The FUSE adapter (src/fuse) makes one call here per request; tests
// drive it directly over the reference model.
//
// What it adds to a posix::FileSystem:
//  - node ids: the kernel's node 1 is the mounted root (the disk's root, or DISK:/SUBDIR's
//    directory); the two numbers swap, every other node id is the disk's inode number;
//  - ownership of new nodes (semantics.md §5.9): the caller's uid, and the caller's gid unless
//    the parent is set-group-ID, in which case the parent's gid (and a new directory inherits
//    S_ISGID). The parent's mode and gid come from attributes this mount has seen, so a create
//    costs no extra round trip once the parent was looked up;
//  - open files, locally: an open costs no request. Only when this mount removes the last name
//    of an inode it has open (unlink, rmdir, rename over) does it first hold the inode on the
//    server (Open), so the file outlives its name until the last local close (Release);
//  - the kernel's capability probe: it asks for `security.capability` before every write(2)
//    (to clear it), so the answer is remembered per inode once the server gave it, and kept up to
//    date by this mount's own setxattr/removexattr of that name;
//  - read-ahead of files read in order (fs/read_ahead.h), kept coherent with this mount's own
//    writes, truncations and fallocates, and of small files read one after another in the order
//    their directory was listed (fs/listing_order.h);
//  - lookups of names that are not there, in directories this mount created (fs/known_names.h):
//    answered ENOENT without a request;
//  - the inode an unlink removes with its only name, from the answers that named it
//    (fs/last_names.h), so that the file system may answer the unlink itself
//    (FileSystem::UnlinkLast), and a lookup of such a name (FileSystem::LookupSeen: the kernel
//    asks again before every exclusive create, `mkdir -p` of a path that exists);
//  - the READDIR past the end of a listing, answered empty without a request while no name
//    changed since the disk said the listing ended there (fs/listing_ends.h; writable mounts);
//  - read-only mounts: every mutation is EROFS.
//
// Errors are the disk's errno (ErrnoFor), which the adapter returns to the kernel as they are.
//
// Thread-safety: safe for concurrent use; calls for different inodes run in parallel. The
// FileSystem's own atomicity is relied on for each operation.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "fs/known_names.h"
#include "fs/last_names.h"
#include "fs/listing_ends.h"
#include "fs/listing_order.h"
#include "fs/read_ahead.h"
#include "posix/file_system.h"

namespace archil::fs {

using posix::Attr;
using posix::Ino;

// The kernel's node id (FUSE nodeid); 1 is the mount's root.
using NodeId = uint64_t;
inline constexpr NodeId kRootNode = 1;

// Who asks (fuse_req_ctx): the owner of what it creates.
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

struct MountOptions {
  bool read_only = false;
  size_t read_ahead_bytes = 0;  // the mount's read-ahead window (ReadAhead), in chunks of a
                                // quarter of it (4 KiB to 1 MiB); 0: none
};

// Attributes as the kernel gets them: `node` is the node id (the root swap applied); `attr.ino`
// stays the disk's number, which st_ino reports.
struct NodeAttr {
  NodeId node = 0;
  Attr attr;
};

struct DirItem {
  std::string name;
  uint64_t ino = 0;              // d_ino: the disk's number (for "..", the directory's own)
  uint32_t type = 0;             // S_IFMT bits
  uint64_t offset = 0;           // the kernel's offset to resume after this entry
  std::optional<NodeAttr> attr;  // `plus` listings, except "." and ".."
};

struct CoreStats {
  uint64_t open_files = 0;              // local handles of files and directories
  uint64_t held_orphans = 0;            // inodes held on the server because their last name went
  uint64_t known_dirs = 0;              // directories whose names this mount knows (KnownNames)
  uint64_t local_negative_lookups = 0;  // lookups answered ENOENT without a request
  uint64_t local_listing_ends = 0;      // READDIRs past a listing's end answered without one
  uint64_t local_listings = 0;          // listings again answered from the last one (ReadDir)
  ReadAheadStats read_ahead;
};

class MountCore {
 public:
  // REQUIRES: `fs` outlives this. `root`: the disk inode the mount shows as its root.
  MountCore(posix::FileSystem* fs, Ino root, MountOptions options);

  NodeId NodeOf(Ino ino) const;
  Ino InoOf(NodeId node) const;

  Result<NodeAttr> Lookup(NodeId parent, std::string_view name) ARCHIL_EXCLUDES(mu_);
  Result<NodeAttr> GetAttr(NodeId node) ARCHIL_EXCLUDES(mu_);
  Result<NodeAttr> SetAttr(NodeId node, const posix::SetAttrRequest& request) ARCHIL_EXCLUDES(mu_);
  Result<std::string> Readlink(NodeId node);

  // `mode`: type bits | permission bits, the umask already applied by the kernel.
  Result<NodeAttr> Mknod(NodeId parent, std::string_view name, uint32_t mode, uint32_t rdev,
                         Caller caller) ARCHIL_EXCLUDES(mu_);
  Result<NodeAttr> Mkdir(NodeId parent, std::string_view name, uint32_t mode, Caller caller)
      ARCHIL_EXCLUDES(mu_);
  Result<NodeAttr> Symlink(NodeId parent, std::string_view name, std::string_view target,
                           Caller caller) ARCHIL_EXCLUDES(mu_);
  Result<NodeAttr> Link(NodeId node, NodeId new_parent, std::string_view new_name)
      ARCHIL_EXCLUDES(mu_);
  Status Unlink(NodeId parent, std::string_view name) ARCHIL_EXCLUDES(mu_);
  Status Rmdir(NodeId parent, std::string_view name) ARCHIL_EXCLUDES(mu_);
  Status Rename(NodeId parent, std::string_view name, NodeId new_parent, std::string_view new_name,
                uint32_t flags) ARCHIL_EXCLUDES(mu_);

  // A local handle of a file (Open) or a directory (OpenDir); no request. Returns the handle's
  // number.
  uint64_t Open(NodeId node) ARCHIL_EXCLUDES(mu_) { return OpenNode(node, false); }
  uint64_t OpenDir(NodeId node) ARCHIL_EXCLUDES(mu_) { return OpenNode(node, true); }
  // Create: Mknod of a regular file, then Open.
  Result<NodeAttr> Create(NodeId parent, std::string_view name, uint32_t mode, Caller caller,
                          uint64_t* handle) ARCHIL_EXCLUDES(mu_);
  // Closes a handle; the last local close of a held inode releases it on the server.
  Status Release(NodeId node) ARCHIL_EXCLUDES(mu_);
  // fsync of a file or a directory: every operation this mount answered so far made durable
  // (the whole mount's, as ext4's fsync commits its whole running transaction).
  Status Sync() { return fs_->Sync(); }

  Result<std::string> Read(NodeId node, uint64_t offset, size_t length);
  // Write, a SetAttr with a size and Fallocate invalidate the inode's read-ahead before they are
  // sent and after they are answered.
  // `sync`: the caller asked for durability (O_SYNC, O_DSYNC); else a write-behind
  // (FileSystem::WriteBehind), durable at the next Sync.
  Result<NodeAttr> Write(NodeId node, uint64_t offset, std::string_view data, bool sync = true)
      ARCHIL_EXCLUDES(mu_);
  Status Fallocate(NodeId node, uint32_t mode, uint64_t offset, uint64_t length);

  // Entries after `offset` (0: the start; "." and ".." are offsets 1 and 2), at most `max`.
  // `eof` is set when the listing ended. `plus`: with each entry's attributes (READDIRPLUS: the
  // kernel then needs no LOOKUP per name), one request to the disk as without. A listing from the
  // start of the directory listed whole last, with no change of names since, is answered from that
  // listing, once, without attributes (`rm -rf` reads one page of each directory, closes it and
  // lists it again: the kernel keeps only listings read to their end).
  Result<std::vector<DirItem>> ReadDir(NodeId dir, uint64_t offset, size_t max, bool* eof,
                                       bool plus = false) ARCHIL_EXCLUDES(mu_);

  Result<std::string> GetXattr(NodeId node, std::string_view name);
  Status SetXattr(NodeId node, std::string_view name, std::string_view value, uint32_t flags);
  Result<std::vector<std::string>> ListXattr(NodeId node);
  Status RemoveXattr(NodeId node, std::string_view name);
  Result<posix::StatFs> Statfs();

  CoreStats stats() const ARCHIL_EXCLUDES(mu_);
  bool read_only() const { return options_.read_only; }

 private:
  struct Parent {
    uint32_t mode = 0;
    uint32_t gid = 0;
  };
  struct OpenInode {
    uint32_t handles = 0;
    bool dir = false;
    bool held = false;  // Open sent to the server: its last name went while open here
  };
  // What a removal can remove: unlink a non-directory, rmdir a directory, rename's target either.
  enum class Victim { kNonDir, kDir, kAny };

  uint64_t OpenNode(NodeId node, bool dir) ARCHIL_EXCLUDES(mu_);

  Status Writable() const;
  // Records what the mount knows of `attr` and returns it as the kernel sees it.
  NodeAttr Seen(const Attr& attr) ARCHIL_EXCLUDES(mu_);
  Result<NodeAttr> SeenOr(Result<Attr> r) ARCHIL_EXCLUDES(mu_);
  Result<Parent> ParentOf(Ino parent) ARCHIL_EXCLUDES(mu_);
  Result<posix::Owner> OwnerFor(Ino parent, Caller caller, uint32_t* mode) ARCHIL_EXCLUDES(mu_);
  // Before a removal of (parent, name): if the victim is open here and not yet held, hold it.
  // Costs a LOOKUP only while something of the victim's kind is open (`rm -rf` keeps only
  // directories open while it unlinks files) and the mount has not seen the name as its inode's
  // only one (LastNames). Returns whether the victim is certainly not open here (then
  // FileSystem::UnlinkLast may answer an unlink before the disk has it).
  Result<bool> HoldIfOpen(Ino parent, std::string_view name, Victim kind) ARCHIL_EXCLUDES(mu_);
  // Returns `answer`, the disk's answer to a request about (dir, name) begun at `generation`
  // (LastNames::Generation), after recording which inode it names.
  Result<Attr> Named(Ino dir, std::string_view name, uint64_t generation, Result<Attr> answer);
  // Returns `answer`, the disk's answer to a removal of (dir, name), after recording it.
  Status Removing(Ino dir, std::string_view name, Status answer);
  // Runs `change` (a change of `ino`'s data or size) between two invalidations of its read-ahead:
  // no chunk read before the change is answered survives it (fs/read_ahead.h, Coherence).
  template <typename Change>
  auto ChangingData(Ino ino, Change change) {
    read_ahead_.Invalidate(ino);
    auto r = change();
    read_ahead_.Invalidate(ino);
    return r;
  }

  posix::FileSystem* const fs_;
  const Ino root_;
  const MountOptions options_;
  ReadAhead read_ahead_;
  ListingOrder order_;
  KnownNames known_;
  LastNames last_;
  ListingEnds ends_;
  std::atomic<uint64_t> local_negative_lookups_{0};
  std::atomic<uint64_t> local_listing_ends_{0};
  std::atomic<uint64_t> local_listings_{0};

  // Remembers that `ino` has no security.capability.
  void NoCapabilities(Ino ino) ARCHIL_EXCLUDES(mu_);

  mutable Mutex mu_;
  std::unordered_map<uint64_t, Parent> dirs_ ARCHIL_GUARDED_BY(mu_);  // by disk ino
  std::unordered_map<uint64_t, OpenInode> open_ ARCHIL_GUARDED_BY(mu_);
  // Inodes known to have no security.capability (see above); bounded like dirs_.
  std::unordered_set<uint64_t> no_caps_ ARCHIL_GUARDED_BY(mu_);
  uint64_t next_handle_ ARCHIL_GUARDED_BY(mu_) = 1;
  uint64_t open_dirs_ ARCHIL_GUARDED_BY(mu_) = 0;  // entries of open_ that are directories
  uint64_t held_ ARCHIL_GUARDED_BY(mu_) = 0;
  // The last listing read whole in one page from its start, for a listing of the same directory
  // again while no change of names began or ended (ListingEnds::Changes) since before it was
  // asked for: its entries without attributes (they may have changed meanwhile), their names
  // end to end in one string (two allocations per listing kept, not one per name).
  struct LastListing {
    struct Entry {
      uint64_t ino = 0;
      uint64_t offset = 0;
      uint32_t type = 0;
      size_t name_end = 0;  // in `names`, where this entry's name ends (the last one's began)
    };
    uint64_t dir = 0;
    uint64_t changes = 0;
    std::vector<Entry> entries;
    std::string names;
  };
  std::optional<LastListing> last_listing_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::fs
