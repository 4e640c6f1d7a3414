// DiskFs: file data (read, write, truncate, fallocate) and the open segment.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "base/coding.h"
#include "base/crc32c.h"
#include "base/log.h"
#include "engine/fs/chunk_map.h"
#include "engine/fs/disk_fs_ops.h"
#include "engine/records/intent_record.h"

namespace archil::engine {
namespace {

bool AllZero(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == 0; });
}

}  // namespace

Result<std::string> DiskFs::Ops::ReadBlocks(KvReader& r, Ino ino, uint64_t first, uint64_t n) {
  std::string out(n * kBlockSize, '\0');
  const uint64_t end = first + n;
  for (uint64_t c = first / kChunkBlocks; c * kChunkBlocks < end; ++c) {
    ARCHIL_ASSIGN_OR_RETURN(ChunkRecord chunk, LoadChunk(r, ino, c));
    for (const Extent& e : chunk.extents) {
      uint64_t e_first = c * kChunkBlocks + e.blk_off, e_end = e_first + e.nblk;
      uint64_t from = std::max(first, e_first), to = std::min(end, e_end);
      if (from >= to) continue;
      auto seg_blk = static_cast<uint32_t>(e.seg_blk + (from - e_first));
      // Straight into place; blocks that fail their checksum fail the whole read.
      char* const dst = out.data() + (from - first) * kBlockSize;
      ARCHIL_RETURN_IF_ERROR(c_->segments->ReadInto(e.seg_disk, e.seg_no, seg_blk,
                                                    static_cast<uint32_t>(to - from), dst));
      for (uint64_t b = from; b < to; ++b) {
        const char* p = dst + (b - from) * kBlockSize;
        if (Crc32c(p, kBlockSize) != e.crcs[b - e_first]) {
          std::string what = "checksum mismatch: inode " + std::to_string(ino.value()) + " block " +
                             std::to_string(b) + " in segment " +
                             c_->segments->Path(e.seg_disk, e.seg_no) + " block " +
                             std::to_string(e.seg_blk + (b - e_first));
          ARCHIL_LOG(kError) << what;
          return Status::Corruption(what);
        }
      }
    }
  }
  return out;
}

Result<uint64_t> DiskFs::Ops::WriteBlocks(Txn& t, Ino ino, uint64_t first,
                                          std::string_view blocks) {
  const uint64_t total = blocks.size() / kBlockSize;
  const bool as_intent = blocks.size() <= kIntentMaxBytes;
  std::vector<SegNo> to_sync;
  uint64_t replaced = 0;
  for (uint64_t pos = 0; pos < total;) {
    uint64_t c = (first + pos) / kChunkBlocks;
    auto off = static_cast<uint16_t>((first + pos) % kChunkBlocks);
    // A piece never crosses a chunk, nor is it larger than a segment.
    auto n = static_cast<uint32_t>(
        std::min<uint64_t>({kChunkBlocks - off, total - pos, c_->segment_blocks}));
    ARCHIL_ASSIGN_OR_RETURN(auto place, Allocate(t, n));
    auto [seg, seg_blk] = place;
    std::string_view piece = blocks.substr(pos * kBlockSize, uint64_t{n} * kBlockSize);
    ARCHIL_RETURN_IF_ERROR(c_->segments->Write(disk_, seg, seg_blk, piece));
    fs_->open_seg_.Written(seg, seg_blk + n);
    ARCHIL_RETURN_IF_ERROR(fs_->MarkLive(t, seg, seg_blk, n));
    Extent e;
    e.blk_off = off;
    e.nblk = static_cast<uint16_t>(n);
    e.seg_blk = seg_blk;
    e.seg_disk = disk_;
    e.seg_no = seg;
    e.birth = epoch_;
    for (uint32_t i = 0; i < n; ++i)
      e.crcs.push_back(Crc32c(piece.data() + i * kBlockSize, kBlockSize));
    if (as_intent) {
      t.Put(cf(Cf::kIntent), IntentKey(disk_, seg, seg_blk),
            EncodeIntent({e.crcs, std::string(piece)}));
    } else {
      // The device starts on it now; the group's sync before its Write waits for the rest.
      c_->segments->StartWriteback(disk_, seg, seg_blk, n);
      if (to_sync.empty() || !(to_sync.back() == seg)) to_sync.push_back(seg);
    }
    ARCHIL_ASSIGN_OR_RETURN(ChunkRecord chunk, LoadChunk(t, ino, c));
    Versioned<ChunkRecord> v{{ValueKind::kValue, 0, epoch_}, std::move(chunk)};
    ChunkOp op;
    op.op = ChunkOpType::kWrite;
    op.birth = epoch_;
    op.extent = std::move(e);
    std::vector<Extent> superseded;
    ARCHIL_RETURN_IF_ERROR(ApplyChunkOp(op, &v, &superseded));
    for (const Extent& x : superseded) {
      replaced += x.nblk;
      ARCHIL_RETURN_IF_ERROR(Release(t, x.birth, x));
    }
    ARCHIL_RETURN_IF_ERROR(PutChunk(t, ino, c, v.body));
    pos += n;
  }
  // Large writes: the data is durable in its segment before any pointer to it is (invariant 2):
  // the group syncs each segment once, after its prepares and before its Write (ADR 0015).
  for (SegNo seg : to_sync) {
    t.SyncBeforeWrite(c_->segments->Path(disk_, seg), [segments = c_->segments, disk = disk_, seg] {
      return segments->Sync(disk, seg);
    });
  }
  return replaced;
}

