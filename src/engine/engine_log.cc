// Engine: the commit log as the tier reads it (the outbox) and as recovery writes it back
// (docs/tiering.md §2, §6; engine/commit/commit_log.h).
#include "engine/engine.h"
#include "engine/records/keys.h"
#include "engine/records/log_record.h"
#include "engine/records/meta_records.h"

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

namespace {

// The disk's COUNTERS.last_seq in `db` (0, with `*found` false, if it has none).
Result<Seq> LastSeqIn(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
                      rocksdb::ColumnFamilyHandle* meta, DiskNo disk, bool* found) {
  std::string v;
  rocksdb::Status got = db->Get(ro, meta, MetaKey(disk, MetaType::kCounters), &v);
  *found = got.ok();
  if (got.IsNotFound()) return Seq(0);
  ARCHIL_RETURN_IF_ERROR(FromRocks(got, "read the counters"));
  ARCHIL_ASSIGN_OR_RETURN(CountersRecord c, DecodeCounters(v));
  return c.last_seq;
}

}  // namespace

Status Engine::CheckNotLoaded(DiskNo disk) {
  MutexLock lock(&mu_);
  if (disks_.count(disk.value())) {
    return Status::FailedPrecondition("disk " + DiskIdFromNo(disk).str() +
                                      " is open: recovery writes a disk before it is loaded");
  }
  return Status::Ok();
}

Status Engine::PutUploadedSeq(rocksdb::WriteBatch* batch, DiskNo disk, Seq seq) {
  const std::string key = MetaKey(disk, MetaType::kLocal);
  LocalRecord local;
  std::string v;
  rocksdb::Status got = db_->Get(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta], key, &v);
  if (got.ok()) {
    ARCHIL_ASSIGN_OR_RETURN(local, DecodeLocal(v));
  } else if (!got.IsNotFound()) {
    return FromRocks(got, "read LOCAL");
  }
  local.uploaded_seq = seq;
  return FromRocks(batch->Put(core_.cfs[Cf::kMeta], key, EncodeLocal(local)), "write LOCAL");
}

Status Engine::ApplyLogRecords(DiskNo disk, const std::vector<std::string>& records) {
  ARCHIL_RETURN_IF_ERROR(CheckNotLoaded(disk));
  bool found = false;
  ARCHIL_ASSIGN_OR_RETURN(
      Seq last, LastSeqIn(db_.get(), rocksdb::ReadOptions(), core_.cfs[Cf::kMeta], disk, &found));
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
  if (records.empty()) return Status::Ok();
  ARCHIL_RETURN_IF_ERROR(PutUploadedSeq(&batch, disk, last));
  return queue_->CommitBatch(std::move(batch)).WithContext("apply log records");
}

Status Engine::ScanDiskState(
    DiskNo disk, const std::function<Status(Seq)>& begin,
    const std::function<Status(Cf, std::string_view, std::string_view)>& each) {
  DbView view(db_.get());
  std::string v;
  Result<std::string> counters = view.Get(core_.cfs[Cf::kMeta], MetaKey(disk, MetaType::kCounters));
  if (!counters.ok()) return counters.status().WithContext("scan disk state");
  ARCHIL_ASSIGN_OR_RETURN(CountersRecord c, DecodeCounters(*counters));
  ARCHIL_RETURN_IF_ERROR(begin(c.last_seq));
  const KeyRange range = DiskRange(disk);
  for (size_t i = 0; i < kNumCfs; ++i) {
    const Cf cf = static_cast<Cf>(i);
    if (!LoggedCf(cf)) continue;
    std::unique_ptr<rocksdb::Iterator> it = view.NewIterator(core_.cfs[cf]);
    for (it->Seek(range.begin);
         it->Valid() && (range.end.empty() || it->key().compare(range.end) < 0); it->Next()) {
      const std::string_view key = it->key().ToStringView();
      if (!LoggedKey(cf, key)) continue;
      ARCHIL_RETURN_IF_ERROR(each(cf, key, it->value().ToStringView()));
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan disk state"));
  }
  return Status::Ok();
}

Status Engine::ApplySnapshotEntries(
    DiskNo disk, Seq seq, bool first,
    const std::vector<std::tuple<Cf, std::string, std::string>>& entries) {
  ARCHIL_RETURN_IF_ERROR(CheckNotLoaded(disk));
  if (first) {
    bool found = false;
    ARCHIL_RETURN_IF_ERROR(
        LastSeqIn(db_.get(), rocksdb::ReadOptions(), core_.cfs[Cf::kMeta], disk, &found).status());
    if (found) {
      return Status::FailedPrecondition("disk " + DiskIdFromNo(disk).str() +
                                        " already has a log: a snapshot starts an empty disk");
    }
  }
  const std::string prefix = DiskPrefix(disk);
  rocksdb::WriteBatch batch;
  for (const auto& [cf, key, value] : entries) {
    if (!LoggedKey(cf, key) || !std::string_view(key).starts_with(prefix)) {
      return Status::Corruption("snapshot of " + DiskIdFromNo(disk).str() +
                                ": a key that is not its logged state");
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(batch.Put(core_.cfs[cf], key, value), "apply a snapshot"));
  }
  ARCHIL_RETURN_IF_ERROR(PutUploadedSeq(&batch, disk, seq));
  return queue_->CommitBatch(std::move(batch)).WithContext("apply a snapshot");
}

std::vector<DiskNo> Engine::ListDisksAndHidden() {
  MutexLock lock(&mu_);
  std::vector<DiskNo> out;
  for (const auto& [n, d] : disks_) out.emplace_back(n);
  return out;
}

Result<Seq> Engine::LastSeq(DiskNo disk) {
  bool found = false;
  return LastSeqIn(db_.get(), rocksdb::ReadOptions(), core_.cfs[Cf::kMeta], disk, &found);
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
