// Engine::CheckInvariants: the cross-record rules every crash test checks after a restart
// (docs/formats.md §2 invariants 2, 6, 7).
#include <map>
#include <set>
#include <vector>

#include "engine/engine.h"
#include "engine/records/chunk_record.h"
#include "engine/records/column_families.h"
#include "engine/records/keys.h"
#include "engine/records/segusage_record.h"

namespace archil::engine {
namespace {

using SegKey = std::pair<uint64_t, uint64_t>;  // (seg_disk, seg_no)

std::string Where(SegKey s, uint32_t blk) {
  return "segment " + std::to_string(s.first) + "/" + std::to_string(s.second) + " block " +
         std::to_string(blk);
}

}  // namespace

Status Engine::CheckInvariants() {
  // A deleted disk's records stay until its purge has run; check the state after it.
  ARCHIL_RETURN_IF_ERROR(WaitForPurges().WithContext("purge of a deleted disk"));
  // With a tier, a deleted disk waits for its bucket mark before its purge (DeletionsToMark):
  // its records are no one's any more, and are not checked.
  std::set<uint64_t> deleted;
  {
    MutexLock lock(&mu_);
    for (const auto& [disk, root] : to_mark_) deleted.insert(disk);
  }
  DbView view(db_.get());
  std::map<SegKey, SegUsageRecord> live;
  {
    auto it = view.NewIterator(core_.cfs[Cf::kSegUsage]);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ARCHIL_ASSIGN_OR_RETURN(auto k, ParseSegUsageKey(it->key().ToStringView()));
      if (deleted.count(k.first.value())) continue;
      ARCHIL_ASSIGN_OR_RETURN(live[SegKey(k.first.value(), k.second.value())],
                              DecodeSegUsage(it->value().ToStringView()));
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan segment liveness"));
  }
  // Every block a version points at is live in its segment (nothing points at freed space).
  auto points_at_live = [&](const Extent& e, const std::string& what) -> Status {
    SegKey s(e.seg_disk.value(), e.seg_no.value());
    auto u = live.find(s);
    for (uint32_t b = e.seg_blk; b < e.seg_blk + e.nblk; ++b) {
      if (u == live.end() || !u->second.live(b)) {
        return Status::Internal(what + " points at freed " + Where(s, b));
      }
    }
    return Status::Ok();
  };
  // Each live block is held by exactly one of: a head extent of its owner, a deadlist entry.
  std::map<SegKey, std::set<uint32_t>> held;
  auto hold = [&](SegKey s, uint32_t blk, uint32_t n, const std::string& what) -> Status {
    for (uint32_t b = blk; b < blk + n; ++b) {
      if (!held[s].insert(b).second) {
        return Status::Internal(what + " holds " + Where(s, b) + " a second time");
      }
    }
    return Status::Ok();
  };
  {
    auto it = view.NewIterator(core_.cfs[Cf::kChunk]);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ARCHIL_ASSIGN_OR_RETURN(ChunkKeyParts k, ParseChunkKey(it->key().ToStringView()));
      if (deleted.count(k.disk.value())) continue;
      ARCHIL_ASSIGN_OR_RETURN(Versioned<ChunkRecord> c, DecodeChunk(it->value().ToStringView()));
      const std::string what = "disk " + std::to_string(k.disk.value()) + " inode " +
                               std::to_string(k.ino.value()) + " chunk " + std::to_string(k.chunk);
      for (const Extent& e : c.body.extents) {
        ARCHIL_RETURN_IF_ERROR(points_at_live(e, what));
        if (e.seg_disk == k.disk) {
          ARCHIL_RETURN_IF_ERROR(
              hold(SegKey(e.seg_disk.value(), e.seg_no.value()), e.seg_blk, e.nblk, what));
        }
      }
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan chunks"));
  }
  size_t dead_hist = 0;
  {
    auto it = view.NewIterator(core_.cfs[Cf::kDead]);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ARCHIL_ASSIGN_OR_RETURN(DeadKeyParts p, ParseDeadKey(it->key().ToStringView()));
      if (deleted.count(p.disk.value())) continue;
      if (p.kind == DeadKind::kData) {
        ARCHIL_RETURN_IF_ERROR(hold(SegKey(p.blocks.seg_disk.value(), p.blocks.seg_no.value()),
                                    p.blocks.seg_blk, p.blocks.nblk, "a deadlist entry"));
      } else if (p.kind == DeadKind::kHist) {
        ++dead_hist;
        Result<std::string> h =
            view.Get(core_.cfs[Cf::kHist], HistKey(p.disk, p.tag, p.suffix, p.death));
        if (!h.ok()) return Status::Internal("a deadlist entry names a missing history version");
      }
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan deadlists"));
  }
  size_t hist = 0;
  {
    auto it = view.NewIterator(core_.cfs[Cf::kHist]);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ARCHIL_ASSIGN_OR_RETURN(HistKeyParts k, ParseHistKey(it->key().ToStringView()));
      if (deleted.count(k.disk.value())) continue;
      ++hist;
      if (k.tag != HistTag::kChunk) continue;
      ARCHIL_ASSIGN_OR_RETURN(Versioned<ChunkRecord> c, DecodeChunk(it->value().ToStringView()));
      for (const Extent& e : c.body.extents) {
        ARCHIL_RETURN_IF_ERROR(points_at_live(e, "a history version"));
      }
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan history"));
  }
  if (hist != dead_hist) {
    return Status::Internal(std::to_string(hist) + " history versions but " +
                            std::to_string(dead_hist) + " deadlist entries for them");
  }
  for (const auto& [s, u] : live) {
    const std::set<uint32_t>& h = held[s];
    if (u.live_blocks != h.size()) {
      return Status::Internal(Where(s, 0) + ": " + std::to_string(u.live_blocks) +
                              " live blocks but " + std::to_string(h.size()) + " held");
    }
    for (uint32_t b : h) {
      if (!u.live(b)) return Status::Internal(Where(s, b) + " is held but not live");
    }
  }
  for (const auto& [s, h] : held) {
    if (!h.empty() && !live.count(s)) {
      return Status::Internal(Where(s, *h.begin()) + " is held in a segment with no liveness");
    }
  }
  return Status::Ok();
}

}  // namespace archil::engine
