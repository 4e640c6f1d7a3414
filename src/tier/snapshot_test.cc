// The snapshotter and the collector (docs/tiering.md §3, §4) with recovery: a random workload
// whose log is snapshotted and trimmed as it runs still recovers byte for byte; a snapshot is
// published only once its log is stored; the collector deletes nothing a retained base needs,
// not even with the clock a week ahead; recovery falls back to the older snapshot when the
// newest is not whole, and starts again after a crash.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/crc32c.h"
#include "base/test_seed.h"
#include "engine/random_workload_test_util.h"
#include "store/dir_store.h"
#include "tier/collector.h"
#include "tier/log_object.h"
#include "tier/log_shipper.h"
#include "tier/manifest.h"
#include "tier/memory_store_test_util.h"
#include "tier/recovery.h"
#include "tier/segment_uploader.h"
#include "tier/snapshot_part.h"
#include "tier/snapshotter.h"

namespace archil::tier {
namespace {

using engine::DiskNo;
using engine::Seq;

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/archil-snapshot-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    a_ = Open("a");
    ASSERT_NE(a_, nullptr);
    ASSERT_TRUE(a_->CreateDisk(DiskNo(1), {}).ok());
  }
  void TearDown() override {
    a_.reset();
    std::filesystem::remove_all(root_);
  }
  engine::EngineOptions Options(const std::string& name) {
    return engine::TestEngineOptions(root_ + "/" + name, &clock_, true);
  }
  std::unique_ptr<engine::Engine> Open(const std::string& name) {
    Result<std::unique_ptr<engine::Engine>> e = engine::Engine::Open(Options(name));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  SnapshotterOptions Snapshots(store::ObjectStore* s) {
    SnapshotterOptions o;
    o.engine = a_.get();
    o.store = s;
    o.clock = &clock_;
    o.log_bytes = 1;         // every pass that finds new log
    o.part_bytes = 4 << 10;  // many parts
    return o;
  }
  CollectorOptions Collection(store::ObjectStore* s, int64_t grace_ms) {
    CollectorOptions o;
    o.engine = a_.get();
    o.store = s;
    o.clock = &clock_;
    o.grace_ms = grace_ms;
    return o;
  }
  // Seals, uploads and ships everything.
  void ToStore(store::ObjectStore* s) {
    SegmentUploaderOptions u;
    u.engine = a_.get();
    u.store = s;
    LogShipperOptions l;
    l.engine = a_.get();
    l.store = s;
    l.max_object_bytes = 8 << 10;
    ASSERT_TRUE(a_->SealSegmentsOlderThan(0).ok());
    ASSERT_TRUE(SegmentUploader(u).Pass().ok());
    LogShipper shipper(l);
    ASSERT_TRUE(shipper.Pass().ok()) << shipper.stats().last_error;
  }
  size_t Count(MemoryStore& mem, const std::string& prefix) {
    size_t n = 0;
    for (const auto& [key, data] : mem.objects()) n += key.starts_with(prefix);
    return n;
  }
  void Write(const std::string& name) {
    Result<posix::FileSystem*> fs = a_->Disk(DiskNo(1));
    ASSERT_TRUE(fs.ok());
    ASSERT_TRUE((*fs)->Mkdir(posix::kRootIno, name, 0755, {}).ok());
  }

  std::string root_;
  FakeClock clock_;
  std::unique_ptr<engine::Engine> a_;
};

TEST_F(SnapshotTest, AWorkloadSnapshottedAndCollectedAsItRunsRecoversByteForByte) {
  Result<std::unique_ptr<store::DirStore>> bucket = store::DirStore::Open(root_ + "/bucket");
  ASSERT_TRUE(bucket.ok());
  store::ObjectStore* s = bucket->get();
  Snapshotter snapshotter(Snapshots(s));
  Collector collector(Collection(s, 0));
  engine::RandomWorkload w(a_.get(), &clock_, TestSeed());
  for (int i = 0; i < 600; ++i) {
    const int dice = static_cast<int>(w.rng()() % 100);
    if (dice < 6) {
      ToStore(s);
    } else if (dice < 9) {
      ASSERT_TRUE(snapshotter.Pass().ok()) << snapshotter.stats().last_error;
    } else if (dice < 11) {
      ASSERT_TRUE(collector.Pass().ok()) << collector.stats().last_error;
    } else {
      ASSERT_TRUE(w.Step().ok());
    }
  }
  ToStore(s);
  ASSERT_TRUE(snapshotter.Pass().ok());
  ASSERT_TRUE(collector.Pass().ok()) << collector.stats().last_error;
  // Some log after the newest snapshot, so that recovery replays records on top of it.
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(w.Step().ok());
  ToStore(s);
  const SnapshotterStats ss = snapshotter.stats();
  const CollectorStats cs = collector.stats();
  EXPECT_GT(ss.published, 2u);
  EXPECT_GT(ss.parts, ss.taken);
  EXPECT_GT(cs.deleted_log_objects, 0u);
  EXPECT_GT(cs.deleted_snapshot_objects, 0u);

  Result<RecoveryReport> report = RecoverFromStore(Options("c"), s);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->disks, w.disks().size());
  EXPECT_GE(report->snapshots, 1u);
  EXPECT_GT(report->records, 0u);
  std::unique_ptr<engine::Engine> c = Open("c");
  ASSERT_NE(c, nullptr);
  Status same = engine::CompareEngines(a_.get(), c.get(), w);
  EXPECT_TRUE(same.ok()) << same.ToString();
  EXPECT_TRUE(c->CheckInvariants().ok());
  std::printf(
      "seed %u: %llu snapshots published (%llu parts), collected %llu log objects, %llu "
      "snapshot objects, %llu segments; recovered %llu disks, %llu keys from snapshots, "
      "%llu records\n",
      TestSeed(), (unsigned long long)ss.published, (unsigned long long)ss.parts,
      (unsigned long long)cs.deleted_log_objects, (unsigned long long)cs.deleted_snapshot_objects,
      (unsigned long long)cs.deleted_segments, (unsigned long long)report->disks,
      (unsigned long long)report->snapshot_entries, (unsigned long long)report->records);
}

