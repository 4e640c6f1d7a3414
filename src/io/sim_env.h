// SimEnv: an in-memory file system that can lose power.
//
// It keeps two states: the volatile one every call sees, and the durable one a power loss reverts
// to. The model is what ext4 with data=ordered guarantees an application (env.h states the
// contract; this is its adversarial implementation, keeping as little as the contract allows):
//
//   * Every inode (file or directory) has an id. A directory maps names to inode ids twice: its
//     volatile entries and its durable entries.
//   * File contents: Pwrite, Truncate, Allocate(!keep_size) and PunchHole change the volatile
//     bytes only. File::Sync copies the volatile bytes and size to the durable ones.
//   * Names: OpenFile(create), CreateDir, Link, Unlink, RemoveDir and Rename change volatile
//     entries only. SyncDir(d) copies d's volatile entries to its durable entries. A Rename between
//     two directories ties them together until one is synced; syncing either then syncs both (as
//     the journal commits the rename as one transaction), so the file shows under exactly one name.
//   * Power loss (PowerOff, then Restart(seed)):
//       - each directory gets back its durable entries; inodes no longer reachable from "/" through
//         durable entries vanish (a file created, synced, but whose directory was never synced is
//         lost; an unlink that was not synced is undone);
//       - each surviving file gets back its durable size; within that size, each 512-byte sector
//         whose volatile bytes differ from its durable bytes independently either reached the disk
//         (takes the volatile bytes; zeros where the volatile file had been shortened) or did not
//         (keeps the durable bytes), decided by a RNG seeded with `seed`. So un-synced writes can
//         be torn, only at sector boundaries and only within their own range, and un-synced growth
//         of a file is lost (unless Options::unsynced_growth_may_survive).
//   * Between PowerOff and Restart every call fails with EIO (a machine without power); after
//     Restart, File handles and locks from before fail with EIO / are released, as a dead
//     process's would be. The env is then usable again: a reboot.
//   * Capacity: the sum over live files (with a name or an open handle) of max(size, allocated
//     extent) may not exceed capacity_bytes; a write that would pass it fails with ENOSPC and no
//     side effect. A Truncate that does not grow the file gives back everything past the new end
//     (what Allocate(keep_size) reserved there included); PunchHole does not give space back (a
//     simplification).
//   * Fault injection: FaultRules make matching operations fail with a chosen errno before they
//     have any effect, or cut the power just before them (a crash at an exact point).
//
// Errors carry the errno a Linux kernel would return, via Status::FromErrno. OpenOptions::direct
// and OpenOptions::mode are accepted and ignored (no alignment checks, no permissions).
//
// Thread-safety: thread-safe; one mutex serialises all operations. REQUIRES: the SimEnv outlives
// every File and FileLock it hands out.
#pragma once

#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "io/env.h"

namespace archil::io {

// Operation kinds, a bit set, for FaultRule::ops.
enum SimOp : uint32_t {
  kSimOpen = 1u << 0,       // OpenFile (and the create in LockFile)
  kSimRead = 1u << 1,       // File::Pread
  kSimWrite = 1u << 2,      // File::Pwrite
  kSimSync = 1u << 3,       // File::Sync
  kSimTruncate = 1u << 4,   // File::Truncate
  kSimAllocate = 1u << 5,   // File::Allocate, File::PunchHole
  kSimCreateDir = 1u << 6,  // CreateDir
  kSimRemoveDir = 1u << 7,  // RemoveDir
  kSimSyncDir = 1u << 8,    // SyncDir
  kSimRename = 1u << 9,     // Rename
  kSimLink = 1u << 10,      // Link
  kSimUnlink = 1u << 11,    // Unlink
  kSimList = 1u << 12,      // ListDir
  kSimStat = 1u << 13,      // Stat, FileExists, FileSize, File::Size
  kSimLock = 1u << 14,      // LockFile, UnlockFile
  kSimAnyOp = 0xffffffffu,
  // Operations that change state (volatile or durable).
  kSimMutating = kSimOpen | kSimWrite | kSimSync | kSimTruncate | kSimAllocate | kSimCreateDir |
                 kSimRemoveDir | kSimSyncDir | kSimRename | kSimLink | kSimUnlink,
};

// Makes matching operations fail. An operation matches when its kind is in `ops` and one of its
// paths contains `path_contains` (empty matches all). The first `skip` matches pass; the next
// `times` (0: all further) fail with `error` and no effect; with power_off the power is also cut
// just before the operation (every later call fails with EIO until Restart).
struct FaultRule {
  uint32_t ops = kSimAnyOp;
  std::string path_contains;
  uint64_t skip = 0;
  uint64_t times = 1;
  int error = EIO;
  bool power_off = false;
};

class SimFile;
class SimLock;

class SimEnv final : public Env {
 public:
  static constexpr uint64_t kSectorSize = 512;

