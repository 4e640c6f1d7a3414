// The log shipper and recovery together: a disk survives the loss of its engine directory
// through the object store. A random workload (with checkpoints and branches) runs on a tiered
// engine while uploads and shipping passes interleave with it; an empty directory recovered from
// the store then holds the same disks, checkpoints and branches, byte for byte and time for time.
// Plus: an object a crash left between the PUT and the advance is adopted; one that differs
// stops that disk; a record waits for its segment.
#include "tier/recovery.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "base/test_seed.h"
#include "engine/random_workload_test_util.h"
#include "engine/records/log_record.h"
#include "store/dir_store.h"
#include "tier/collector.h"
#include "tier/log_object.h"
#include "tier/log_shipper.h"
#include "tier/manifest.h"
#include "tier/memory_store_test_util.h"
#include "tier/segment_uploader.h"
#include "tier/snapshotter.h"

namespace archil::tier {
namespace {

// Each task a recovery reported, with the highest count and bytes it reached.
class RecordingProgress final : public Progress {
 public:
  struct Task {
    std::string name;
    uint64_t done = 0, total = 0, bytes = 0;
  };
  void Update(std::string_view task, uint64_t done, uint64_t total, uint64_t bytes) override {
    MutexLock lock(&mu_);
    if (tasks_.empty() || tasks_.back().name != task) tasks_.push_back({std::string(task)});
    Task& t = tasks_.back();
    t.done = std::max(t.done, done);
    t.total = total;
    t.bytes = std::max(t.bytes, bytes);
  }
  std::vector<Task> tasks() {
    MutexLock lock(&mu_);
    return tasks_;
  }

 private:
  Mutex mu_;
  std::vector<Task> tasks_ ARCHIL_GUARDED_BY(mu_);
};

using engine::DiskNo;
using engine::Seq;

// A valid first log object of `disk` that another writer made: one empty record.
std::string ForeignFirstObject(DiskNo disk) {
  LogObject o;
  o.disk = disk;
  o.first_seq = Seq(1);
  engine::LogRecord r;
  r.seq = Seq(1);
  o.records.push_back(engine::EncodeLogRecord(r));
  return EncodeLogObject(o);
}

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/archil-recovery-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  engine::EngineOptions Options(const std::string& name) {
    return engine::TestEngineOptions(root_ + "/" + name, &clock_, true);
  }
  std::unique_ptr<engine::Engine> Open(const std::string& name) {
    Result<std::unique_ptr<engine::Engine>> e = engine::Engine::Open(Options(name));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  static LogShipperOptions Shipping(engine::Engine* e, store::ObjectStore* s) {
    LogShipperOptions o;
    o.engine = e;
    o.store = s;
    return o;
  }
  static SegmentUploaderOptions Uploading(engine::Engine* e, store::ObjectStore* s) {
    SegmentUploaderOptions o;
    o.engine = e;
    o.store = s;
    return o;
  }
  std::string root_;
  FakeClock clock_;
};

TEST_F(RecoveryTest, AFreshDirectoryRecoversEveryDiskCheckpointAndBranchFromTheStore) {
  Result<std::unique_ptr<store::DirStore>> bucket = store::DirStore::Open(root_ + "/bucket");
  ASSERT_TRUE(bucket.ok());
  std::unique_ptr<engine::Engine> a = Open("a");
  SegmentUploader uploader(Uploading(a.get(), bucket->get()));
  LogShipperOptions so = Shipping(a.get(), bucket->get());
  so.max_object_bytes = 16 << 10;  // many objects
  LogShipper shipper(so);
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  engine::RandomWorkload w(a.get(), &clock_, TestSeed());
  for (int i = 0; i < 500; ++i) {
    const int dice = static_cast<int>(w.rng()() % 100);
    if (dice < 5) {
      ASSERT_TRUE(a->SealSegmentsOlderThan(0).ok());
    } else if (dice < 10) {
      ASSERT_TRUE(uploader.Pass().ok());
    } else if (dice < 15) {
      ASSERT_TRUE(shipper.Pass().ok()) << shipper.stats().last_error;
    } else {
      ASSERT_TRUE(w.Step().ok());
    }
  }
  // Everything to the store: seal, upload, ship (the uploads' own records, then nothing left).
  ASSERT_TRUE(a->SealSegmentsOlderThan(0).ok());
  ASSERT_TRUE(uploader.Pass().ok());
  ASSERT_TRUE(shipper.Pass().ok());
  EXPECT_EQ(shipper.stats().waiting_records, 0u);
  EXPECT_GT(shipper.stats().shipped_objects, 10u);
  for (DiskNo d : w.disks()) EXPECT_TRUE(a->OutboxRecords(d, Seq(0), 1)->empty());

  RecordingProgress progress;
  Result<RecoveryReport> report = RecoverFromStore(Options("c"), bucket->get(), 1, &progress);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->disks, w.disks().size());
  EXPECT_EQ(report->log_objects, shipper.stats().shipped_objects);
  EXPECT_EQ(report->records, shipper.stats().shipped_records);
  // Each phase was reported to its end, in order.
  const auto& tasks = progress.tasks();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].name, "log objects read");
  EXPECT_EQ(tasks[0].done, shipper.stats().shipped_objects);
  EXPECT_EQ(tasks[0].total, shipper.stats().shipped_objects);
  EXPECT_GT(tasks[0].bytes, 0u);
  EXPECT_EQ(tasks[1].name, "log objects replayed");
  EXPECT_EQ(tasks[1].done, tasks[1].total);
  EXPECT_EQ(tasks[1].total, shipper.stats().shipped_objects);
  EXPECT_EQ(tasks[2].name, "segments downloaded");
  EXPECT_EQ(tasks[2].done, report->segments);
  EXPECT_EQ(tasks[2].total, report->segments);
  EXPECT_EQ(tasks[2].bytes, report->segment_bytes);
  EXPECT_GT(report->segments, 0u);
  std::unique_ptr<engine::Engine> c = Open("c");
  ASSERT_NE(c, nullptr);
  Status same = engine::CompareEngines(a.get(), c.get(), w);
  EXPECT_TRUE(same.ok()) << same.ToString();
  EXPECT_TRUE(c->CheckInvariants().ok());
  // The recovered disks take writes.
  EXPECT_TRUE((*c->Disk(DiskNo(1)))->Mkdir(posix::kRootIno, "after-recovery", 0755, {}).ok());
  // A directory that holds an engine is refused.
  c.reset();
  EXPECT_EQ(RecoverFromStore(Options("c"), bucket->get()).status().code(),
            Status::Code::kFailedPrecondition);
}

