#include "engine/engine.h"

#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/sst_file_manager.h>
#include <rocksdb/table.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>

#include "base/coding.h"
#include "base/log.h"
#include "base/random.h"
#include "base/thread_name.h"
#include "engine/fs/disk_fs_ops.h"
#include "engine/records/column_families.h"
#include "engine/records/default_records.h"
#include "engine/records/intent_record.h"
#include "engine/records/keys.h"
#include "engine/records/log_record.h"
#include "engine/records/meta_records.h"
#include "engine/space/segusage_merge.h"
#include "io/rocksdb_fs.h"

namespace archil::engine {
namespace {

// Merge operands of one key the memtable keeps before it stores their merged value instead
// (RocksDB's max_successive_merges; measurements §12.10).
constexpr size_t kMaxSuccessiveMerges = 32;

// RocksDB's background work that may leave a WAL file in error (a flush syncs the WAL files it
// closes; a memtable or manifest write fails with the WAL's own error): after it, one more WAL
// sync trips an assertion inside RocksDB that aborts the process. So the commit queue breaks at
// once (the engine reopens to go on); compaction errors do not touch the WAL and do not break it.
class WalErrorListener final : public rocksdb::EventListener {
 public:
  void Attach(CommitQueue* queue) {
    Status pending;
    {
      std::lock_guard<std::mutex> l(mu_);
      queue_ = queue;
      pending = pending_;
    }
    if (!pending.ok()) queue->Fail(pending);
  }
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) override {
    if (reason == rocksdb::BackgroundErrorReason::kCompaction || error == nullptr || error->ok()) {
      return;
    }
    Status s = FromRocks(*error, "RocksDB's background work");
    std::lock_guard<std::mutex> l(mu_);
    if (queue_ != nullptr) {
      queue_->Fail(s);
    } else if (pending_.ok()) {
      pending_ = s;
    }
  }

 private:
  std::mutex mu_;
  CommitQueue* queue_ = nullptr;
  Status pending_;
};

}  // namespace

Engine::Engine(const EngineOptions& options) : options_(options) {}

Result<std::unique_ptr<Engine>> Engine::Open(const EngineOptions& options) {
  if (!options.env || !options.clock || options.dir.empty() || options.dir[0] != '/') {
    return Status::InvalidArgument("engine: env, clock and an absolute dir are required");
  }
  std::unique_ptr<Engine> e(new Engine(options));
  // RocksDB creates a missing db/ without syncing its parent, which a power loss would undo with
  // every synced write in it: the engine creates (and syncs) its directories itself.
  for (const std::string& d : {options.dir, options.dir + "/db", options.dir + "/segments"}) {
    Status made = options.env->CreateDir(d);
    if (!made.ok() && made.sys_errno() != EEXIST) return made.WithContext("engine dir");
    if (made.ok()) ARCHIL_RETURN_IF_ERROR(options.env->SyncDir(io::ParentDir(d)));
  }
  ARCHIL_RETURN_IF_ERROR(e->OpenDb());
  ARCHIL_RETURN_IF_ERROR(e->CheckSchema());
  ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(&e->boot_verifier_, sizeof e->boot_verifier_));
  e->segments_ = std::make_unique<SegmentFiles>(options.env, options.dir + "/segments");
  CommitQueueOptions qo;
  qo.sync = options.sync;
  if (options.log_commits) {
    e->log_ = std::make_unique<CommitLog>(&e->core_.cfs, options.clock);
    qo.finish = [log = e->log_.get()](Txn& t) { return log->Finish(t); };
    qo.recorded_cf_ids = 0;
    for (size_t i = 0; i < kNumCfs; ++i) {
      const uint32_t id = e->core_.cfs.handles[i]->GetID();
      if (!LoggedCf(static_cast<Cf>(i))) continue;
      if (id >= 64) return Status::Internal("engine: a logged column family has RocksDB id >= 64");
      qo.recorded_cf_ids |= uint64_t{1} << id;
    }
  }
  e->queue_ = std::make_unique<CommitQueue>(e->db_.get(), qo);
  static_cast<WalErrorListener*>(e->wal_errors_.get())->Attach(e->queue_.get());
  e->core_.db = e->db_.get();
  e->core_.queue = e->queue_.get();
  e->core_.segments = e->segments_.get();
  e->core_.lineages = &e->lineages_;
  e->space_ =
      std::make_unique<SpaceGuard>(options.env, options.dir, options.reserve_bytes, options.clock);
  e->core_.space = e->space_.get();
  e->space_->SetReclaimer([p = e.get()] { return p->Reclaim(); });
  e->core_.clock = options.clock;
  e->core_.segment_blocks = options.segment_blocks;
  e->core_.keep_until_uploaded = options.keep_segments_until_uploaded;
  e->core_.owner_gen = &e->owner_gen_;
  e->core_.on_sealed = options.on_sealed;
  ARCHIL_RETURN_IF_ERROR(e->ReplayIntents());
  ARCHIL_RETURN_IF_ERROR(e->LoadDisks());
  if (options.intent_sync_ms > 0) {
    e->syncer_ = std::thread([p = e.get()] {
      NameThisThread("engine-sync");
      p->SyncLoop();
    });
  }
  e->purger_ = std::thread([p = e.get()] {
    NameThisThread("engine-purge");
    p->PurgeLoop();
  });
  return e;
}

