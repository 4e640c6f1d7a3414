// A full disk, at random, against a model of the files: writes large and small, overwrites,
// truncates, deletes, checkpoints, clean restarts and power cuts, on a simulated file system a few
// MiB larger than what the engine starts with.
//
// What must hold in every round:
//   * a write, create or truncate either does what the model does or fails with ENOSPC and
//     changes nothing; a delete (unlink, a truncate that shrinks, a checkpoint's delete) never
//     fails;
//   * every acknowledged operation survives a restart and a power cut (the one in flight at the
//     cut may or may not have happened); the engine's invariants hold after each;
//   * space comes back without a restart: once every file and checkpoint is deleted, the segment
//     files hold at most an eighth of a segment, and writes of three quarters of what the disk
//     can hold succeed at once;
//   * RocksDB never meets the full disk itself (the engine never breaks).
//
// Rounds print their seed; ARCHIL_TEST_SEED=S replays round S (ARCHIL_FULL_ROUNDS=N: how many).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "base/log.h"
#include "engine/engine.h"
#include "io/sim_env.h"

namespace archil::engine {
namespace {

using posix::kRootIno;

// The files of the disk as acknowledged: name -> bytes.
using Files = std::map<std::string, std::string>;

struct RoundResult {
  std::string failure;  // empty: the round held
  int enospc = 0;       // writes refused
  int restarts = 0;
  int power_cuts = 0;
};

class FullDisk {
 public:
  explicit FullDisk(uint64_t seed) : seed_(seed), rng_(seed) {}

  RoundResult Run();
  void Dump() {
    for (const char* d : {"/data/db", "/data/segments/0000000000000001"}) {
      uint64_t total = 0;
      Result<std::vector<std::string>> names = env_.ListDir(d);
      if (!names.ok()) continue;
      for (const std::string& n : *names) {
        Result<uint64_t> size = env_.FileSize(std::string(d) + "/" + n);
        if (size.ok()) {
          total += *size;
          std::printf("  %s/%s %llu\n", d, n.c_str(), static_cast<unsigned long long>(*size));
        }
      }
      std::printf("%s: %llu\n", d, static_cast<unsigned long long>(total));
    }
    std::printf("used %llu\n", static_cast<unsigned long long>(env_.used_bytes()));
  }

 private:
  Status Open();
  Status Restart(bool power_cut);
  // The disk holds `want` and every checkpoint its files, and the invariants hold.
  Status Check(const Files& want);
  Status CheckOnce(const Files& want);
  Status CheckFiles(const Files& want);
  // `n` bytes, each 4 KiB block marked differently (a block read from the wrong place shows).
  std::string Bytes(size_t n) {
    std::string s(n, static_cast<char>('a' + rng_() % 26));
    for (size_t i = 0; i < n; i += 4096) s[i] = static_cast<char>('A' + (rng_() % 26));
    return s;
  }
  // One random operation; false with `fail_` set if it went wrong.
  bool Step(int i, bool fill);
  posix::FileSystem* fs() { return *engine_->Disk(DiskNo(1)); }
  uint64_t SegmentBytes();