Result<uint64_t> DiskFs::Ops::DropBlocks(Txn& t, Ino ino, uint64_t first, uint64_t n) {
  if (n == 0) return uint64_t{0};
  const uint64_t end = n > UINT64_MAX - first ? UINT64_MAX : first + n;
  std::vector<std::pair<uint64_t, ChunkRecord>> touched;
  {
    ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<LevelScan> scan,
                            Scan(t, Cf::kChunk, HistTag::kChunk, ino));
    for (scan->Seek(ChunkLevelKey(ino, first / kChunkBlocks).rel); scan->Valid(); scan->Next()) {
      std::string_view rel = scan->rel();
      if (rel.size() != 16) return Status::Corruption("chunk key of the wrong size");
      const uint64_t chunk = DecodeFixed64BE(rel.data() + 8);
      if (chunk > (end - 1) / kChunkBlocks) break;
      ARCHIL_ASSIGN_OR_RETURN(Versioned<ChunkRecord> v, DecodeChunk(scan->value()));
      touched.emplace_back(chunk, std::move(v.body));
    }
    ARCHIL_RETURN_IF_ERROR(scan->status().WithContext("scan chunks"));
  }
  uint64_t dropped = 0;
  for (auto& [c, chunk] : touched) {
    uint64_t c_first = c * kChunkBlocks;
    auto from = static_cast<uint32_t>(std::max(first, c_first) - c_first);
    auto to = static_cast<uint32_t>(std::min<uint64_t>(end - c_first, kChunkBlocks));
    if (from >= to) continue;
    std::vector<Extent> removed;
    RemoveBlocks(&chunk.extents, from, to, &removed);
    for (const Extent& x : removed) {
      dropped += x.nblk;
      ARCHIL_RETURN_IF_ERROR(Release(t, x.birth, x));
    }
    ARCHIL_RETURN_IF_ERROR(PutChunk(t, ino, c, chunk));
  }
  return dropped;
}