Engine::~Engine() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    stop_cv_.SignalAll();
    purge_cv_.SignalAll();
  }
  if (syncer_.joinable()) syncer_.join();
  if (purger_.joinable()) purger_.join();
  queue_.reset();
  {
    MutexLock lock(&mu_);
    disks_.clear();
  }
  if (db_) {
    for (rocksdb::ColumnFamilyHandle* h : core_.cfs.handles) {
      if (h) db_->DestroyColumnFamilyHandle(h);
    }
    db_->Close();
  }
}

Status Engine::OpenDb() {
  io::RocksEnvOptions reo;
  reo.test_dir = options_.dir;
  reo.max_sleep_micros = options_.rocks_max_sleep_micros;
  rocks_env_ = io::NewRocksEnv(options_.env, reo);

  rocksdb::Options o;
  o.env = rocks_env_.get();
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.paranoid_checks = true;
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  // The WAL makes a batch atomic across column families; atomic_flush would only matter without
  // it, and would drag every family into each flush of the intents' (formats.md §3).
  o.atomic_flush = false;
  // A full disk (ADR 0008): what RocksDB writes on its own comes out of the space reserve, so
  // what it holds at once is bounded by it. Every memtable together holds at most a quarter of
  // it (one flush of all of them, the reclaim's before a write is refused, fits; so does the WAL
  // file RocksDB preallocates, at most that large); the WAL files together a quarter too (past
  // that, the families holding the oldest are flushed: a family that is written little would
  // otherwise keep every WAL since its last flush, each with its preallocated tail, and it also
  // bounds what a restart replays). The open replays the WAL into memtables without writing SST
  // files, so that a server on a full disk still starts.
  const uint64_t quarter =
      std::clamp<uint64_t>(options_.reserve_bytes / 4, uint64_t{256} << 10, uint64_t{64} << 20);
  o.db_write_buffer_size = quarter;
  o.max_total_wal_size = quarter;
  // RocksDB preallocates each WAL file in steps of 1.1 x a family's write buffer, and keeps every
  // WAL file open, its unwritten tail allocated, until the memtables it holds are flushed: a
  // family's buffer of a sixteenth of the reserve keeps that tail small.
  o.write_buffer_size = std::max<size_t>(quarter / 4, size_t{64} << 10);
  o.avoid_flush_during_recovery = true;
  // A compaction starts only if, at its largest, it would leave half of the reserve free; one
  // that would not waits, and a flush or compaction that met the full disk anyway is resumed by
  // RocksDB once space is back (the SstFileManager's error recovery).
  sst_files_.reset(rocksdb::NewSstFileManager(rocks_env_.get(), rocks_env_->GetFileSystem()));
  sst_files_->SetCompactionBufferSize(options_.reserve_bytes / 2);
  o.sst_file_manager = sst_files_;
  wal_errors_ = std::make_shared<WalErrorListener>();
  o.listeners.push_back(wal_errors_);
  // RocksDB's info log (db/LOG): one file per open and a roll every 16 MiB, the newest four
  // kept, rather than a file per open kept forever (the default keeps 1,000).
  o.max_log_file_size = uint64_t{16} << 20;
  o.keep_log_file_num = 4;
  o.max_background_jobs = 2;
  o.disable_auto_compactions = !options_.auto_compactions;
  o.use_direct_reads = false;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = rocksdb::NewLRUCache(options_.block_cache_mb << 20);
  t.cache_index_and_filter_blocks = true;
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  t.format_version = 5;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));

  std::vector<rocksdb::ColumnFamilyDescriptor> cfds;
  for (const std::string& name : CfNames()) {
    rocksdb::ColumnFamilyOptions cfo(o);
    if (name == CfNames()[static_cast<size_t>(Cf::kSegUsage)]) {
      cfo.merge_operator = NewSegUsageMergeOperator();
      // A read of a segment's liveness merges every operand the memtable holds for it: without a
      // bound, freeing a segment's blocks one file at a time costs time quadratic in the files.
      cfo.max_successive_merges = kMaxSuccessiveMerges;
    }
    cfds.emplace_back(name, cfo);
  }
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = rocksdb::DB::Open(o, options_.dir + "/db", cfds, &handles, &db);
  if (!s.ok()) return FromRocks(s, "open the engine's database in " + options_.dir + "/db");
  db_.reset(db);
  core_.cfs.handles = std::move(handles);
  return Status::Ok();
}

