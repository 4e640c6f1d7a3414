// The pure merge semantics of the `chunk` and `segusage` CFs (formats.md §4.5, §4.10), used by
// the commit thread (which needs the superseded pieces for deadlists) and by the RocksDB merge
// operators (log replay re-applies them, so they are deterministic and depend on nothing else).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/records/chunk_record.h"
#include "engine/records/segusage_record.h"

namespace archil::engine {

// Blocks [from, to) of `e`, with seg_blk and CRCs of exactly those blocks.
// REQUIRES: e.blk_off <= from < to <= e.end().
Extent SliceExtent(const Extent& e, uint32_t from, uint32_t to);

// Removes blocks [from, to) from sorted, disjoint `extents`, splitting extents that straddle an
// edge; appends the removed pieces (in block order) to `removed` if not null.
// REQUIRES: from <= to <= 256.
void RemoveBlocks(std::vector<Extent>* extents, uint32_t from, uint32_t to,
                  std::vector<Extent>* removed);

// Applies one ChunkMerge operand to `chunk` (a WHITEOUT counts as an empty chunk): WRITE
// replaces its block range with its extent (joined with a neighbour that continues it in the same
// segment, born in the same epoch, so sequential small writes make one extent), CLIP drops blocks
// >= keep_blk, PUNCH drops a range. The result is a VALUE with birth = op.birth and tgen = max(old
// tgen, op.tgen), even when it has no extents. The pieces the operand removed are appended to
// `superseded` (if not null), in block order. Corruption (chunk unchanged) if the operand is
// malformed. REQUIRES: CheckChunk(chunk->body).ok().
Status ApplyChunkOp(const ChunkOp& op, Versioned<ChunkRecord>* chunk,
                    std::vector<Extent>* superseded);

// The ChunkMerge operator: `base` (nullopt = no value) with `operands` applied in order; the
// result is canonical (reserved bytes zero). Corruption if the base or any operand does not
// decode or apply, or if there is neither a base nor an operand.
Result<std::string> ChunkFullMerge(std::optional<std::string_view> base,
                                   const std::vector<std::string_view>& operands);

// Applies one SegUsageMerge operand: SET or CLEAR blocks [start_blk, start_blk + nblk). All or
// nothing: Corruption (record unchanged) if the range is empty, touches block 0 or passes
// max_blocks, or if it would set a set bit or clear a clear bit. live_blocks is recomputed.
Status ApplySegUsageOp(const SegUsageOp& op, SegUsageRecord* r);

// The SegUsageMerge operator. A missing base is Corruption: the segment's record is written
// (all clear) when the segment opens, before any operand.
Result<std::string> SegUsageFullMerge(std::optional<std::string_view> base,
                                      const std::vector<std::string_view>& operands);

}  // namespace archil::engine
