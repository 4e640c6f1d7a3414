#include "engine/commit/commit_log.h"

#include <algorithm>
#include <map>

#include "base/coding.h"
#include "engine/records/keys.h"
#include "engine/records/log_record.h"
#include "engine/records/meta_records.h"
#include "engine/records/segusage_record.h"

namespace archil::engine {

CommitLog::CommitLog(const Cfs* cfs, const Clock* clock) : cfs_(cfs), clock_(clock) {
  cf_by_id_.fill(-1);
  for (size_t i = 0; i < kNumCfs; ++i) {
    const uint32_t id = cfs->handles[i]->GetID();
    if (id < cf_by_id_.size()) cf_by_id_[id] = static_cast<int>(i);
  }
}

Status CommitLog::Finish(Txn& t) {
  if (t.mutations().empty()) return Status::Ok();
  auto cf_of = [&](rocksdb::ColumnFamilyHandle* h) -> std::optional<Cf> {
    const uint32_t id = h->GetID();
    if (id >= cf_by_id_.size() || cf_by_id_[id] < 0) return std::nullopt;
    return static_cast<Cf>(cf_by_id_[id]);
  };
  std::map<uint64_t, LogRecord> records;  // by disk
  for (const Txn::Mutation& m : t.mutations()) {
    std::optional<Cf> cf = cf_of(m.cf);
    if (!cf) return Status::Internal("commit log: a write to an unknown column family");
    if (!LoggedKey(*cf, m.key)) continue;
    if (m.key.size() < 8) return Status::Internal("commit log: a logged key without its disk");
    const uint64_t disk = DecodeFixed64BE(m.key.data());
    LogRecord& r = records[disk];
    LogMutation lm;
    lm.op = m.kind == Txn::Mutation::Kind::kPut      ? LogOp::kPut
            : m.kind == Txn::Mutation::Kind::kDelete ? LogOp::kDelete
                                                     : LogOp::kMerge;
    lm.cf = *cf;
    lm.key = m.key;
    lm.value = m.value;
    if (*cf == Cf::kSegUsage && lm.op == LogOp::kMerge) {
      Result<SegUsageOp> op = DecodeSegUsageOp(lm.value);
      if (op.ok() && op->op == SegUsageOpType::kSet) {
        ARCHIL_ASSIGN_OR_RETURN(auto seg, ParseSegUsageKey(lm.key));
        if (std::find(r.segrefs.begin(), r.segrefs.end(), seg) == r.segrefs.end()) {
          r.segrefs.push_back(seg);
        }
      }
    }
    r.mutations.push_back(std::move(lm));
  }
  rocksdb::ColumnFamilyHandle* meta = (*cfs_)[Cf::kMeta];
  rocksdb::ColumnFamilyHandle* outbox = (*cfs_)[Cf::kOutbox];
  const int64_t now = clock_->NowMicros() * 1000;
  for (auto& [no, r] : records) {
    const DiskNo disk(no);
    const std::string counters_key = MetaKey(disk, MetaType::kCounters);
    Result<std::string> cv = t.Get(meta, counters_key);
    if (!cv.ok() && cv.status().code() == Status::Code::kNotFound) continue;  // deleted
    ARCHIL_RETURN_IF_ERROR(cv.status());
    ARCHIL_ASSIGN_OR_RETURN(CountersRecord counters, DecodeCounters(*cv));
    counters.last_seq = Seq(counters.last_seq.value() + 1);
    Result<std::string> dv = t.Get(meta, MetaKey(disk, MetaType::kDisk));
    if (dv.ok()) {
      ARCHIL_ASSIGN_OR_RETURN(DiskRecord d, DecodeDisk(*dv));
      r.epoch = d.cur_epoch;
      // A branch's first record (its creation) points into its parent's frozen state.
      if (counters.last_seq == Seq(1) && d.parent.value() != 0)
        r.depends_on.push_back({d.parent, {}});
    }
    r.seq = counters.last_seq;
    r.commit_ns = now;
    const std::string encoded_counters = EncodeCounters(counters);
    t.Put(meta, counters_key, encoded_counters);
    r.mutations.push_back({LogOp::kPut, Cf::kMeta, counters_key, encoded_counters});
  }
  // Every record is numbered first, so that a dependency on a disk this commit also logs names
  // that record too.
  for (auto& [no, r] : records) {
    if (r.seq.value() == 0) continue;  // a deleted disk
    for (auto& [parent, seq] : r.depends_on) {
      ARCHIL_ASSIGN_OR_RETURN(std::string pv, t.Get(meta, MetaKey(parent, MetaType::kCounters)));
      ARCHIL_ASSIGN_OR_RETURN(CountersRecord pc, DecodeCounters(pv));
      seq = pc.last_seq;
    }
    t.Put(outbox, OutboxKey(DiskNo(no), r.seq), EncodeLogRecord(r));
  }
  return Status::Ok();
}

}  // namespace archil::engine