Status Engine::CheckSchema() {
  rocksdb::ColumnFamilyHandle* def = core_.cfs[Cf::kDefault];
  std::string v;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), def, DefaultKey(DefaultRecordType::kSchema), &v);
  if (s.IsNotFound()) {
    // A new directory, unless something already lives in it.
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta]));
    it->SeekToFirst();
    if (it->Valid()) {
      return Status::Corruption(options_.dir +
                                " holds engine data without a schema record: refusing it");
    }
    SchemaRecord schema;
    schema.schema = kCurrentSchema;
    schema.min_reader = kCurrentSchema;
    schema.created = options_.clock->NowMicros() * 1000;
    ServerRecord server;
    ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(server.server_id.data(), server.server_id.size()));
    server.created = schema.created;
    rocksdb::WriteBatch b;
    b.Put(def, DefaultKey(DefaultRecordType::kSchema), EncodeSchema(schema));
    b.Put(def, DefaultKey(DefaultRecordType::kServer), EncodeServer(server));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ARCHIL_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &b), "write the schema record"));
    server_id_ = server.server_id;
    return Status::Ok();
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(s, "read the schema record"));
  ARCHIL_ASSIGN_OR_RETURN(SchemaRecord schema, DecodeSchema(v));
  if (schema.min_reader > kCurrentSchema) {
    return Status::FailedPrecondition(options_.dir + " was written by a newer archil (schema " +
                                      std::to_string(schema.schema) + "); upgrade archil-server");
  }
  ARCHIL_RETURN_IF_ERROR(
      FromRocks(db_->Get(rocksdb::ReadOptions(), def, DefaultKey(DefaultRecordType::kServer), &v),
                "read the server record"));
  ARCHIL_ASSIGN_OR_RETURN(ServerRecord server, DecodeServer(v));
  server_id_ = server.server_id;
  s = db_->Get(rocksdb::ReadOptions(), def, DefaultKey(DefaultRecordType::kOwner), &v);
  if (!s.IsNotFound()) {
    ARCHIL_RETURN_IF_ERROR(FromRocks(s, "read the owner record"));
    ARCHIL_ASSIGN_OR_RETURN(OwnerRecord owner, DecodeOwner(v));
    owner_gen_.store(owner.owner_gen);
  }
  return Status::Ok();
}

Status Engine::SetOwnerGen(uint32_t gen) {
  if (gen < owner_gen_.load()) {
    return Status::FailedPrecondition("owner generation " + std::to_string(gen) + " is below " +
                                      std::to_string(owner_gen_.load()) + ": it only grows");
  }
  if (gen == owner_gen_.load()) return Status::Ok();
  rocksdb::WriteBatch b;
  ARCHIL_RETURN_IF_ERROR(FromRocks(
      b.Put(core_.cfs[Cf::kDefault], DefaultKey(DefaultRecordType::kOwner), EncodeOwner({gen})),
      "write the owner record"));
  ARCHIL_RETURN_IF_ERROR(queue_->CommitBatch(std::move(b)));
  // Segments opened from now on carry it (a prepare reads it once per new segment).
  owner_gen_.store(gen);
  return Status::Ok();
}