  const uint64_t seed_;
  std::mt19937_64 rng_;
  io::SimEnv env_;
  FakeClock clock_;
  EngineOptions o_;
  std::unique_ptr<Engine> engine_;
  Files acked_;
  std::map<std::string, Files> ckpts_;  // checkpoint name -> its files
  RoundResult out_;
  std::string fail_;
  uint64_t capacity_above_ = 0;  // bytes the disk can take above what a new engine uses
};

Status FullDisk::Open() {
  engine_.reset();
  ARCHIL_ASSIGN_OR_RETURN(engine_, Engine::Open(o_));
  return Status::Ok();
}

Status FullDisk::Restart(bool power_cut) {
  engine_.reset();
  if (power_cut) {
    env_.PowerOff();
  } else {
    ++out_.restarts;
  }
  // The cut may also come inside the open (its intent replay writes): then power on again.
  for (int attempt = 0;; ++attempt) {
    if (env_.powered_off()) {
      engine_.reset();
      env_.Restart(seed_ * 31 + static_cast<uint64_t>(out_.power_cuts));
      ++out_.power_cuts;
    }
    Status s = Open();
    if (s.ok() || !env_.powered_off() || attempt == 2) return s;
  }
}

Status FullDisk::CheckFiles(const Files& want) {
  posix::FileSystem* f = fs();
  ARCHIL_ASSIGN_OR_RETURN(posix::DirPage page, f->ReadDir(kRootIno, 0, 100000));
  std::vector<std::string> names;
  for (const posix::DirEntry& e : page.entries) {
    if (e.name != "." && e.name != "..") names.push_back(e.name);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> want_names;
  for (const auto& [n, b] : want) want_names.push_back(n);
  if (names != want_names) {
    return Status::Internal("the names differ: " + std::to_string(names.size()) + " on the disk, " +
                            std::to_string(want_names.size()) + " acknowledged");
  }
  for (const auto& [name, bytes] : want) {
    ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, f->Lookup(kRootIno, name));
    if (a.size != bytes.size()) {
      return Status::Internal(name + ": size " + std::to_string(a.size) + ", acknowledged " +
                              std::to_string(bytes.size()));
    }
    ARCHIL_ASSIGN_OR_RETURN(std::string got, f->Read(a.ino, 0, bytes.size() + 1));
    if (got != bytes) return Status::Internal(name + ": the bytes differ");
  }
  return Status::Ok();
}

Status FullDisk::Check(const Files& want) {
  Status s = CheckOnce(want);
  // RocksDB's own threads write too: the power cut may come while the check reads.
  if (!s.ok() && env_.powered_off()) {
    ARCHIL_RETURN_IF_ERROR(Restart(true));
    s = CheckOnce(want);
  }
  return s;
}

Status FullDisk::CheckOnce(const Files& want) {
  ARCHIL_RETURN_IF_ERROR(CheckFiles(want));
  for (const auto& [name, files] : ckpts_) {
    ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<posix::FileSystem> view,
                            engine_->OpenCheckpoint(DiskNo(1), name));
    for (const auto& [fname, bytes] : files) {
      ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, view->Lookup(kRootIno, fname));
      ARCHIL_ASSIGN_OR_RETURN(std::string got, view->Read(a.ino, 0, bytes.size() + 1));
      if (got != bytes) return Status::Internal("checkpoint " + name + ": " + fname + " differs");
    }
  }
  return engine_->CheckInvariants();
}

uint64_t FullDisk::SegmentBytes() {
  const std::string dir = o_.dir + "/segments/0000000000000001";
  Result<std::vector<std::string>> names = env_.ListDir(dir);
  if (!names.ok()) return 0;
  uint64_t total = 0;
  for (const std::string& n : *names) {
    Result<uint64_t> size = env_.FileSize(dir + "/" + n);
    if (size.ok()) total += *size;
  }
  return total;
}