// What a disk holds, by path: each entry's type and permission bits, and a file's size and
// CRC-32C of its bytes or a symlink's target ("" for others). A file past 64 MiB (the workload
// extends files sparsely, up to GiBs) is read in its first and last MiB and every 64th MiB.
using Tree = std::map<std::string, std::pair<uint32_t, std::string>>;
Result<std::string> Digest(posix::FileSystem* fs, const posix::Attr& a) {
  constexpr uint64_t kMiB = 1 << 20;
  uint32_t crc = 0;
  for (uint64_t off = 0; off < a.size; off += kMiB) {
    const bool sampled = off < kMiB || off + kMiB >= a.size || off % (64 * kMiB) == 0;
    if (a.size > 64 * kMiB && !sampled) continue;
    ARCHIL_ASSIGN_OR_RETURN(std::string piece, fs->Read(a.ino, off, kMiB));
    crc = Crc32cExtend(crc, piece.data(), piece.size());
  }
  return std::to_string(a.size) + "/" + std::to_string(crc);
}
Result<Tree> DumpTree(posix::FileSystem* fs) {
  Tree out;
  std::vector<std::pair<posix::Ino, std::string>> dirs = {{posix::kRootIno, ""}};
  while (!dirs.empty()) {
    auto [dir, path] = dirs.back();
    dirs.pop_back();
    uint64_t cookie = 0;
    for (bool eof = false; !eof;) {
      ARCHIL_ASSIGN_OR_RETURN(posix::DirPage page, fs->ReadDir(dir, cookie, 256));
      eof = page.eof || page.entries.empty();
      for (const posix::DirEntry& e : page.entries) {
        cookie = e.cookie;
        if (e.name == "." || e.name == "..") continue;
        const std::string p = path + "/" + e.name;
        ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, fs->GetAttr(e.ino));
        std::string body;
        if (S_ISREG(a.mode)) {
          ARCHIL_ASSIGN_OR_RETURN(body, Digest(fs, a));
        } else if (S_ISLNK(a.mode)) {
          ARCHIL_ASSIGN_OR_RETURN(body, fs->Readlink(e.ino));
        } else if (S_ISDIR(a.mode)) {
          dirs.emplace_back(e.ino, p);
        }
        out[p] = {a.mode, std::move(body)};
      }
    }
  }
  return out;
}