Status DiskFs::Ops::ZeroRange(Txn& t, Inode& n, uint64_t offset, uint64_t length) {
  if (length == 0) return Status::Ok();
  const uint64_t end = offset + length;
  const uint64_t full_first = (offset + kBlockSize - 1) / kBlockSize;
  const uint64_t full_end = end / kBlockSize;
  if (full_first < full_end) {
    ARCHIL_ASSIGN_OR_RETURN(uint64_t dropped,
                            DropBlocks(t, n.ino, full_first, full_end - full_first));
    n.rec.blocks -= std::min(n.rec.blocks, dropped);
  }
  // The partial blocks at either edge: read, zero the range, write back.
  std::vector<uint64_t> edges;
  if (offset % kBlockSize != 0) edges.push_back(offset / kBlockSize);
  if (end % kBlockSize != 0 && (edges.empty() || edges.back() != end / kBlockSize)) {
    edges.push_back(end / kBlockSize);
  }
  for (uint64_t b : edges) {
    ARCHIL_ASSIGN_OR_RETURN(std::string block, ReadBlocks(t, n.ino, b, 1));
    if (AllZero(block)) continue;
    uint64_t from = std::max(offset, b * kBlockSize) - b * kBlockSize;
    uint64_t to = std::min(end, (b + 1) * kBlockSize) - b * kBlockSize;
    std::fill(block.begin() + static_cast<ptrdiff_t>(from),
              block.begin() + static_cast<ptrdiff_t>(to), '\0');
    if (AllZero(block)) {
      ARCHIL_ASSIGN_OR_RETURN(uint64_t dropped, DropBlocks(t, n.ino, b, 1));
      n.rec.blocks -= std::min(n.rec.blocks, dropped);
    } else {
      ARCHIL_ASSIGN_OR_RETURN(uint64_t replaced, WriteBlocks(t, n.ino, b, block));
      n.rec.blocks = n.rec.blocks + 1 - std::min(n.rec.blocks + 1, replaced);
    }
  }
  return Status::Ok();
}

Status DiskFs::Ops::Resize(Txn& t, Inode& n, uint64_t size) {
  if (size < n.rec.size) {
    uint64_t keep = (size + kBlockSize - 1) / kBlockSize;
    ARCHIL_ASSIGN_OR_RETURN(uint64_t dropped, DropBlocks(t, n.ino, keep, UINT64_MAX - keep));
    n.rec.blocks -= std::min(n.rec.blocks, dropped);
    if (size % kBlockSize != 0) {
      // Bytes past the new size in its last block read as zeros after a later extension.
      ARCHIL_RETURN_IF_ERROR(ZeroRange(t, n, size, kBlockSize - size % kBlockSize));
    }
  }
  n.rec.size = size;
  return Status::Ok();
}

Status DiskFs::Ops::WriteData(Txn& t, Inode& n, uint64_t offset, std::string_view data) {
  const uint64_t end = offset + data.size();
  const uint64_t b0 = offset / kBlockSize, b1 = (end + kBlockSize - 1) / kBlockSize;
  std::string buf((b1 - b0) * kBlockSize, '\0');
  // Sub-block edges are merged with what the blocks hold (read-modify-write).
  if (offset % kBlockSize != 0) {
    ARCHIL_ASSIGN_OR_RETURN(std::string head, ReadBlocks(t, n.ino, b0, 1));
    std::copy(head.begin(), head.end(), buf.begin());
  }
  if (end % kBlockSize != 0 && (b1 - 1 != b0 || offset % kBlockSize == 0)) {
    ARCHIL_ASSIGN_OR_RETURN(std::string tail, ReadBlocks(t, n.ino, b1 - 1, 1));
    std::copy(tail.begin(), tail.end(), buf.end() - kBlockSize);
  }
  std::copy(data.begin(), data.end(),
            buf.begin() + static_cast<ptrdiff_t>(offset - b0 * kBlockSize));
  ARCHIL_ASSIGN_OR_RETURN(uint64_t replaced, WriteBlocks(t, n.ino, b0, buf));
  n.rec.blocks = n.rec.blocks + (b1 - b0) - std::min(n.rec.blocks + (b1 - b0), replaced);
  n.rec.size = std::max(n.rec.size, end);
  // A write drops set-user-ID, and set-group-ID when group-execute is set.
  n.rec.mode &= ~static_cast<uint32_t>(S_ISUID);
  if (n.rec.mode & S_IXGRP) n.rec.mode &= ~static_cast<uint32_t>(S_ISGID);
  Touch(n);
  return Status::Ok();
}