Status Engine::ReplayIntents() {
  // The bytes of small writes whose segment blocks may not be durable: write them again, sync
  // the segments, then drop the intents.
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kIntent]));
  std::vector<std::pair<DiskNo, SegNo>> synced;
  rocksdb::WriteBatch drop;
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(IntentKeyParts k, ParseIntentKey(it->key().ToStringView()));
    ARCHIL_ASSIGN_OR_RETURN(IntentRecord r, DecodeIntent(it->value().ToStringView()));
    Status w = segments_->Write(k.disk, k.seg, k.seg_blk, r.data);
    if (!w.ok() && w.sys_errno() == ENOENT) {
      // The segment's name never became durable: recreate it (intents hold every byte of it
      // that any committed extent needs, since large writes sync before they commit).
      ARCHIL_RETURN_IF_ERROR(segments_->Create(k.disk, k.seg));
      w = segments_->Write(k.disk, k.seg, k.seg_blk, r.data);
    }
    ARCHIL_RETURN_IF_ERROR(w.WithContext("replay intent"));
    if (synced.empty() || synced.back() != std::make_pair(k.disk, k.seg))
      synced.emplace_back(k.disk, k.seg);
    drop.Delete(core_.cfs[Cf::kIntent], it->key());
    ++n;
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan intents"));
  if (n == 0) return Status::Ok();
  for (auto& [disk, seg] : synced) ARCHIL_RETURN_IF_ERROR(segments_->Sync(disk, seg));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  ARCHIL_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &drop), "drop replayed intents"));
  ARCHIL_LOG(kInfo) << "engine: replayed " << n << " intents into " << synced.size() << " segments";
  return Status::Ok();
}

Status Engine::LoadDisks() {
  struct Loaded {
    DiskRecord rec;
    std::map<uint64_t, EpochRecord> epochs;
    std::vector<std::pair<Ino, std::vector<uint64_t>>> orphans;
  };
  std::map<uint64_t, Loaded> loaded;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(MetaKeyParts k, ParseMetaKey(it->key().ToStringView()));
    // DISK sorts first among a disk's records, so `loaded` has the disk for the others.
    if (k.type == MetaType::kDisk) {
      ARCHIL_ASSIGN_OR_RETURN(loaded[k.disk.value()].rec, DecodeDisk(it->value().ToStringView()));
      continue;
    }
    auto d = loaded.find(k.disk.value());
    if (d == loaded.end()) continue;  // records of a disk whose DISK record is gone
    if (k.type == MetaType::kEpoch) {
      ARCHIL_ASSIGN_OR_RETURN(d->second.epochs[k.id], DecodeEpoch(it->value().ToStringView()));
    } else if (k.type == MetaType::kOrphan) {
      ARCHIL_ASSIGN_OR_RETURN(OrphanRecord o, DecodeOrphan(it->value().ToStringView()));
      std::vector<uint64_t> holders;
      for (const Bytes16& h : o.holders) {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = (v << 8) | h[i];
        holders.push_back(v);
      }
      d->second.orphans.emplace_back(Ino(k.id), std::move(holders));
    }
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan disks"));
  std::vector<DiskNo> deleting;
  for (auto& [n, l] : loaded) {
    DiskNo disk(n);
    if (l.rec.state == DiskState::kDeleting) {
      if (options_.keep_segments_until_uploaded) {
        MutexLock lock(&mu_);
        to_mark_[n] = l.rec.root.value();  // the tier marks it (again: that is idempotent)
      } else {
        deleting.push_back(disk);
      }
      continue;
    }
    lineages_.Add(disk, {l.rec.lineage_index, l.rec.root, l.rec.parent, l.rec.fork_epoch});
    SipHashKey key;
    std::copy(l.rec.dir_hash_key.begin(), l.rec.dir_hash_key.end(), key.begin());
    auto fs = std::make_shared<DiskFs>(&core_, LevelRef{disk, kHeadView}, key, l.rec.lineage_index);
    fs->RestoreEpochs(l.rec.cur_epoch, std::move(l.epochs));
    for (auto& [ino, holders] : l.orphans) fs->RestoreOrphan(ino, holders);
    MutexLock lock(&mu_);
    disks_[n] = fs;
    if (l.rec.state == DiskState::kHidden) hidden_.insert(n);
  }
  // Deletions a crash interrupted: the purger finishes them.
  for (DiskNo d : deleting) QueuePurge(d);
  // Collections of released checkpoints that a crash interrupted.
  std::vector<std::shared_ptr<DiskFs>> all;
  {
    MutexLock lock(&mu_);
    for (auto& [n, fs] : disks_) all.push_back(fs);
  }
  for (auto& fs : all) {
    ARCHIL_RETURN_IF_ERROR(fs->SweepSegments());
    ARCHIL_RETURN_IF_ERROR(fs->CollectReleased());
  }
  return Status::Ok();
}