bool FullDisk::Step(int i, bool fill) {
  posix::FileSystem* f = fs();
  const int dice = static_cast<int>(rng_() % 100);
  auto pick = [&]() -> std::optional<std::string> {
    if (acked_.empty()) return std::nullopt;
    auto it = acked_.begin();
    std::advance(it, static_cast<ptrdiff_t>(rng_() % acked_.size()));
    return it->first;
  };
  // Each step is one engine mutation. `apply` changes the model as the mutation does; it runs if
  // the mutation succeeded, or if the power went in it (then it may have happened: the caller
  // checks both). ENOSPC is allowed only where `may_refuse`.
  auto done = [&](const Status& s, const std::string& what, bool may_refuse,
                  const std::function<void()>& apply) {
    if (s.ok() || env_.powered_off()) {
      apply();
      return s.ok();
    }
    if (may_refuse && ErrnoFor(s) == ENOSPC) {
      ++out_.enospc;
      return true;
    }
    fail_ = "op " + std::to_string(i) + " " + what + ": " + s.ToString();
    return false;
  };
  // Phases that fill (mostly writes, a few deletes) and phases that churn, in percent.
  enum Kind { kWrite, kUnlink, kTruncate, kCheckpoint, kDropCheckpoint, kSync, kKinds };
  static constexpr int kFill[kKinds] = {93, 3, 2, 1, 0, 1};
  static constexpr int kChurn[kKinds] = {55, 20, 10, 5, 5, 5};
  const int* weights = fill ? kFill : kChurn;
  int kind = 0;
  for (int acc = weights[0]; kind + 1 < kKinds && dice >= acc; acc += weights[++kind]) {
  }
  std::optional<std::string> name = pick();
  if (kind == kWrite && (!name || rng_() % 8 == 0)) {
    const std::string made = "f" + std::to_string(i);
    Result<posix::Attr> a = f->Mknod(kRootIno, made, S_IFREG | 0644, 0, {});
    return done(a.status(), "create " + made, true, [&] { acked_[made] = ""; });
  }
  if (!name) return true;
  Result<posix::Attr> a = f->Lookup(kRootIno, *name);
  if (!a.ok()) {
    fail_ = "lookup " + *name + ": " + a.status().ToString();
    return false;
  }
  std::string& bytes = acked_[*name];
  if (kind == kWrite) {
    // Small (an intent) or large, at its end or over what it holds.
    const size_t n = rng_() % 4 == 0 ? (64 << 10) + 4096 * (rng_() % 192) : 1 + rng_() % (64 << 10);
    const uint64_t off = bytes.empty() || rng_() % 2 ? bytes.size() : rng_() % bytes.size();
    const std::string data = Bytes(n);
    Result<posix::Attr> w = f->Write(a->ino, off, data);
    return done(w.status(), "write " + *name, true, [&] {
      if (bytes.size() < off + n) bytes.resize(off + n, '\0');
      bytes.replace(off, n, data);
    });
  }
  if (kind == kUnlink) {
    const std::string gone = *name;
    return done(f->Unlink(kRootIno, gone), "unlink " + gone + " on a full disk", false,
                [&] { acked_.erase(gone); });
  }
  if (kind == kTruncate) {
    // Truncate: shrinking never fails; growing may be refused.
    const bool shrink = rng_() % 3 != 0;
    const uint64_t size =
        shrink ? (bytes.empty() ? 0 : rng_() % bytes.size()) : bytes.size() + rng_() % (256 << 10);
    posix::SetAttrRequest r;
    r.size = size;
    return done(f->SetAttr(a->ino, r).status(), "truncate " + *name, !shrink,
                [&] { bytes.resize(size, '\0'); });
  }
  if (kind == kCheckpoint && ckpts_.size() < 3) {
    const std::string c = "c" + std::to_string(i);
    return done(engine_->Checkpoint(DiskNo(1), c).status(), "checkpoint", true,
                [&] { ckpts_[c] = acked_; });
  }
  if (kind == kDropCheckpoint && !ckpts_.empty()) {
    auto it = ckpts_.begin();
    std::advance(it, static_cast<ptrdiff_t>(rng_() % ckpts_.size()));
    const std::string c = it->first;
    return done(engine_->DeleteCheckpoint(DiskNo(1), c), "delete checkpoint " + c, false,
                [&] { ckpts_.erase(c); });
  }
  if (kind == kSync) {
    return done(engine_->SyncIntents(), "sync intents", false, [] {});
  }
  return true;
}

