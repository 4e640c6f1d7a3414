// SegmentUploader over a real engine on the local file system: uploads by link and by copy,
// segments that die only after their upload, the state a crash between the PUT and the record
// leaves, a stored object that differs, a store outage and the background thread.
#include "tier/segment_uploader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include "engine/engine.h"
#include "io/posix_env.h"
#include "store/dir_store.h"
#include "tier/memory_store_test_util.h"

namespace archil::tier {
namespace {

using engine::DiskNo;
using engine::SegNo;

class SegmentUploaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/archil-uploader-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    OpenEngine({});
  }
  void OpenEngine(std::function<void()> on_sealed) {
    engine_.reset();
    engine::EngineOptions o;
    o.on_sealed = std::move(on_sealed);
    o.env = io::PosixEnv();
    o.dir = root_ + "/engine";
    o.clock = &clock_;
    o.segment_blocks = 16;  // 64 KiB segments
    o.intent_sync_ms = 0;
    o.block_cache_mb = 8;
    o.keep_segments_until_uploaded = true;
    o.reserve_bytes = 0;
    Result<std::unique_ptr<engine::Engine>> e = engine::Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(root_);
  }
  // A disk with one file rewritten `rounds` times (64 KiB each): one sealed segment per round,
  // all but the newest dead once uploaded. Returns the file's inode.
  posix::Ino Churn(DiskNo disk, int rounds) {
    posix::FileSystem* fs = *engine_->Disk(disk);
    Result<posix::Attr> f = fs->Lookup(posix::kRootIno, "f");
    posix::Ino ino = f.ok() ? f->ino : fs->Mknod(posix::kRootIno, "f", S_IFREG | 0644, 0, {})->ino;
    for (int i = 0; i < rounds; ++i) {
      EXPECT_TRUE(fs->Write(ino, 0, std::string(65536, static_cast<char>('a' + i % 26))).ok());
    }
    return ino;
  }
  size_t SegmentFiles(DiskNo disk) {
    const std::string dir = root_ + "/engine/segments/" + DirName(disk);
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
    return n;
  }
  static std::string DirName(DiskNo disk) {
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(disk.value()));
    return b;
  }
  SegmentUploaderOptions Options(store::ObjectStore* store) {
    SegmentUploaderOptions o;
    o.engine = engine_.get();
    o.store = store;
    o.interval_ms = 50;
    return o;
  }

  std::string root_;
  FakeClock clock_;
  std::unique_ptr<engine::Engine> engine_;
};

TEST_F(SegmentUploaderTest, ObjectNamesFollowTheLayout) {
  EXPECT_EQ(SegmentUploader::ObjectKey(DiskNo(1), DiskNo(0xab), SegNo(0x10000002a)),
            "lineages/dsk-0000000000000001/seg/dsk-00000000000000ab/000000010000002a");
}