Result<std::string> DiskFs::Read(posix::Ino ino, uint64_t offset, size_t length) {
  Ops ops(this);
  DbView view = ReadView();
  ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(view, ino));
  if (S_ISDIR(n.rec.mode)) return Status::Errno(EISDIR, "read of a directory");
  if (!S_ISREG(n.rec.mode)) return Status::Errno(EINVAL, "read of a special file");
  if (offset >= n.rec.size || length == 0) return std::string();
  uint64_t end = std::min<uint64_t>(n.rec.size, offset + length);
  uint64_t first = offset / kBlockSize, last = (end + kBlockSize - 1) / kBlockSize;
  ARCHIL_ASSIGN_OR_RETURN(std::string blocks, ops.ReadBlocks(view, n.ino, first, last - first));
  // In place: an aligned read (the kernel's, nearly always) only drops its tail.
  blocks.erase(0, offset - first * kBlockSize);
  blocks.resize(end - offset);
  return blocks;
}

Result<posix::Attr> DiskFs::Write(posix::Ino ino, uint64_t offset, std::string_view data) {
  return Write(ino, offset, data, CommitHooks{});
}

Result<posix::Attr> DiskFs::Write(posix::Ino ino, uint64_t offset, std::string_view data,
                                  const CommitHooks& hooks) {
  if (offset > posix::kMaxFileSize || data.size() > posix::kMaxFileSize - offset) {
    return Status::Errno(EFBIG, "write beyond the maximum file size");
  }
  ARCHIL_RETURN_IF_ERROR(Admit(kBlockSize + data.size()));
  return MutateAttr(hooks, [&](Txn& t) -> Result<posix::Attr> {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
    if (S_ISDIR(n.rec.mode)) return Status::Errno(EISDIR, "write to a directory");
    if (!S_ISREG(n.rec.mode)) return Status::Errno(EINVAL, "write to a special file");
    if (data.empty()) return ToAttr(n.ino, n.rec);
    ARCHIL_RETURN_IF_ERROR(ops.WriteData(t, n, offset, data));
    ARCHIL_RETURN_IF_ERROR(ops.PutInode(t, n));
    return ToAttr(n.ino, n.rec);
  });
}

Status DiskFs::Fallocate(posix::Ino ino, uint32_t mode, uint64_t offset, uint64_t length) {
  return Fallocate(ino, mode, offset, length, CommitHooks{});
}