Status Engine::CreateDisk(DiskNo disk, const DiskOptions& o) {
  if (disk.value() == 0) return Status::InvalidArgument("disk number 0 is invalid");
  // Held until the disk is served: a second creator's AlreadyExists then means it is. (Without it,
  // a first mount racing the API's creation got "no such disk": its CreateDisk saw the records
  // and returned before the first creator had put the disk in disks_.)
  MutexLock creating(&create_mu_);
  ARCHIL_RETURN_IF_ERROR(space_->Admit(kBlockSize));
  SipHashKey hash_key;
  ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(hash_key.data(), hash_key.size()));
  DiskRecord rec;
  rec.state = DiskState::kActive;
  rec.root = disk;
  rec.cur_epoch = kFirstEpoch;
  rec.created = options_.clock->NowMicros() * 1000;
  std::copy(hash_key.begin(), hash_key.end(), rec.dir_hash_key.begin());
  rec.next_lineage_index = 1;
  auto commit = [&](const std::function<Status(Txn&)>& prepare) {
    return o.sync ? queue_->Commit(prepare) : queue_->CommitUnsynced(prepare);
  };
  Status s = commit([&](Txn& t) -> Status {
    std::string key = MetaKey(disk, MetaType::kDisk);
    Result<std::string> existing = t.Get(core_.cfs[Cf::kMeta], key);
    if (existing.ok()) return Status::AlreadyExists("disk exists");
    if (existing.status().code() != Status::Code::kNotFound) return existing.status();
    t.Put(core_.cfs[Cf::kMeta], key, EncodeDisk(rec));
    CountersRecord counters;
    counters.next_ino = kFirstInoCounter;
    t.Put(core_.cfs[Cf::kMeta], MetaKey(disk, MetaType::kCounters), EncodeCounters(counters));
    InodeRecord root;
    root.mode = S_IFDIR | (o.root_mode & 07777);
    root.uid = o.root_uid;
    root.gid = o.root_gid;
    root.nlink = 2;
    root.parent = kRootIno;
    root.atime = root.mtime = root.ctime = root.btime = rec.created;
    t.Put(core_.cfs[Cf::kInode], InodeKey(disk, kRootIno),
          EncodeInode({ValueKind::kValue, 0, kFirstEpoch}, root));
    return Status::Ok();
  });
  ARCHIL_RETURN_IF_ERROR(s);
  lineages_.Add(disk, {0, disk, DiskNo(0), Epoch(0)});
  auto fs = std::make_shared<DiskFs>(&core_, LevelRef{disk, kHeadView}, hash_key, 0);
  fs->RestoreEpochs(kFirstEpoch, {});
  MutexLock lock(&mu_);
  disks_[disk.value()] = fs;
  return Status::Ok();
}

Status Engine::FinishDelete(DiskNo disk) {
  // Segments first: once the keys are gone nothing says the files belong to a deleted disk.
  ARCHIL_RETURN_IF_ERROR(segments_->RemoveDisk(disk));
  KeyRange range = DiskRange(disk);
  rocksdb::WriteBatch b;
  for (size_t i = 1; i < kNumCfs; ++i) {
    rocksdb::ColumnFamilyHandle* cf = core_.cfs.handles[i];
    if (range.end.empty()) {
      b.DeleteRange(cf, range.begin, std::string(8, '\xff') + std::string(1, '\xff'));
    } else {
      b.DeleteRange(cf, range.begin, range.end);
    }
  }
  return queue_->CommitBatch(std::move(b)).WithContext("delete the keys of a disk");
}