TEST_F(SegmentUploaderTest, LinksOnTheSameFileSystemAndSegmentsDieOnlyAfterTheirUpload) {
  Result<std::unique_ptr<store::DirStore>> dir = store::DirStore::Open(root_ + "/objects");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  posix::Ino f = Churn(DiskNo(1), 20);
  // A second file's write seals the segment that holds f's live data.
  posix::FileSystem* fs = *engine_->Disk(DiskNo(1));
  posix::Ino g = fs->Mknod(posix::kRootIno, "g", S_IFREG | 0644, 0, {})->ino;
  ASSERT_TRUE(fs->Write(g, 0, std::string(65536, 'z')).ok());
  const size_t before = SegmentFiles(DiskNo(1));
  EXPECT_GE(before, 19u);  // nothing uploaded yet: even the dead ones stay
  Result<std::vector<engine::SealedSegment>> sealed = engine_->SealedSegments();
  ASSERT_TRUE(sealed.ok());
  ASSERT_EQ(sealed->size(), before - 1);  // all but the open one
  for (size_t i = 1; i < sealed->size(); ++i) {
    EXPECT_LE((*sealed)[i - 1].sealed_ns, (*sealed)[i].sealed_ns);
  }
  // The newest sealed segment holds f's data, live: its object must be that very file.
  const engine::SealedSegment live = sealed->back();
  const std::string live_bytes = ReadWholeFile(live.path);

  SegmentUploader up(Options(dir->get()));
  ASSERT_TRUE(up.Pass().ok());
  SegmentUploaderStats st = up.stats();
  EXPECT_EQ(st.uploaded_segments, sealed->size());
  EXPECT_EQ(st.linked_segments, sealed->size());
  EXPECT_EQ(st.pending_segments, 0u);
  EXPECT_TRUE(engine_->SealedSegments()->empty());
  EXPECT_EQ(SegmentFiles(DiskNo(1)), 2u);  // the dead ones went once uploaded: f's live, g's open
  // Every object stays, the dead segments' too (the collector's job, not the engine's).
  for (const engine::SealedSegment& s : *sealed) {
    const std::string key = SegmentUploader::ObjectKey(s.root, s.disk, s.seg);
    Result<store::ObjectInfo> info = (*dir)->Head(key);
    ASSERT_TRUE(info.ok()) << key;
  }
  const std::string live_key = SegmentUploader::ObjectKey(live.root, live.disk, live.seg);
  EXPECT_EQ(*(*dir)->Get(live_key), live_bytes);
  EXPECT_TRUE((*dir)->HoldsFile(live_key, live.path));
  // A second pass has nothing to do; the data reads back.
  ASSERT_TRUE(up.Pass().ok());
  EXPECT_EQ(up.stats().uploaded_segments, sealed->size());
  EXPECT_EQ(*(*engine_->Disk(DiskNo(1)))->Read(f, 0, 65536),
            std::string(65536, static_cast<char>('a' + 19 % 26)));
  ASSERT_TRUE(engine_->CheckInvariants().ok());
}

TEST_F(SegmentUploaderTest, CopiesToAStoreThatDoesNotLink) {
  MemoryStore mem;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  Churn(DiskNo(1), 5);
  std::vector<engine::SealedSegment> sealed = *engine_->SealedSegments();
  ASSERT_EQ(sealed.size(), 4u);
  std::map<std::string, std::string> want;
  for (const auto& s : sealed)
    want[SegmentUploader::ObjectKey(s.root, s.disk, s.seg)] = ReadWholeFile(s.path);
  SegmentUploader up(Options(&mem));
  ASSERT_TRUE(up.Pass().ok());
  EXPECT_EQ(up.stats().linked_segments, 0u);
  EXPECT_EQ(up.stats().uploaded_bytes, 4u * (65536 + 4096));
  EXPECT_EQ(mem.objects(), want);
}

TEST_F(SegmentUploaderTest, AnObjectStoredBeforeACrashIsAdoptedWhenItIsTheSame) {
  // kill -9 after the PUT and before the batch leaves exactly this: the object, and SEALED.
  MemoryStore mem;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  Churn(DiskNo(1), 3);
  std::vector<engine::SealedSegment> sealed = *engine_->SealedSegments();
  ASSERT_EQ(sealed.size(), 2u);
  const auto& s = sealed.front();
  mem.Set(SegmentUploader::ObjectKey(s.root, s.disk, s.seg), ReadWholeFile(s.path));
  SegmentUploader up(Options(&mem));
  ASSERT_TRUE(up.Pass().ok());
  EXPECT_EQ(up.stats().uploaded_segments, 2u);
  EXPECT_EQ(up.stats().adopted_segments, 1u);
  EXPECT_TRUE(engine_->SealedSegments()->empty());
}