TEST_F(RecoveryTest, ARecordWaitsForItsSegmentAndAMissingSegmentFailsRecovery) {
  MemoryStore mem;
  std::unique_ptr<engine::Engine> a = Open("a");
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  posix::FileSystem* fs = *a->Disk(DiskNo(1));
  posix::Ino f = fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
  LogShipper shipper(Shipping(a.get(), &mem));
  ASSERT_TRUE(shipper.Pass().ok());  // create disk, mknod: no segment
  const uint64_t before = shipper.stats().shipped_records;
  EXPECT_EQ(before, 2u);
  ASSERT_TRUE(fs->Write(f, 0, std::string(4096, 'w')).ok());
  ASSERT_TRUE(shipper.Pass().ok());
  EXPECT_EQ(shipper.stats().shipped_records, before);  // the write waits for its segment
  EXPECT_EQ(shipper.stats().waiting_records, 1u);
  ASSERT_TRUE(a->SealSegmentsOlderThan(0).ok());
  SegmentUploader uploader(Uploading(a.get(), &mem));
  ASSERT_TRUE(uploader.Pass().ok());
  ASSERT_TRUE(shipper.Pass().ok());
  EXPECT_EQ(shipper.stats().waiting_records, 0u);
  EXPECT_EQ(shipper.stats().shipped_records, before + 3);  // write, seal, upload
  // The store loses the segment object: recovery says so rather than serve a hole.
  for (const auto& [key, data] : mem.objects()) {
    if (key.starts_with("lineages/")) {
      ASSERT_TRUE(mem.Delete(key).ok());
    }
  }
  Result<RecoveryReport> r = RecoverFromStore(Options("c"), &mem);
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption) << r.status().ToString();
}

