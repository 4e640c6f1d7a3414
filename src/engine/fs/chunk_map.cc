#include "engine/fs/chunk_map.h"

#include <algorithm>
#include <bit>

namespace archil::engine {

Extent SliceExtent(const Extent& e, uint32_t from, uint32_t to) {
  Extent s = e;
  s.blk_off = static_cast<uint16_t>(from);
  s.nblk = static_cast<uint16_t>(to - from);
  s.seg_blk = e.seg_blk + (from - e.blk_off);
  s.crcs.assign(e.crcs.begin() + (from - e.blk_off), e.crcs.begin() + (to - e.blk_off));
  return s;
}

void RemoveBlocks(std::vector<Extent>* extents, uint32_t from, uint32_t to,
                  std::vector<Extent>* removed) {
  if (from >= to) return;
  std::vector<Extent> kept;
  kept.reserve(extents->size() + 1);
  for (Extent& e : *extents) {
    if (e.end() <= from || e.blk_off >= to) {
      kept.push_back(std::move(e));
      continue;
    }
    const uint32_t lo = std::max<uint32_t>(e.blk_off, from);
    const uint32_t hi = std::min<uint32_t>(e.end(), to);
    if (e.blk_off < lo) kept.push_back(SliceExtent(e, e.blk_off, lo));
    if (removed != nullptr) removed->push_back(SliceExtent(e, lo, hi));
    if (hi < e.end()) kept.push_back(SliceExtent(e, hi, e.end()));
  }
  *extents = std::move(kept);
}

namespace {

// True if `b` continues `a` in the file and in the same segment, born in the same epoch.
bool Contiguous(const Extent& a, const Extent& b) {
  return a.end() == b.blk_off && a.seg_disk == b.seg_disk && a.seg_no == b.seg_no &&
         a.seg_blk + a.nblk == b.seg_blk && a.birth == b.birth && a.flags == b.flags;
}

// Appends contiguous `b` to `a`.
void Absorb(Extent* a, const Extent& b) {
  a->nblk = static_cast<uint16_t>(a->nblk + b.nblk);
  a->crcs.insert(a->crcs.end(), b.crcs.begin(), b.crcs.end());
}

}  // namespace

Status ApplyChunkOp(const ChunkOp& op, Versioned<ChunkRecord>* chunk,
                    std::vector<Extent>* superseded) {
  // Validate first, so that a bad operand leaves the chunk as it was.
  switch (op.op) {
    case ChunkOpType::kWrite:
      ARCHIL_RETURN_IF_ERROR(CheckExtent(op.extent));
      break;
    case ChunkOpType::kClip:
      if (op.keep_blk > kChunkBlocks) return Status::Corruption("ChunkMerge CLIP: bad keep_blk");
      break;
    case ChunkOpType::kPunch:
      if (op.punch_nblk < 1 || uint32_t{op.punch_off} + op.punch_nblk > kChunkBlocks) {
        return Status::Corruption("ChunkMerge PUNCH: range leaves the chunk");
      }
      break;
    default:
      return Status::Corruption("ChunkMerge: unknown op");
  }
  if (chunk->env.kind == ValueKind::kWhiteout) chunk->body = ChunkRecord{};
  std::vector<Extent>& ext = chunk->body.extents;
  switch (op.op) {
    case ChunkOpType::kWrite: {
      RemoveBlocks(&ext, op.extent.blk_off, op.extent.end(), superseded);
      auto at = std::lower_bound(ext.begin(), ext.end(), op.extent.blk_off,
                                 [](const Extent& e, uint32_t blk) { return e.blk_off < blk; });
      at = ext.insert(at, op.extent);
      // Successive small writes land in successive segment blocks: one extent holds them all, so
      // the chunk value stays small however the file was written.
      if (at + 1 != ext.end() && Contiguous(*at, *(at + 1))) {
        Absorb(&*at, *(at + 1));
        ext.erase(at + 1);
      }
      if (at != ext.begin() && Contiguous(*(at - 1), *at)) {
        Absorb(&*(at - 1), *at);
        ext.erase(at);
      }
      break;
    }
    case ChunkOpType::kClip:
      RemoveBlocks(&ext, op.keep_blk, kChunkBlocks, superseded);
      break;
    case ChunkOpType::kPunch:
      RemoveBlocks(&ext, op.punch_off, uint32_t{op.punch_off} + op.punch_nblk, superseded);
      break;
  }
  chunk->env = Envelope{ValueKind::kValue, 0, op.birth};
  chunk->body.tgen = std::max(chunk->body.tgen, op.tgen);
  return Status::Ok();
}

Result<std::string> ChunkFullMerge(std::optional<std::string_view> base,
                                   const std::vector<std::string_view>& operands) {
  Versioned<ChunkRecord> chunk{Envelope{ValueKind::kWhiteout, 0, Epoch(0)}, {}};
  if (base.has_value()) {
    ARCHIL_ASSIGN_OR_RETURN(chunk, DecodeChunk(*base));
  }
  for (std::string_view operand : operands) {
    ARCHIL_ASSIGN_OR_RETURN(ChunkOp op, DecodeChunkOp(operand));
    ARCHIL_RETURN_IF_ERROR(ApplyChunkOp(op, &chunk, nullptr));
  }
  // Only without operands can a WHITEOUT (or nothing) remain: the base stands as it was.
  if (!base.has_value() && operands.empty()) return Status::Corruption("ChunkMerge: nothing");
  return EncodeChunk(chunk.env, chunk.body);
}

Status ApplySegUsageOp(const SegUsageOp& op, SegUsageRecord* r) {
  const uint64_t end = uint64_t{op.start_blk} + op.nblk;
  if (op.nblk == 0 || op.start_blk == 0 || end - 1 > r->max_blocks) {
    return Status::Corruption("SegUsageMerge: range [" + std::to_string(op.start_blk) + ", +" +
                              std::to_string(op.nblk) + ") outside blocks 1.." +
                              std::to_string(r->max_blocks));
  }
  const bool set = op.op == SegUsageOpType::kSet;
  for (uint64_t b = op.start_blk; b < end; ++b) {
    if (r->live(static_cast<uint32_t>(b)) == set) {
      return Status::Corruption(std::string("SegUsageMerge: block ") + std::to_string(b) +
                                (set ? " born twice" : " freed twice"));
    }
  }
  for (uint64_t b = op.start_blk; b < end; ++b) {
    r->bitmap[b / 8] = static_cast<char>(static_cast<uint8_t>(r->bitmap[b / 8]) ^ (1u << (b % 8)));
  }
  // Every bit of the range flipped (checked above), so the count moves by exactly nblk.
  if (set) {
    r->live_blocks += op.nblk;
  } else {
    r->live_blocks -= op.nblk;
  }
  return Status::Ok();
}

Result<std::string> SegUsageFullMerge(std::optional<std::string_view> base,
                                      const std::vector<std::string_view>& operands) {
  if (!base.has_value()) return Status::Corruption("SegUsageMerge: no base value");
  ARCHIL_ASSIGN_OR_RETURN(SegUsageRecord r, DecodeSegUsage(*base));
  for (std::string_view operand : operands) {
    ARCHIL_ASSIGN_OR_RETURN(SegUsageOp op, DecodeSegUsageOp(operand));
    ARCHIL_RETURN_IF_ERROR(ApplySegUsageOp(op, &r));
  }
  return EncodeSegUsage(r);
}

}  // namespace archil::engine