Result<DiskFs*> Engine::Disk(DiskNo disk) {
  MutexLock lock(&mu_);
  auto it = disks_.find(disk.value());
  if (it == disks_.end() || hidden_.count(disk.value())) {
    return Status::NotFound("no disk " + std::to_string(disk.value()));
  }
  return it->second.get();
}

Result<std::shared_ptr<DiskFs>> Engine::Head(DiskNo disk) {
  MutexLock lock(&mu_);
  auto it = disks_.find(disk.value());
  if (it == disks_.end()) return Status::NotFound("no disk " + std::to_string(disk.value()));
  return it->second;
}

std::vector<DiskNo> Engine::ListDisks() {
  MutexLock lock(&mu_);
  std::vector<DiskNo> out;
  for (const auto& [n, d] : disks_) {
    if (!hidden_.count(n)) out.emplace_back(n);
  }
  return out;
}

Status Engine::SyncIntents() {
  std::vector<std::shared_ptr<DiskFs>> disks;
  {
    MutexLock lock(&mu_);
    for (auto& [n, d] : disks_) disks.push_back(d);
  }
  for (const auto& d : disks) ARCHIL_RETURN_IF_ERROR(d->TruncateIntents());
  return Status::Ok();
}

Status Engine::Reclaim() {
  std::vector<std::shared_ptr<DiskFs>> disks;
  {
    MutexLock lock(&mu_);
    for (auto& [n, d] : disks_) disks.push_back(d);
  }
  int retired = 0;
  for (const auto& d : disks) {
    ARCHIL_ASSIGN_OR_RETURN(bool r, d->RetireDeadOpenSegment());
    retired += r;
    ARCHIL_RETURN_IF_ERROR(d->TruncateIntents());
  }
  // The WAL keeps the bytes of every small write until the memtables it holds are flushed; the
  // intents of dead or synced blocks are deleted by now, and a flush lets RocksDB drop those WAL
  // files, a compaction the intents an earlier flush wrote out. After a failed write RocksDB's
  // log writer must not be touched again (a flush switches logs).
  ARCHIL_RETURN_IF_ERROR(queue_->health());
  rocksdb::FlushOptions fo;
  fo.wait = true;
  fo.allow_write_stall = true;
  ARCHIL_RETURN_IF_ERROR(FromRocks(db_->Flush(fo, core_.cfs.handles), "flush to give space back"));
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ARCHIL_RETURN_IF_ERROR(FromRocks(db_->CompactRange(co, core_.cfs[Cf::kIntent], nullptr, nullptr),
                                   "compact the intents"));
  ARCHIL_LOG(kInfo) << "engine: the disk was full: " << retired
                    << " open segments with nothing live closed, the WAL flushed";
  return Status::Ok();
}

Result<uint64_t> Engine::CountKeys(DiskNo disk, Cf cf) {
  const std::string prefix = DiskPrefix(disk);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[cf]));
  uint64_t n = 0;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) ++n;
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "count keys"));
  return n;
}

Status Engine::FlushColumnFamilies(const std::vector<Cf>& cfs) {
  // After a failed write RocksDB's log writer must not be touched again (a flush switches logs).
  ARCHIL_RETURN_IF_ERROR(queue_->health());
  rocksdb::FlushOptions fo;
  fo.wait = true;
  for (Cf cf : cfs) {
    ARCHIL_RETURN_IF_ERROR(FromRocks(db_->Flush(fo, core_.cfs[cf]), "flush a column family"));
  }
  return Status::Ok();
}

std::vector<std::pair<DiskNo, DiskNo>> Engine::DeletionsToMark() {
  MutexLock lock(&mu_);
  std::vector<std::pair<DiskNo, DiskNo>> out;
  for (const auto& [disk, root] : to_mark_) out.emplace_back(DiskNo(disk), DiskNo(root));
  return out;
}