TEST_F(SnapshotTest, ARecoveryFromTheMiddleOfAWorkloadOpensAndReadsEverything) {
  // No final seal, upload or ship: the store holds what the passes had stored, and its newest
  // records may name segments that were still open when they were committed.
  MemoryStore mem;
  Snapshotter snapshotter(Snapshots(&mem));
  SegmentUploaderOptions u;
  u.engine = a_.get();
  u.store = &mem;
  SegmentUploader uploader(u);
  LogShipperOptions l;
  l.engine = a_.get();
  l.store = &mem;
  LogShipper shipper(l);
  engine::RandomWorkload w(a_.get(), &clock_, TestSeed());
  // The model: every disk's tree as of each seq of its log.
  std::map<uint64_t, std::map<uint64_t, Tree>> at_seq;  // disk -> seq -> tree
  auto record = [&] {
    for (DiskNo d : w.disks()) {
      Result<engine::Seq> seq = a_->LastSeq(d);
      ASSERT_TRUE(seq.ok());
      auto& trees = at_seq[d.value()];
      if (trees.count(seq->value())) continue;
      Result<Tree> t = DumpTree(*a_->Disk(d));
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      trees.emplace(seq->value(), std::move(*t));
    }
  };
  record();
  for (int i = 0; i < 400; ++i) {
    const int dice = static_cast<int>(w.rng()() % 100);
    if (dice < 4) {
      ASSERT_TRUE(a_->SealSegmentsOlderThan(0).ok());
    } else if (dice < 8) {
      ASSERT_TRUE(uploader.Pass().ok());
    } else if (dice < 12) {
      ASSERT_TRUE(shipper.Pass().ok());
    } else if (dice < 14) {
      ASSERT_TRUE(snapshotter.Pass().ok());
    } else {
      ASSERT_TRUE(w.Step().ok());
    }
    record();  // a seal or an upload is a record too (a SEG record changes), the tree the same
  }
  Result<RecoveryReport> report = RecoverFromStore(Options("c"), &mem);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::unique_ptr<engine::Engine> c = Open("c");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->CheckInvariants().ok());
  ASSERT_FALSE(c->ListDisks().empty());
  for (DiskNo d : c->ListDisks()) {
    Result<posix::FileSystem*> fs = c->Disk(d);
    ASSERT_TRUE(fs.ok());
    // Each recovered disk is the original as of the last record the bucket held of it (the
    // recovered engine's own open may have added records since: a sweep seals segments).
    Result<engine::Seq> seq = a_->UploadedSeq(d);
    ASSERT_TRUE(seq.ok());
    EXPECT_GE(c->LastSeq(d)->value(), seq->value()) << "disk " << d.value();
    const auto& trees = at_seq[d.value()];
    auto want = trees.find(seq->value());
    ASSERT_NE(want, trees.end()) << "no tree of disk " << d.value() << " at seq " << seq->value();
    Result<Tree> got = DumpTree(*fs);  // reads every byte of every file
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, want->second) << "disk " << d.value() << " at seq " << seq->value();
    // And the recovered disk takes writes into new segments.
    Result<posix::Attr> f = (*fs)->Mknod(posix::kRootIno, "after", S_IFREG | 0644, 0, {});
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*fs)->Write(f->ino, 0, std::string(300000, 'z')).ok());
    EXPECT_EQ(*(*fs)->Read(f->ino, 299999, 1), "z");
  }
  c.reset();
  c = Open("c");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->CheckInvariants().ok());
}

