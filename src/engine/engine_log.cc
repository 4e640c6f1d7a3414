// Engine: the commit log as the tier reads it (the outbox) and as recovery writes it back
// (docs/tiering.md §2, §6; engine/commit_log.h).
#include "engine/engine.h"
#include "engine/keys.h"
#include "engine/log_record.h"
#include "engine/meta_records.h"

namespace archil::engine {

Result<std::vector<std::pair<Seq, std::string>>> Engine::OutboxRecords(DiskNo disk, Seq after,
                                                                       size_t max) {
  std::vector<std::pair<Seq, std::string>> out;
  const std::string prefix = DiskPrefix(disk);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kOutbox]));
  for (it->Seek(OutboxKey(disk, Seq(after.value() + 1)));
       it->Valid() && it->key().starts_with(prefix) && out.size() < max; it->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(auto k, ParseOutboxKey(it->key().ToStringView()));
    out.emplace_back(k.second, it->value().ToString());
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "read the outbox"));
  return out;
}

Status Engine::ApplyLogRecords(DiskNo disk, const std::vector<std::string>& records) {
  {
    MutexLock lock(&mu_);
    if (disks_.count(disk.value())) {
      return Status::FailedPrecondition("disk " + DiskIdFromNo(disk).str() +
                                        " is open: log records are applied before it is loaded");
    }
  }
  Seq last;
  std::string v;
  rocksdb::Status got = db_->Get(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta],
                                 MetaKey(disk, MetaType::kCounters), &v);
  if (got.ok()) {
    ARCHIL_ASSIGN_OR_RETURN(CountersRecord c, DecodeCounters(v));
    last = c.last_seq;
  } else if (!got.IsNotFound()) {
    return FromRocks(got, "read the counters");
  }
  rocksdb::WriteBatch batch;
  for (const std::string& encoded : records) {
    ARCHIL_ASSIGN_OR_RETURN(LogRecord r, DecodeLogRecord(encoded, disk));
    if (r.seq.value() != last.value() + 1) {
      return Status::Corruption("log of " + DiskIdFromNo(disk).str() + ": record " +
                                std::to_string(r.seq.value()) + " after " +
                                std::to_string(last.value()));
    }
    last = r.seq;
    for (const LogMutation& m : r.mutations) {
      rocksdb::ColumnFamilyHandle* cf = core_.cfs[m.cf];
      rocksdb::Status s = m.op == LogOp::kPut      ? batch.Put(cf, m.key, m.value)
                          : m.op == LogOp::kDelete ? batch.Delete(cf, m.key)
                                                   : batch.Merge(cf, m.key, m.value);
      ARCHIL_RETURN_IF_ERROR(FromRocks(s, "replay a log record"));
    }
  }
  if (batch.Count() == 0) return Status::Ok();
  return queue_->CommitBatch(std::move(batch)).WithContext("apply log records");
}

std::vector<DiskNo> Engine::ListDisksAndHidden() {
  MutexLock lock(&mu_);
  std::vector<DiskNo> out;
  for (const auto& [n, d] : disks_) out.emplace_back(n);
  return out;
}

Result<Seq> Engine::UploadedSeq(DiskNo disk) {
  std::string v;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta], MetaKey(disk, MetaType::kLocal), &v);
  if (s.IsNotFound()) return Seq(0);
  ARCHIL_RETURN_IF_ERROR(FromRocks(s, "read LOCAL"));
  ARCHIL_ASSIGN_OR_RETURN(LocalRecord local, DecodeLocal(v));
  return local.uploaded_seq;
}

Status Engine::LogShipped(DiskNo disk, Seq through) {
  return queue_->Commit([&](Txn& t) -> Status {
    const std::string key = MetaKey(disk, MetaType::kLocal);
    LocalRecord local;
    Result<std::string> v = t.Get(core_.cfs[Cf::kMeta], key);
    if (v.ok()) {
      ARCHIL_ASSIGN_OR_RETURN(local, DecodeLocal(*v));
    } else if (v.status().code() != Status::Code::kNotFound) {
      return v.status();
    }
    if (through.value() <= local.uploaded_seq.value()) return Status::Ok();  // a repeat
    for (uint64_t s = local.uploaded_seq.value() + 1; s <= through.value(); ++s) {
      t.Delete(core_.cfs[Cf::kOutbox], OutboxKey(disk, Seq(s)));
    }
    local.uploaded_seq = through;
    t.Put(core_.cfs[Cf::kMeta], key, EncodeLocal(local));
    return Status::Ok();
  });
}

Result<bool> Engine::SegmentStored(DiskNo disk, SegNo seg) {
  std::string v;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta], MetaSegKey(disk, seg), &v);
  // With a tier a segment dies only once uploaded: no record means stored, then dead.
  if (s.IsNotFound()) return true;
  ARCHIL_RETURN_IF_ERROR(FromRocks(s, "read a segment record"));
  ARCHIL_ASSIGN_OR_RETURN(SegRecord rec, DecodeSeg(v));
  return rec.state == SegState::kUploaded;
}

Result<std::vector<std::pair<SegNo, std::string>>> Engine::SegmentFilesOf(DiskNo disk) {
  std::vector<std::pair<SegNo, std::string>> out;
  ARCHIL_ASSIGN_OR_RETURN(auto records, SegRecordsOf(disk));
  for (const auto& [seg, rec] : records) out.emplace_back(seg, segments_->Path(disk, seg));
  return out;
}

}  // namespace archil::engine