  struct Options {
    uint64_t capacity_bytes = UINT64_MAX;
    const Clock* clock = nullptr;  // for mtimes; nullptr: SystemClock::Instance()
    // Off (the default): un-synced growth of a file is always lost. On: at a power loss each
    // grown file, by a coin, either loses its growth or keeps its volatile size (the journal
    // committed the size), each sector past the durable size then holding the volatile bytes or
    // zeros independently. Exercises recovery from torn tails (a WAL's last records).
    bool unsynced_growth_may_survive = false;
    // With unsynced_growth_may_survive: only files a directory names with this suffix ("" for
    // every file) may keep a torn tail; the others lose their un-synced growth.
    std::string unsynced_growth_suffix;
  };

  // An empty file system holding only "/", which is durable.
  explicit SimEnv(const Options& options);
  SimEnv() : SimEnv(Options()) {}
  ~SimEnv() override;

  // Env.
  Result<std::unique_ptr<File>> OpenFile(const std::string& path,
                                         const OpenOptions& options) override ARCHIL_EXCLUDES(mu_);
  Status CreateDir(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Status RemoveDir(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Status SyncDir(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Status Rename(const std::string& from, const std::string& to) override ARCHIL_EXCLUDES(mu_);
  Status Link(const std::string& from, const std::string& to) override ARCHIL_EXCLUDES(mu_);
  Status Unlink(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Result<std::vector<std::string>> ListDir(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Result<FileInfo> Stat(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Result<bool> FileExists(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  // total = the capacity (2^50 when unlimited), free = capacity - used.
  Result<SpaceInfo> Space(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Result<uint64_t> FileSize(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override ARCHIL_EXCLUDES(mu_);
  Status UnlockFile(std::unique_ptr<FileLock> lock) override ARCHIL_EXCLUDES(mu_);

  // Power. PowerOff cuts the power now; Restart applies the power-loss model above with `seed`
  // and powers on again (fault rules are cleared). SimulatePowerLoss does both.
  void PowerOff() ARCHIL_EXCLUDES(mu_);
  void Restart(uint64_t seed) ARCHIL_EXCLUDES(mu_);
  void SimulatePowerLoss(uint64_t seed) {
    PowerOff();
    Restart(seed);
  }
  bool powered_off() const ARCHIL_EXCLUDES(mu_);

  // Fault injection.
  void AddFaultRule(FaultRule rule) ARCHIL_EXCLUDES(mu_);
  void ClearFaultRules() ARCHIL_EXCLUDES(mu_);
  // Number of faults injected so far (failed operations, power cuts included).
  uint64_t injected_faults() const ARCHIL_EXCLUDES(mu_);
  // The path of the operation the last injected fault hit ("" if none yet).
  std::string last_fault_path() const ARCHIL_EXCLUDES(mu_);

  // Capacity.
  void SetCapacity(uint64_t bytes) ARCHIL_EXCLUDES(mu_);
  uint64_t used_bytes() const ARCHIL_EXCLUDES(mu_);

  // Number of operations attempted so far (for picking crash points).
  uint64_t op_count() const ARCHIL_EXCLUDES(mu_);

 private:
  friend class SimFile;

  struct Inode {
    bool is_dir = false;
    std::string data;                                 // files: volatile contents
    std::string durable;                              // files: contents as of the last Sync
    uint64_t reserved = 0;                            // files: end of the extent Allocate reserved
    std::map<std::string, uint64_t> entries;          // dirs: volatile
    std::map<std::string, uint64_t> durable_entries;  // dirs: as of the last SyncDir
    std::set<uint64_t> linked_dirs;  // dirs: sharing an un-synced cross-directory rename
    uint64_t nlink = 0;              // volatile entries naming this inode
    uint64_t durable_nlink = 0;      // durable entries (of any live directory) naming it
    uint64_t open = 0;               // open File handles
    uint64_t charged = 0;            // bytes counted in used_
    int64_t mtime_micros = 0;
  };

  // Where a path leads: the parent directory, the last component, and the inode (0: none).
  struct Walked {
    uint64_t parent = 0;
    std::string name;
    uint64_t ino = 0;
  };

  // 0 and *out filled, or the errno (EINVAL: not absolute; ENOENT/ENOTDIR: a missing or
  // non-directory ancestor).
  int Walk(const std::string& path, Walked* out) const ARCHIL_REQUIRES(mu_);
  // Counts the operation and applies the fault rules; OK to proceed.
  Status Check(SimOp op, const std::string& path, const std::string& path2 = "")
      ARCHIL_REQUIRES(mu_);
  uint64_t NewInode(bool is_dir) ARCHIL_REQUIRES(mu_);
  // Space the inode should be charged for now.
  static uint64_t Charge(const Inode& n);
  // Fails with ENOSPC if growing `n` to `new_charge` bytes would pass the capacity.
  Status CheckSpace(const Inode& n, uint64_t new_charge, const std::string& path) const
      ARCHIL_REQUIRES(mu_);
  void Recharge(Inode& n) ARCHIL_REQUIRES(mu_);
  // Frees the inode if nothing (name, durable name, handle) refers to it any more.
  void MaybeFree(uint64_t ino) ARCHIL_REQUIRES(mu_);
  void Touch(Inode& n) ARCHIL_REQUIRES(mu_);
  Result<uint64_t> OpenInode(const std::string& path, const OpenOptions& options)
      ARCHIL_REQUIRES(mu_);

  // For SimFile. `gen` is the power generation the handle was opened in.
  Status CheckHandle(uint64_t gen, const std::string& path) const ARCHIL_REQUIRES(mu_);
  Result<size_t> FilePread(uint64_t gen, uint64_t ino, const std::string& path, uint64_t offset,
                           size_t n, char* buf) ARCHIL_EXCLUDES(mu_);
  Status FilePwrite(uint64_t gen, uint64_t ino, const std::string& path, uint64_t offset,
                    std::string_view data) ARCHIL_EXCLUDES(mu_);
  Status FileSync(uint64_t gen, uint64_t ino, const std::string& path) ARCHIL_EXCLUDES(mu_);
  Result<uint64_t> FileSizeOf(uint64_t gen, uint64_t ino, const std::string& path)
      ARCHIL_EXCLUDES(mu_);
  Status FileTruncate(uint64_t gen, uint64_t ino, const std::string& path, uint64_t size)
      ARCHIL_EXCLUDES(mu_);
  Status FileAllocate(uint64_t gen, uint64_t ino, const std::string& path, uint64_t offset,
                      uint64_t len, bool keep_size, bool punch) ARCHIL_EXCLUDES(mu_);
  void FileClose(uint64_t gen, uint64_t ino) ARCHIL_EXCLUDES(mu_);

  struct RuleState {
    FaultRule rule;
    uint64_t matched = 0;
    uint64_t fired = 0;
  };

  const Clock* const clock_;
  const bool growth_may_survive_;
  const std::string growth_suffix_;
  mutable Mutex mu_;
  std::map<uint64_t, Inode> inodes_ ARCHIL_GUARDED_BY(mu_);
  uint64_t next_ino_ ARCHIL_GUARDED_BY(mu_) = 2;
  uint64_t capacity_ ARCHIL_GUARDED_BY(mu_);
  uint64_t used_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t generation_ ARCHIL_GUARDED_BY(mu_) = 1;
  bool powered_off_ ARCHIL_GUARDED_BY(mu_) = false;
  std::vector<RuleState> rules_ ARCHIL_GUARDED_BY(mu_);
  std::set<uint64_t> locked_ ARCHIL_GUARDED_BY(mu_);
  uint64_t op_count_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t injected_faults_ ARCHIL_GUARDED_BY(mu_) = 0;
  std::string last_fault_path_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::io