TEST_F(SnapshotTest, ASnapshotIsPublishedOnlyOnceItsLogIsStored) {
  MemoryStore mem;
  Snapshotter snapshotter(Snapshots(&mem));
  Write("d");
  // Nothing shipped: the snapshot is taken and uploaded, and it waits.
  Result<Seq> x = snapshotter.TakeAndUpload(DiskNo(1));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_GT(x->value(), 0u);
  EXPECT_EQ(snapshotter.Publish(DiskNo(1), *x).code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(mem.objects().count(DiskManifestKey(DiskNo(1))), 0u);
  // Taken again at the same seq, it keeps what it stored: the same state, whoever took it.
  const std::string manifest_key = SnapshotManifestKey(DiskNo(1), 1, *x);
  const std::string stored = mem.objects().at(manifest_key);
  clock_.Advance(1000000);
  EXPECT_EQ(*snapshotter.TakeAndUpload(DiskNo(1)), *x);
  EXPECT_EQ(mem.objects().at(manifest_key), stored);
  // Parts that an interrupted attempt left without their SNAPSHOT are overwritten.
  ASSERT_TRUE(mem.Delete(manifest_key).ok());
  mem.Set(SnapshotPartKey(DiskNo(1), 1, *x, 0), "left by a crash");
  EXPECT_EQ(*snapshotter.TakeAndUpload(DiskNo(1)), *x);
  EXPECT_TRUE(DecodeSnapshotPart(mem.objects().at(SnapshotPartKey(DiskNo(1), 1, *x, 0))).ok());
  ToStore(&mem);
  ASSERT_TRUE(snapshotter.Publish(DiskNo(1), *x).ok());
  Result<ManifestRead> m = ReadDiskManifest(&mem, DiskNo(1));
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->manifest.snapshots.size(), 1u);
  EXPECT_EQ(m->manifest.snapshots[0].seq, *x);
  // A newer one goes first, the previous second; the third pushes the oldest out.
  for (int i = 0; i < 2; ++i) {
    Write("e" + std::to_string(i));
    ToStore(&mem);
    Result<Seq> y = snapshotter.TakeAndUpload(DiskNo(1));
    ASSERT_TRUE(y.ok());
    ASSERT_TRUE(snapshotter.Publish(DiskNo(1), *y).ok());
    m = ReadDiskManifest(&mem, DiskNo(1));
    ASSERT_EQ(m->manifest.snapshots.size(), 2u);
    EXPECT_EQ(m->manifest.snapshots[0].seq, *y);
    EXPECT_GT(y->value(), m->manifest.snapshots[1].seq.value());
  }
  // A snapshot waiting for the log of a disk that is then deleted is dropped.
  ASSERT_TRUE(a_->CreateDisk(DiskNo(2), {}).ok());
  ToStore(&mem);
  ASSERT_TRUE((*a_->Disk(DiskNo(2)))->Mkdir(posix::kRootIno, "x", 0755, {}).ok());
  ASSERT_TRUE(snapshotter.Pass().ok());
  EXPECT_EQ(snapshotter.stats().waiting, 1u);  // taken at X, its log not stored past X - 1
  ASSERT_TRUE(a_->DeleteDisk(DiskNo(2)).ok());
  ASSERT_TRUE(a_->CheckInvariants().ok());  // waits for the purge
  ASSERT_TRUE(snapshotter.Pass().ok());
  EXPECT_EQ(snapshotter.stats().waiting, 0u);
  // The pass publishes a waiting snapshot once its log is shipped, and no sooner.
  Write("f");
  ASSERT_TRUE(snapshotter.Pass().ok());
  EXPECT_EQ(snapshotter.stats().waiting, 0u);  // nothing new was stored: nothing taken
  ToStore(&mem);
  Write("g");
  ASSERT_TRUE(snapshotter.Pass().ok());
  EXPECT_EQ(snapshotter.stats().waiting, 1u);
  ToStore(&mem);
  ASSERT_TRUE(snapshotter.Pass().ok());
  EXPECT_EQ(snapshotter.stats().waiting, 0u);
}