Status DiskFs::Fallocate(posix::Ino ino, uint32_t mode, uint64_t offset, uint64_t length,
                         const CommitHooks& hooks) {
  using posix::kFallocKeepSize;
  using posix::kFallocPunchHole;
  using posix::kFallocZeroRange;
  const bool keep = mode & kFallocKeepSize;
  const uint32_t op = mode & ~kFallocKeepSize;
  // Checks in the order Linux's vfs_fallocate makes them (as ModelFs does).
  if (length == 0) return Status::Errno(EINVAL, "fallocate of length 0");
  if (op != 0 && op != kFallocPunchHole && op != kFallocZeroRange) {
    return Status::Errno(EOPNOTSUPP, "unsupported fallocate mode");
  }
  if (op == kFallocPunchHole && !keep)
    return Status::Errno(EOPNOTSUPP, "punch hole needs keep-size");
  // Punching a hole frees space; zeroing a range may rewrite its two edge blocks.
  ARCHIL_RETURN_IF_ERROR(op == kFallocPunchHole ? Writable() : Admit(2 * kBlockSize));
  return Mutate(hooks, [&](Txn& t) -> Status {
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(Inode n, ops.LoadInode(t, ino));
    if (S_ISFIFO(n.rec.mode)) return Status::Errno(ESPIPE, "fallocate of a FIFO");
    if (S_ISDIR(n.rec.mode)) return Status::Errno(EISDIR, "fallocate of a directory");
    if (!S_ISREG(n.rec.mode)) return Status::Errno(ENODEV, "fallocate of a special file");
    if (offset > posix::kMaxFileSize || length > posix::kMaxFileSize - offset) {
      return Status::Errno(EFBIG, "fallocate beyond the maximum file size");
    }
    const uint64_t end = offset + length;
    if (op == kFallocPunchHole || op == kFallocZeroRange) {
      if (offset < n.rec.size) {
        ARCHIL_RETURN_IF_ERROR(ops.ZeroRange(t, n, offset, std::min(end, n.rec.size) - offset));
      }
      if (op == kFallocZeroRange && !keep && end > n.rec.size) n.rec.size = end;
      ops.Touch(n);
    } else {
      if (!keep && end > n.rec.size) {
        n.rec.size = end;
        n.rec.mtime = ops.NowNs();
      }
      n.rec.ctime = ops.NowNs();
    }
    return ops.PutInode(t, n);
  });
}

Result<posix::StatFs> DiskFs::Statfs() {
  // The space is the server's: what its file system holds, less the reserve kept for deletes
  // (every disk of the server shares it, as the disks of an NFS server share its volume).
  posix::StatFs s;
  s.blocks = uint64_t{1} << 32;
  s.blocks_free = s.blocks;
  if (core_->space) {
    ARCHIL_ASSIGN_OR_RETURN(io::SpaceInfo space, core_->space->Sample());
    const uint64_t reserve = core_->space->reserve_bytes();
    s.blocks = space.total_bytes / kBlockSize;
    s.blocks_free = space.free_bytes > reserve ? (space.free_bytes - reserve) / kBlockSize : 0;
  }
  // Inode numbers are 40-bit counters per disk; report what a 32-bit statfs can show.
  s.files = uint64_t{1} << 32;
  s.files_free = s.files;
  return s;
}

std::optional<DiskFs::SegmentMark> DiskFs::OpenSegmentMark() { return open_seg_.mark(); }

Status DiskFs::TruncateIntents() {
  std::optional<SegmentMark> mark = OpenSegmentMark();
  if (!mark) return Status::Ok();
  auto still = [&] {
    std::optional<SegmentMark> now = OpenSegmentMark();
    return now && now->seg == mark->seg && now->gen == mark->gen;
  };
  // Every block below `written` was written before this sync began, so it is durable after it.
  Status synced = core_->segments->Sync(disk_, mark->seg);
  // A segment retired meanwhile (its file gone) has no intents left to drop.
  if (!synced.ok()) return still() ? synced : Status::Ok();
  return core_->queue->Commit([&](Txn& t) -> Status {
    // Blocks below the mark handed out again since (a failed mutation's, taken back): their new
    // bytes may be newer than the sync.
    if (!still()) return Status::Ok();
    Ops ops(this);
    std::string prefix = IntentKey(disk_, mark->seg, 0).substr(0, 16);
    auto it = t.NewIterator(ops.cf(Cf::kIntent));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      ARCHIL_ASSIGN_OR_RETURN(IntentKeyParts k, ParseIntentKey(it->key().ToStringView()));
      ARCHIL_ASSIGN_OR_RETURN(uint32_t nblk, IntentBlocks(it->value().ToStringView()));
      if (k.seg_blk + nblk > mark->written) break;
      t.Delete(ops.cf(Cf::kIntent), it->key().ToStringView());
    }
    return FromRocks(it->status(), "scan intents");
  });
}

}  // namespace archil::engine