TEST_F(RecoveryTest, AnObjectACrashLeftIsAdoptedAndOneThatDiffersStopsItsDisk) {
  MemoryStore mem;
  std::unique_ptr<engine::Engine> a = Open("a");
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE(a->CreateDisk(DiskNo(2), {}).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        (*a->Disk(DiskNo(1)))->Mkdir(posix::kRootIno, "d" + std::to_string(i), 0755, {}).ok());
  }
  // kill -9 after the PUT of records 1..2 and before the advance: the object is there.
  auto records = *a->OutboxRecords(DiskNo(1), Seq(0), 2);
  LogObject crashed;
  crashed.disk = DiskNo(1);
  crashed.first_seq = Seq(1);
  for (auto& [seq, rec] : records) crashed.records.push_back(rec);
  mem.Set(LogObjectKey(DiskNo(1), 1, Seq(1)), EncodeLogObject(crashed));
  // Disk 2's first object name holds something else entirely.
  mem.Set(LogObjectKey(DiskNo(2), 1, Seq(1)), ForeignFirstObject(DiskNo(2)));

  LogShipper shipper(Shipping(a.get(), &mem));
  EXPECT_EQ(shipper.Pass().code(), Status::Code::kCorruption);
  LogShipperStats st = shipper.stats();
  EXPECT_EQ(st.adopted_objects, 1u);
  EXPECT_EQ(st.stopped_disks, std::set<uint64_t>{2});
  EXPECT_EQ(*a->UploadedSeq(DiskNo(1)), Seq(4));  // create + 3 mkdirs, two of them adopted
  EXPECT_EQ(*a->UploadedSeq(DiskNo(2)), Seq(0));
  EXPECT_FALSE(a->OutboxRecords(DiskNo(2), Seq(0), 10)->empty());  // kept
  // The stop holds.
  EXPECT_TRUE(shipper.Pass().ok());
  EXPECT_EQ(*a->UploadedSeq(DiskNo(2)), Seq(0));
}

TEST_F(RecoveryTest, ABranchShipsOnlyAfterItsParentsForkAndIsDroppedWithoutIt) {
  MemoryStore mem;
  std::unique_ptr<engine::Engine> a = Open("a");
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE((*a->Disk(DiskNo(1)))->Mkdir(posix::kRootIno, "d", 0755, {}).ok());
  ASSERT_TRUE(a->Checkpoint(DiskNo(1), "c").ok());
  ASSERT_TRUE(a->CreateBranch(DiskNo(1), "c", DiskNo(7), "b").ok());
  // The parent's first object name is taken by something else: its shipping stops, and the
  // branch's creation record must wait for it.
  const std::string parent_first = LogObjectKey(DiskNo(1), 1, Seq(1));
  mem.Set(parent_first, ForeignFirstObject(DiskNo(1)));
  {
    LogShipper shipper(Shipping(a.get(), &mem));
    EXPECT_EQ(shipper.Pass().code(), Status::Code::kCorruption);
    EXPECT_EQ(*a->UploadedSeq(DiskNo(7)), Seq(0));
    EXPECT_GT(shipper.stats().waiting_records, 0u);
  }
  // With the name free, both ship, the parent first.
  ASSERT_TRUE(mem.Delete(parent_first).ok());
  LogShipperOptions one_each = Shipping(a.get(), &mem);
  one_each.max_object_bytes = 1;  // one record per object
  LogShipper shipper(one_each);
  ASSERT_TRUE(shipper.Pass().ok());
  ASSERT_TRUE(shipper.Pass().ok());
  EXPECT_GT(a->UploadedSeq(DiskNo(7))->value(), 0u);
  EXPECT_EQ(shipper.stats().waiting_records, 0u);
  // A store that lost the parent's newest object: the branch cannot be recovered, and is dropped.
  std::string newest;
  for (const auto& [key, data] : mem.objects()) {
    if (key.starts_with(LogObjectPrefix(DiskNo(1)))) newest = key;
  }
  ASSERT_FALSE(newest.empty());
  ASSERT_NE(newest, parent_first);  // the parent still has a prefix of its log
  ASSERT_TRUE(mem.Delete(newest).ok());
  Result<RecoveryReport> report = RecoverFromStore(Options("c"), &mem);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->dropped_disks, 1u);
  EXPECT_EQ(report->disks, 1u);
  std::unique_ptr<engine::Engine> c = Open("c");
  EXPECT_EQ(c->ListDisks(), std::vector<DiskNo>{DiskNo(1)});
}