RoundResult FullDisk::Run() {
  o_.env = &env_;
  o_.dir = "/data";
  o_.clock = &clock_;
  o_.segment_blocks = 128 + static_cast<uint32_t>(rng_() % 896);  // 512 KiB to 4 MiB
  o_.intent_sync_ms = 0;
  o_.rocks_max_sleep_micros = 0;
  o_.block_cache_mb = 8;
  // As in production: RocksDB compacts on its own threads (so a seed replays the same
  // operations, but the power cut may fall elsewhere), and the reserve is twice what the
  // memtables may hold.
  o_.auto_compactions = true;
  o_.reserve_bytes = 4 << 20;
  if (Status s = Open(); !s.ok()) return {"open: " + s.ToString()};
  if (Status s = engine_->CreateDisk(DiskNo(1), {}); !s.ok())
    return {"create disk: " + s.ToString()};
  capacity_above_ = (8 << 20) + (rng_() % 8) * (1 << 20);
  env_.SetCapacity(env_.used_bytes() + o_.reserve_bytes + capacity_above_);
  // A power cut somewhere in the round (or none), at an operation on a segment file: those run
  // on the thread of the engine call. (A cut inside RocksDB's own threads can leave a WAL file in
  // error just before the commit queue syncs it, which RocksDB answers with an assertion that
  // ends the process; the crash test covers cuts everywhere else.)
  io::FaultRule cut;
  cut.ops = io::kSimMutating;
  cut.path_contains = "/segments/";
  cut.skip = 20 + rng_() % 400;
  cut.power_off = true;
  if (rng_() % 4 != 0) env_.AddFaultRule(cut);

  const int ops = 400 + static_cast<int>(rng_() % 400);
  for (int i = 0; i < ops; ++i) {
    const Files before = acked_;
    const auto ckpts_before = ckpts_;
    const bool fill = (i / 100) % 2 == 0;  // phases that fill, phases that churn
    const bool ok = Step(i, fill);
    clock_.Advance(1000 + static_cast<int64_t>(rng_() % 200000));
    if (env_.powered_off()) {
      // The op in flight may or may not have happened; nothing before it may be lost.
      const Files after = acked_;
      const auto ckpts_after = ckpts_;
      acked_ = before;
      ckpts_ = ckpts_before;
      if (Status s = Restart(true); !s.ok()) return {"reopen after a power cut: " + s.ToString()};
      // Whichever it was is what the disk holds now (a checkpoint made or deleted included).
      if (!CheckFiles(before).ok()) acked_ = after;
      Result<std::vector<CheckpointInfo>> have = engine_->Checkpoints(DiskNo(1));
      if (!have.ok()) return {"list checkpoints: " + have.status().ToString()};
      if (have->size() != ckpts_before.size()) ckpts_ = ckpts_after;
      if (Status s = Check(acked_); !s.ok()) return {"after a power cut: " + s.message()};
      continue;
    }
    if (!ok) return {fail_};
    if (rng_() % 80 == 0) {
      if (Status s = Restart(false); !s.ok()) return {"reopen: " + s.ToString()};
      if (Status s = Check(acked_); !s.ok()) return {"after a restart: " + s.message()};
    }
  }
  env_.ClearFaultRules();
  if (std::getenv("ARCHIL_FULL_DEBUG")) {
    uint64_t live = 0;
    for (const auto& [n, b] : acked_) live += b.size();
    std::printf(
        "seed %llu: used %llu of %llu, %zu files, %llu live bytes, segments %llu\n",
        static_cast<unsigned long long>(seed_), static_cast<unsigned long long>(env_.used_bytes()),
        static_cast<unsigned long long>(capacity_above_), acked_.size(),
        static_cast<unsigned long long>(live), static_cast<unsigned long long>(SegmentBytes()));
  }
  if (env_.powered_off()) {
    if (Status s = Restart(true); !s.ok()) return {"reopen: " + s.ToString()};
  }
  if (Status s = Check(acked_); !s.ok()) return {"at the end: " + s.message()};

  // Everything deleted: the space is back at once, without a restart.
  for (const auto& [name, files] : ckpts_) {
    if (Status s = engine_->DeleteCheckpoint(DiskNo(1), name); !s.ok()) {
      return {"delete checkpoint " + name + ": " + s.ToString()};
    }
  }
  ckpts_.clear();
  for (const auto& [name, bytes] : acked_) {
    if (Status s = fs()->Unlink(kRootIno, name); !s.ok()) {
      return {"unlink " + name + " at the end: " + s.ToString()};
    }
  }
  acked_.clear();
  const uint64_t segment_cap = uint64_t{o_.segment_blocks + 1} * kBlockSize;
  // Nothing is live: at most the open segment's first eighth may stay (a smaller one is kept
  // open for the next write).
  if (const uint64_t held = SegmentBytes(); held > segment_cap / 8 + kBlockSize) {
    return {"with every file deleted, segment files hold " + std::to_string(held) + " bytes"};
  }
  const size_t want = capacity_above_ * 3 / 4;
  Result<posix::Attr> big = fs()->Mknod(kRootIno, "big", S_IFREG | 0644, 0, {});
  if (!big.ok()) return {"create after deleting everything: " + big.status().ToString()};
  // In 64 KiB writes (intents: the WAL holds them too) and one large one.
  std::string data = Bytes(want);
  for (size_t off = 0; off < want / 2; off += 64 << 10) {
    Result<posix::Attr> w = fs()->Write(big->ino, off, data.substr(off, 64 << 10));
    if (!w.ok()) {
      return {"a 64 KiB write at " + std::to_string(off) + " of " + std::to_string(want) +
              " after deleting everything: " + w.status().ToString()};
    }
  }
  Result<posix::Attr> w = fs()->Write(big->ino, want / 2, data.substr(want / 2));
  if (!w.ok()) return {"a large write after deleting everything: " + w.status().ToString()};
  acked_["big"] = data;
  // What the segment files hold: the live bytes, plus at most two segments (the open one, and
  // one sealed around the boundary of the write).
  const uint64_t held = SegmentBytes();
  if (held > want + 2 * segment_cap) {
    return {"segment files hold " + std::to_string(held) + " bytes for " + std::to_string(want) +
            " live"};
  }
  if (Status s = Restart(false); !s.ok()) return {"last reopen: " + s.ToString()};
  if (Status s = Check(acked_); !s.ok()) return {"after the last restart: " + s.message()};
  return out_;
}