TEST_F(SegmentUploaderTest, AnObjectThatDiffersStopsItsDiskOnlyAndKeepsItsSegments) {
  MemoryStore mem;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(2), {}).ok());
  Churn(DiskNo(1), 4);
  Churn(DiskNo(2), 4);
  std::vector<engine::SealedSegment> sealed = *engine_->SealedSegments();
  ASSERT_EQ(sealed.size(), 6u);
  const engine::SealedSegment* first1 = nullptr;
  for (const auto& s : sealed) {
    if (s.disk == DiskNo(1) && !first1) first1 = &s;
  }
  ASSERT_NE(first1, nullptr);
  std::string other = ReadWholeFile(first1->path);
  other[5000] ^= 1;  // same size, one bit apart
  mem.Set(SegmentUploader::ObjectKey(first1->root, first1->disk, first1->seg), other);
  const size_t files1 = SegmentFiles(DiskNo(1));

  // One upload at a time, so that none of disk 1's later segments is in flight when the mismatch
  // is found (with more, those already started finish; none starts after).
  SegmentUploaderOptions o = Options(&mem);
  o.parallel = 1;
  SegmentUploader up(o);
  Status s = up.Pass();
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  SegmentUploaderStats st = up.stats();
  EXPECT_EQ(st.stopped_disks, std::set<uint64_t>{1});
  EXPECT_EQ(st.uploaded_segments, 3u);  // disk 2's
  EXPECT_EQ(st.pending_segments, 3u);   // disk 1's
  EXPECT_EQ(SegmentFiles(DiskNo(1)), files1);
  EXPECT_FALSE(st.last_error.empty());
  // The stop holds: another pass does not touch disk 1 again.
  EXPECT_EQ(up.Pass().code(), Status::Code::kOk);
  EXPECT_EQ(up.stats().pending_segments, 3u);
}

TEST_F(SegmentUploaderTest, AStoreOutageLeavesSegmentsPendingAndUploadsResumeInSealOrder) {
  MemoryStore mem;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  Churn(DiskNo(1), 6);
  mem.SetDown(true);
  SegmentUploader up(Options(&mem));
  EXPECT_EQ(up.Pass().code(), Status::Code::kUnavailable);
  SegmentUploaderStats st = up.stats();
  EXPECT_EQ(st.pending_segments, 5u);
  EXPECT_EQ(st.pending_bytes, 5u * (65536 + 4096));
  EXPECT_EQ(st.oldest_pending_sealed_ns, engine_->SealedSegments()->front().sealed_ns);
  EXPECT_EQ(st.failed_passes, 1u);
  EXPECT_GE(SegmentFiles(DiskNo(1)), 6u);  // nothing died
  mem.SetDown(false);
  ASSERT_TRUE(up.Pass().ok());
  EXPECT_EQ(up.stats().pending_segments, 0u);
  EXPECT_TRUE(up.stats().last_error.empty());
  EXPECT_EQ(mem.objects().size(), 5u);
}

TEST_F(SegmentUploaderTest, ABranchsSegmentsLiveUnderItsRootsLineage) {
  MemoryStore mem;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  Churn(DiskNo(1), 2);
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(1), "c").ok());
  ASSERT_TRUE(engine_->CreateBranch(DiskNo(1), "c", DiskNo(7), "b").ok());
  Churn(DiskNo(7), 3);
  SegmentUploader up(Options(&mem));
  ASSERT_TRUE(up.Pass().ok());
  size_t branch_objects = 0;
  for (const auto& [key, data] : mem.objects()) {
    EXPECT_TRUE(key.starts_with("lineages/dsk-0000000000000001/seg/")) << key;
    branch_objects += key.find("/seg/dsk-0000000000000007/") != std::string::npos;
  }
  EXPECT_GE(branch_objects, 2u);
}

// What waits is known per disk as soon as a pass lists it, and comes off as uploads complete.
TEST_F(SegmentUploaderTest, TheBacklogIsKnownPerDiskAndGoesAsItsSegmentsUpload) {
  MemoryStore mem;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(2), {}).ok());
  Churn(DiskNo(1), 6);
  Churn(DiskNo(2), 3);
  mem.SetDown(true);
  SegmentUploader up(Options(&mem));
  EXPECT_FALSE(up.Pass().ok());
  DiskBacklog one = up.Waiting(DiskNo(1)), two = up.Waiting(DiskNo(2));
  EXPECT_EQ(one.segments, 5u);
  EXPECT_EQ(one.bytes, 5u * (65536 + 4096));
  EXPECT_EQ(two.segments, 2u);
  EXPECT_EQ(two.bytes, 2u * (65536 + 4096));
  EXPECT_GT(one.oldest_sealed_ns, 0);
  EXPECT_EQ(up.Waiting(DiskNo(3)).bytes, 0u);
  EXPECT_EQ(up.stats().pending_bytes, one.bytes + two.bytes);
  mem.SetDown(false);
  ASSERT_TRUE(up.Pass().ok());
  EXPECT_EQ(up.Waiting(DiskNo(1)).bytes, 0u);
  EXPECT_EQ(up.Waiting(DiskNo(2)).segments, 0u);
  EXPECT_GT(up.stats().bytes_per_second, 0u);
}