TEST_F(RecoveryTest, AnOutageStopsShippingAndItResumesByItself) {
  MemoryStore mem;
  std::unique_ptr<engine::Engine> a = Open("a");
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  mem.SetDown(true);
  LogShipperOptions o = Shipping(a.get(), &mem);
  o.interval_ms = 20;
  LogShipper shipper(o);
  shipper.Start();
  ASSERT_TRUE((*a->Disk(DiskNo(1)))->Mkdir(posix::kRootIno, "d", 0755, {}).ok());
  for (int i = 0; i < 500 && shipper.stats().failed_passes == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(shipper.stats().failed_passes, 0u);
  EXPECT_EQ(*a->UploadedSeq(DiskNo(1)), Seq(0));
  mem.SetDown(false);
  for (int i = 0; i < 500 && a->UploadedSeq(DiskNo(1))->value() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(*a->UploadedSeq(DiskNo(1)), Seq(2));
}

}  // namespace
}  // namespace archil::tier

namespace archil::tier {
namespace {

// A deleted disk: its purge waits for the bucket's mark, recovery then skips it, and the
// collector removes every object of it (its MANIFEST last) and forgets it; the other disk stays.
TEST_F(RecoveryTest, ADeletedDiskIsMarkedSkippedByRecoveryAndCollected) {
  MemoryStore mem;
  std::unique_ptr<engine::Engine> a = Open("a");
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE(a->CreateDisk(DiskNo(2), {}).ok());
  for (DiskNo d : {DiskNo(1), DiskNo(2)}) {
    posix::FileSystem* fs = *a->Disk(d);
    posix::Ino f = fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
    ASSERT_TRUE(fs->Write(f, 0, std::string(200000, 'x')).ok());
  }
  SegmentUploader uploader(Uploading(a.get(), &mem));
  LogShipper shipper(Shipping(a.get(), &mem));
  auto ship = [&] {
    for (Status s : {a->SealSegmentsOlderThan(0), uploader.Pass(), shipper.Pass()}) {
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  };
  ship();
  auto count = [&](const std::string& part) {
    size_t n = 0;
    for (const auto& [key, data] : mem.objects()) n += key.find(part) != std::string::npos;
    return n;
  };
  const std::string id2 = engine::DiskIdFromNo(DiskNo(2)).str();
  ASSERT_GT(count(id2), 2u);

  ASSERT_TRUE(a->DeleteDisk(DiskNo(2)).ok());
  ASSERT_TRUE(a->WaitForPurges().ok());
  // Not purged yet: the bucket does not know.
  ASSERT_EQ(a->DeletionsToMark().size(), 1u);
  EXPECT_GT(*a->CountKeys(DiskNo(2), engine::Cf::kChunk), 0u);
  ship();  // marks it
  EXPECT_TRUE(a->DeletionsToMark().empty());
  EXPECT_EQ(shipper.stats().deletions_marked, 1u);
  ASSERT_TRUE(a->WaitForPurges().ok());
  EXPECT_EQ(*a->CountKeys(DiskNo(2), engine::Cf::kChunk), 0u);
  ASSERT_EQ(a->DeletedDisks()->size(), 1u);
  Result<ManifestRead> m = ReadDiskManifest(&mem, DiskNo(2));
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->manifest.deleting);

  // Recovery skips it.
  Result<RecoveryReport> r = RecoverFromStore(Options("b"), &mem);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->deleted_disks, 1u);
  std::unique_ptr<engine::Engine> b = Open("b");
  EXPECT_EQ(b->ListDisks(), std::vector<DiskNo>{DiskNo(1)});
  b.reset();

  // The collector: nothing inside the grace period; after it, every object, the MANIFEST in the
  // pass after the others, then the tombstone.
  CollectorOptions co;
  co.engine = a.get();
  co.store = &mem;
  co.clock = &clock_;
  co.grace_ms = 1000;
  Collector collector(co);
  ASSERT_TRUE(collector.Pass().ok());
  EXPECT_GT(count(id2), 0u);
  clock_.Advance(2'000'000);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(collector.Pass().ok());
    clock_.Advance(2'000'000);
  }
  EXPECT_EQ(count(id2), 0u);
  EXPECT_TRUE(a->DeletedDisks()->empty());
  EXPECT_EQ(collector.stats().deleted_disks, 1u);
  // Disk 1 is whole.
  Result<RecoveryReport> again = RecoverFromStore(Options("c"), &mem);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  std::unique_ptr<engine::Engine> c = Open("c");
  EXPECT_EQ(*(*c->Disk(DiskNo(1)))
                 ->Read((*(*c->Disk(DiskNo(1)))->Lookup(posix::kRootIno, "f")).ino, 0, 3),
            "xxx");
}

}  // namespace
}  // namespace archil::tier