Status Engine::DeletionMarked(DiskNo disk) {
  uint64_t root = 0;
  {
    MutexLock lock(&mu_);
    auto it = to_mark_.find(disk.value());
    if (it == to_mark_.end()) return Status::NotFound("no deletion of " + DiskIdFromNo(disk).str());
    root = it->second;
  }
  // The tombstone outlives the purge: the collector deletes the disk's objects by it.
  rocksdb::WriteBatch b;
  std::string root_le;
  PutFixed64LE(&root_le, root);
  ARCHIL_RETURN_IF_ERROR(
      FromRocks(b.Put(core_.cfs[Cf::kDefault], DeletedDiskKey(disk), root_le), "tombstone"));
  ARCHIL_RETURN_IF_ERROR(queue_->CommitBatch(std::move(b)));
  {
    MutexLock lock(&mu_);
    to_mark_.erase(disk.value());
  }
  QueuePurge(disk);
  return Status::Ok();
}

Result<std::vector<std::pair<DiskNo, DiskNo>>> Engine::DeletedDisks() {
  const std::string prefix = DefaultKey(DefaultRecordType::kDeleted);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kDefault]));
  std::vector<std::pair<DiskNo, DiskNo>> out;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (it->key().size() != prefix.size() + 8 || it->value().size() != 8) {
      return Status::Corruption("default: a deleted-disk tombstone of the wrong size");
    }
    out.emplace_back(DiskNo(DecodeFixed64BE(it->key().data() + prefix.size())),
                     DiskNo(DecodeFixed64LE(it->value().data())));
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan tombstones"));
  return out;
}

Status Engine::ForgetDeletedDisk(DiskNo disk) {
  rocksdb::WriteBatch b;
  ARCHIL_RETURN_IF_ERROR(
      FromRocks(b.Delete(core_.cfs[Cf::kDefault], DeletedDiskKey(disk)), "tombstone"));
  return queue_->CommitBatch(std::move(b));
}

void Engine::QueuePurge(DiskNo disk) {
  MutexLock lock(&mu_);
  purges_.push_back(disk);
  purge_cv_.SignalAll();
}

Status Engine::WaitForPurges() {
  MutexLock lock(&mu_);
  while ((!purges_.empty() || purging_) && !stop_) purge_cv_.Wait(&mu_);
  Status s = purge_error_;
  purge_error_ = Status::Ok();
  return s;
}

void Engine::PurgeLoop() {
  for (;;) {
    DiskNo disk;
    {
      MutexLock lock(&mu_);
      while (purges_.empty() && !stop_) purge_cv_.Wait(&mu_);
      if (stop_) return;  // what is left stays DELETING and is purged at the next open
      disk = purges_.front();
      purges_.pop_front();
      purging_ = true;
    }
    Status s = FinishDelete(disk);
    space_->Freed();
    if (!s.ok()) {
      ARCHIL_LOG(kError) << "engine: freeing the space of deleted disk " << disk.value()
                         << " failed (retried at the next open): " << s.ToString();
    }
    MutexLock lock(&mu_);
    purging_ = false;
    if (!s.ok() && purge_error_.ok()) purge_error_ = s;
    purge_cv_.SignalAll();
  }
}

void Engine::SyncLoop() {
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (!stop_) stop_cv_.WaitFor(&mu_, std::chrono::milliseconds(options_.intent_sync_ms));
      if (stop_) return;
    }
    Status s = SyncIntents();
    if (!s.ok()) ARCHIL_LOG(kWarn) << "engine: syncing open segments failed: " << s.ToString();
    // Mutations committed without a sync (commit_hooks.h) wait at most this long for one.
    s = queue_->Sync();
    if (!s.ok())
      ARCHIL_LOG(kWarn) << "engine: syncing the write-ahead log failed: " << s.ToString();
    if (options_.keep_segments_until_uploaded && options_.seal_age_ms > 0) {
      s = SealSegmentsOlderThan(int64_t{options_.seal_age_ms} * 1'000'000);
      if (!s.ok()) ARCHIL_LOG(kWarn) << "engine: sealing by age failed: " << s.ToString();
    }
  }
}

}  // namespace archil::engine