// A MemoryStore seen through a wrapper whose PutFile a test replaces.
class ForwardingStore : public store::ObjectStore {
 public:
  explicit ForwardingStore(MemoryStore* inner) : inner_(inner) {}
  Result<std::string> Put(std::string_view k, std::string_view d,
                          const store::PutOptions& o) override {
    return inner_->Put(k, d, o);
  }
  Result<FileUpload> PutFile(std::string_view key, const std::string& path,
                             uint64_t size) override {
    return inner_->PutFile(key, path, size);
  }
  Result<std::string> Get(std::string_view k, uint64_t off, uint64_t len) override {
    return inner_->Get(k, off, len);
  }
  Result<store::ObjectInfo> Head(std::string_view k) override { return inner_->Head(k); }
  Result<store::ListPage> List(std::string_view p, std::string_view a, size_t l) override {
    return inner_->List(p, a, l);
  }
  Status Delete(std::string_view k) override { return inner_->Delete(k); }
  bool EnforcesConditions() const override { return true; }
  std::string Describe() const override { return "memory, forwarded"; }

 private:
  MemoryStore* inner_;
};

// A store whose uploads take a while, counting how many run at once.
class SlowStore final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<FileUpload> PutFile(std::string_view key, const std::string& path,
                             uint64_t size) override {
    const int now = ++running_;
    for (int seen = most_; now > seen && !most_.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    --running_;
    return ForwardingStore::PutFile(key, path, size);
  }
  int most() const { return most_; }

 private:
  std::atomic<int> running_{0}, most_{0};
};