TEST(FullDiskTest, RandomWorkOnAFullDiskLosesNothingAndGivesSpaceBackAtOnce) {
  SetLogLevel(LogLevel::kWarn);
  const char* replay = std::getenv("ARCHIL_TEST_SEED");
  const uint64_t first = replay && *replay ? std::strtoull(replay, nullptr, 10) : 1;
  const char* n = std::getenv("ARCHIL_FULL_ROUNDS");
  const uint64_t rounds = replay && *replay ? 1 : (n && *n ? std::strtoull(n, nullptr, 10) : 12);
  int enospc = 0, restarts = 0, cuts = 0, failed = 0, filled = 0;
  for (uint64_t r = 0; r < rounds; ++r) {
    const uint64_t seed = first + r;
    FullDisk round(seed);
    RoundResult res = round.Run();
    if (!res.failure.empty() && std::getenv("ARCHIL_FULL_DEBUG")) round.Dump();
    enospc += res.enospc;
    filled += res.enospc > 0;
    restarts += res.restarts;
    cuts += res.power_cuts;
    if (!res.failure.empty()) {
      ++failed;
      ADD_FAILURE() << "seed " << seed << " (replay: ARCHIL_TEST_SEED=" << seed
                    << "): " << res.failure;
    }
  }
  std::printf(
      "full disk: %llu rounds from seed %llu (%d filled the disk), %d writes refused with "
      "ENOSPC, %d restarts, %d power cuts, %d failed\n",
      static_cast<unsigned long long>(rounds), static_cast<unsigned long long>(first), filled,
      enospc, restarts, cuts, failed);
  // Rounds that never filled the disk tested little: most must have.
  if (rounds >= 4) {
    EXPECT_GE(filled, static_cast<int>(rounds) / 2);
  }
}

}  // namespace
}  // namespace archil::engine
