// The `segusage` CF's merge operator (docs/formats.md §4.10): SET/CLEAR operands applied to a
// segment's liveness bitmap, so a write or a free adds 12 bytes to the batch instead of
// rewriting the bitmap. A merge that fails (a block set or cleared twice, a malformed operand)
// makes RocksDB report Corruption for the key: never silently repaired.
//
// Thread-safety: stateless.
#pragma once

#include <rocksdb/merge_operator.h>

#include <memory>

namespace archil::engine {

std::shared_ptr<rocksdb::MergeOperator> NewSegUsageMergeOperator();

}  // namespace archil::engine