TEST_F(SegmentUploaderTest, SeveralSegmentsUploadAtOnceAndTheShipperIsToldAfterEach) {
  MemoryStore mem;
  SlowStore slow(&mem);
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  Churn(DiskNo(1), 9);
  std::atomic<int> told{0};
  SegmentUploaderOptions o = Options(&slow);
  o.parallel = 4;
  o.on_uploaded = [&] { ++told; };
  SegmentUploader up(o);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(up.Pass().ok());
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(up.stats().uploaded_segments, 8u);
  EXPECT_GE(slow.most(), 2) << "uploads ran one at a time";
  EXPECT_LE(slow.most(), 4);
  // The overlap itself is what most() counts; the time only reports it (a sanitized or busy run
  // stretches it past the serial 800 ms).
  std::printf(
      "8 uploads of 100 ms, 4 at a time: %lld ms\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  EXPECT_EQ(told.load(), 8) << "the shipper is told after each upload";
  EXPECT_TRUE(up.Pass().ok());
  EXPECT_EQ(told.load(), 8) << "told after a pass that uploaded nothing";
}

// EngineOptions::on_sealed: each seal (here: full segments) wakes the uploader, so a segment goes
// at once and not at the next timed pass.
TEST_F(SegmentUploaderTest, ASealWakesTheUploader) {
  MemoryStore mem;
  std::atomic<SegmentUploader*> target{nullptr};
  std::atomic<int> seals{0};
  OpenEngine([&] {
    ++seals;
    if (SegmentUploader* u = target.load()) u->Kick();
  });
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  SegmentUploaderOptions o = Options(&mem);
  o.interval_ms = 60'000;  // only a kick can make it run within the test
  SegmentUploader up(o);
  target = &up;
  up.Start();
  Churn(DiskNo(1), 4);
  for (int i = 0; i < 1000 && up.stats().uploaded_segments < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(seals.load(), 3);
  EXPECT_EQ(up.stats().uploaded_segments, 3u);
  up.Stop();
  target = nullptr;
}

// A store whose first upload runs `during` before it stores anything.
class HookedStore final : public ForwardingStore {
 public:
  HookedStore(MemoryStore* inner, std::function<void()> during)
      : ForwardingStore(inner), during_(std::move(during)) {}
  Result<FileUpload> PutFile(std::string_view key, const std::string& path,
                             uint64_t size) override {
    if (!hooked_.exchange(true)) during_();
    return ForwardingStore::PutFile(key, path, size);
  }

 private:
  std::function<void()> during_;
  std::atomic<bool> hooked_{false};
};

// Segments sealed while a pass uploads are counted in the backlog at once (the write gate reads
// it), not when the pass ends, and the same pass uploads them: a pass does not end with a tail of
// one upload while new seals wait for the next.
TEST_F(SegmentUploaderTest, SegmentsSealedDuringAPassAreCountedAtOnceAndUploadedByIt) {
  MemoryStore mem;
  std::atomic<SegmentUploader*> target{nullptr};
  OpenEngine([&] {
    if (SegmentUploader* u = target.load()) u->Kick();
  });
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  Churn(DiskNo(1), 2);  // one sealed segment
  DiskBacklog seen_during;
  HookedStore hooked(&mem, [&] {
    // The pass's only worker is here, inside the first upload: three more seals come.
    Churn(DiskNo(1), 3);
    for (int i = 0; i < 500; ++i) {
      seen_during = target.load()->Waiting(DiskNo(1));
      if (seen_during.segments >= 4) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  SegmentUploaderOptions o = Options(&hooked);
  o.parallel = 1;
  SegmentUploader up(o);
  target = &up;
  ASSERT_TRUE(up.Pass().ok());
  EXPECT_EQ(seen_during.segments, 4u) << "seals during an upload were not counted";
  EXPECT_EQ(seen_during.bytes, 4u * (65536 + 4096));
  EXPECT_EQ(up.stats().uploaded_segments, 4u) << "the pass left the new seals for the next";
  EXPECT_EQ(up.Waiting(DiskNo(1)).segments, 0u);
  EXPECT_EQ(up.stats().pending_segments, 0u);
  target = nullptr;
}

// While writes keep sealing, one pass goes on taking the new segments in; Stop() ends it all the
// same, once the upload under way finishes (a server's shutdown must not wait for the writes).
TEST_F(SegmentUploaderTest, StopEndsAPassThatSealsKeepFeeding) {
  MemoryStore mem;
  std::atomic<SegmentUploader*> target{nullptr};
  OpenEngine([&] {
    if (SegmentUploader* u = target.load()) u->Kick();
  });
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  Churn(DiskNo(1), 2);
  // Every upload seals another segment: a pass that never stopped listing would never end.
  std::atomic<bool> feed{true};
  class Feeding final : public ForwardingStore {
   public:
    Feeding(MemoryStore* inner, std::function<void()> f) : ForwardingStore(inner), f_(f) {}
    Result<FileUpload> PutFile(std::string_view key, const std::string& path,
                               uint64_t size) override {
      f_();
      return ForwardingStore::PutFile(key, path, size);
    }

   private:
    std::function<void()> f_;
  } feeding(&mem, [&] {
    if (feed) Churn(DiskNo(1), 1);
  });
  SegmentUploaderOptions o = Options(&feeding);
  o.parallel = 1;
  o.interval_ms = 60'000;
  SegmentUploader up(o);
  target = &up;
  up.Start();
  up.Kick();
  for (int i = 0; i < 1000 && up.stats().uploaded_segments < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(up.stats().uploaded_segments, 3u);
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    up.Stop();
    stopped = true;
  });
  for (int i = 0; i < 500 && !stopped; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(stopped) << "Stop() waited for a pass that the seals kept feeding";
  feed = false;  // so that a failed run still ends
  stopper.join();
  target = nullptr;
}

TEST_F(SegmentUploaderTest, TheBackgroundThreadUploadsWhenKicked) {
  MemoryStore mem;
  ASSERT_TRUE(engine_->CreateDisk(DiskNo(1), {}).ok());
  SegmentUploaderOptions o = Options(&mem);
  o.interval_ms = 60'000;  // only a kick can make it run within the test
  SegmentUploader up(o);
  up.Start();
  Churn(DiskNo(1), 4);
  up.Kick();
  for (int i = 0; i < 1000 && up.stats().uploaded_segments < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(up.stats().uploaded_segments, 3u);
}

}  // namespace
}  // namespace archil::tier