TEST_F(SnapshotTest, TheCollectorKeepsEveryRetainedBaseEvenAWeekLater) {
  MemoryStore mem;
  Snapshotter snapshotter(Snapshots(&mem));
  Collector collector(Collection(&mem, kDayMs));
  const std::string logs = LogObjectPrefix(DiskNo(1));
  for (int round = 0; round < 4; ++round) {
    // Each round rewrites the same files, so the previous round's segments die.
    Result<posix::FileSystem*> fs = a_->Disk(DiskNo(1));
    ASSERT_TRUE(fs.ok());
    for (int i = 0; i < 20; ++i) {
      const std::string name = "f" + std::to_string(i);
      Result<posix::Attr> f = (*fs)->Lookup(posix::kRootIno, name);
      if (!f.ok()) f = (*fs)->Mknod(posix::kRootIno, name, S_IFREG | 0644, 0, {});
      ASSERT_TRUE(f.ok());
      ASSERT_TRUE((*fs)->Write(f->ino, 0, std::string(6000, static_cast<char>('a' + round))).ok());
    }
    ToStore(&mem);
    ASSERT_TRUE(snapshotter.Pass().ok()) << snapshotter.stats().last_error;
    ASSERT_TRUE(collector.Pass().ok()) << collector.stats().last_error;
  }
  const size_t log_objects = Count(mem, logs);
  EXPECT_GT(collector.stats().waiting, 0u);
  // Inside the grace period nothing goes.
  clock_.Advance(kDayMs * 1000 - 1000);
  ASSERT_TRUE(collector.Pass().ok());
  EXPECT_EQ(collector.stats().deleted_log_objects, 0u);
  EXPECT_EQ(Count(mem, logs), log_objects);
  // A week on, what is unreachable goes, and recovery from either retained snapshot still works.
  clock_.Advance(kDayMs * 7 * 1000);
  ASSERT_TRUE(collector.Pass().ok());
  const CollectorStats cs = collector.stats();
  EXPECT_GT(cs.deleted_log_objects, 0u);
  EXPECT_GT(cs.deleted_snapshot_objects, 0u);
  EXPECT_GT(cs.deleted_segments, 0u);
  EXPECT_LT(Count(mem, logs), log_objects);
  ASSERT_TRUE(RecoverFromStore(Options("c"), &mem).ok());
  // The newest snapshot's manifest lost: the older retained one and the log after it suffice.
  Result<ManifestRead> m = ReadDiskManifest(&mem, DiskNo(1));
  ASSERT_EQ(m->manifest.snapshots.size(), 2u);
  const PublishedSnapshot newest = m->manifest.snapshots[0];
  ASSERT_TRUE(mem.Delete(SnapshotManifestKey(DiskNo(1), newest.owner_gen, newest.seq)).ok());
  Result<RecoveryReport> report = RecoverFromStore(Options("d"), &mem);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->snapshots, 1u);
  EXPECT_GT(report->records, 0u);
  std::unique_ptr<engine::Engine> d = Open("d");
  posix::CompareOptions exact;
  exact.times = true;
  exact.blocks = true;
  Status same = posix::CompareTrees(*a_->Disk(DiskNo(1)), *d->Disk(DiskNo(1)), exact);
  EXPECT_TRUE(same.ok()) << same.ToString();
}

TEST_F(SnapshotTest, AnInterruptedRecoveryStartsAgainFromNothing) {
  MemoryStore mem;
  Write("d");
  ToStore(&mem);
  const std::string dir = root_ + "/c";
  std::filesystem::create_directories(dir + "/db");
  std::ofstream(dir + "/RECOVERING").put('x');
  std::ofstream(dir + "/db/CURRENT") << "left by a crash\n";
  std::ofstream(dir + "/junk") << "x";
  Result<RecoveryReport> report = RecoverFromStore(Options("c"), &mem);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir + "/RECOVERING"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/junk"));
  std::unique_ptr<engine::Engine> c = Open("c");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE((*c->Disk(DiskNo(1)))->Lookup(posix::kRootIno, "d").ok());
}

}  // namespace
}  // namespace archil::tier
