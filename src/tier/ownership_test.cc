// Ownership: the bucket's owner object and its lease, and a takeover that fences the old owner
// so that nothing it writes afterwards is read.
#include "tier/ownership.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "engine/random_workload_test_util.h"
#include "tier/log_object.h"
#include "tier/log_shipper.h"
#include "tier/manifest.h"
#include "tier/memory_store_test_util.h"
#include "tier/recovery.h"
#include "tier/segment_uploader.h"
#include "tier/snapshotter.h"

namespace archil::tier {
namespace {

using engine::DiskNo;
using engine::Seq;

std::array<uint8_t, 16> Id(uint8_t b) {
  std::array<uint8_t, 16> id{};
  id.fill(b);
  return id;
}

TEST(OwnerRecordTest, RoundTripsAndRefusesWhatTheWriterNeverWrites) {
  OwnerRecord r{7, Id(0xab), "host-1", 42, true};
  Result<OwnerRecord> back = DecodeOwnerRecord(EncodeOwnerRecord(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  const std::string v = EncodeOwnerRecord(r);
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x20;
    EXPECT_FALSE(DecodeOwnerRecord(bad).ok()) << i;
  }
  for (
      const char* body :
      {R"({"format":1,"gen":0,"server":"abababababababababababababababab","host":"h","beat":1})",
       R"({"format":1,"gen":1,"server":"ab","host":"h","beat":1})",
       R"({"format":1,"gen":1,"server":"abababababababababababababababab","host":"h"})",
       R"({"format":2,"gen":1,"server":"abababababababababababababababab","host":"h","beat":1})",
       R"({"format":1,"gen":1,"server":"abababababababababababababababab","host":"h","beat":1,"x":1})"}) {
    EXPECT_FALSE(DecodeOwnerRecord(EncodeEnvelope(EnvelopeKind::kOwner, body)).ok()) << body;
  }
}

class LeaseTest : public ::testing::Test {
 protected:
  BucketLeaseOptions Options(uint8_t server) {
    BucketLeaseOptions o;
    o.store = &mem_;
    o.clock = &clock_;
    o.server = Id(server);
    o.host = "host-" + std::to_string(server);
    o.lease_ms = 1500;
    o.renew_ms = 500;
    o.margin_ms = 200;
    // Waiting moves this test's clock on, and the other server renews (or not) meanwhile.
    o.sleep = [this](int ms) {
      clock_.Advance(int64_t{ms} * 1000);
      if (other_renews_) (void)other_renews_->Renew();
    };
    return o;
  }
  MemoryStore mem_;
  FakeClock clock_;
  BucketLease* other_renews_ = nullptr;
};

TEST_F(LeaseTest, AFreshBucketIsTakenAndTheSameServerGoesOnUnderItsGeneration) {
  auto a = BucketLease::Acquire(Options(1));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->gen(), 1u);
  EXPECT_FALSE((*a)->took_over());
  EXPECT_TRUE((*a)->Valid());
  // The lease runs down on the boot clock, and a renewal brings it back.
  clock_.Advance(1400 * 1000);
  EXPECT_FALSE((*a)->Valid());
  ASSERT_TRUE((*a)->Renew().ok());
  EXPECT_TRUE((*a)->Valid());
  EXPECT_EQ((*a)->stats().renewals, 1u);
  a->reset();
  // The same server after a restart (its engine says generation 3 by now).
  BucketLeaseOptions again = Options(1);
  again.engine_gen = 3;
  auto b = BucketLease::Acquire(again);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->gen(), 3u);
  EXPECT_FALSE((*b)->took_over());
}

TEST_F(LeaseTest, AnotherServersBucketIsTakenOnlyOnceItStopsRenewing) {
  auto a = BucketLease::Acquire(Options(1));
  ASSERT_TRUE(a.ok());
  // Without take_over: refused, naming the owner.
  Result<std::unique_ptr<BucketLease>> refused = BucketLease::Acquire(Options(2));
  ASSERT_EQ(refused.status().code(), Status::Code::kBusy);
  EXPECT_NE(refused.status().message().find("host-1"), std::string::npos);
  // With take_over while the owner renews: refused too.
  BucketLeaseOptions take = Options(2);
  take.take_over = true;
  other_renews_ = a->get();
  refused = BucketLease::Acquire(take);
  ASSERT_EQ(refused.status().code(), Status::Code::kBusy) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("renews"), std::string::npos);
  // Once it stops (dead, paused): taken as the next generation after a whole lease.
  other_renews_ = nullptr;
  const int64_t before = clock_.MonotonicNanos();
  auto b = BucketLease::Acquire(take);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->gen(), 2u);
  EXPECT_TRUE((*b)->took_over());
  EXPECT_GE(clock_.MonotonicNanos() - before, int64_t{1700} * 1000000);
  // The old owner's next renewal finds it out: fenced for good, and its lease no longer holds.
  EXPECT_EQ((*a)->Renew().code(), Status::Code::kPermissionDenied);
  EXPECT_TRUE((*a)->Fenced());
  EXPECT_FALSE((*a)->Valid());
  EXPECT_NE((*a)->stats().fenced_by.find("host-2"), std::string::npos);
  EXPECT_TRUE((*b)->Renew().ok());
  // force takes it at once.
  BucketLeaseOptions force = Options(3);
  force.force = true;
  auto c = BucketLease::Acquire(force);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->gen(), 3u);
}

TEST_F(LeaseTest, AReleasedBucketIsTakenAtOnce) {
  auto a = BucketLease::Acquire(Options(1));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Release().ok());
  EXPECT_FALSE((*a)->Valid());
  BucketLeaseOptions take = Options(2);
  take.take_over = true;
  const int64_t before = clock_.MonotonicNanos();
  auto b = BucketLease::Acquire(take);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->gen(), 2u);
  EXPECT_EQ(clock_.MonotonicNanos(), before) << "it waited for a lease that was released";
  // The first server, back, finds its bucket taken: refused without --take-over.
  EXPECT_EQ(BucketLease::Acquire(Options(1)).status().code(), Status::Code::kBusy);
}

TEST_F(LeaseTest, ALostRenewalReplyIsNotAFence) {
  auto a = BucketLease::Acquire(Options(1));
  ASSERT_TRUE(a.ok());
  // This server's own renewal landed but its reply did not: the object moved on without it.
  Result<std::string> v = static_cast<store::ObjectStore&>(mem_).Get(kOwnerKey);
  ASSERT_TRUE(v.ok());
  Result<OwnerRecord> r = DecodeOwnerRecord(*v);
  ASSERT_TRUE(r.ok());
  r->beat += 1;
  mem_.Set(kOwnerKey, EncodeOwnerRecord(*r));
  EXPECT_TRUE((*a)->Renew().ok());
  EXPECT_FALSE((*a)->Fenced());
  EXPECT_TRUE((*a)->Renew().ok());
  EXPECT_EQ((*a)->stats().renewals, 1u);
}

// A takeover: the old owner, resumed, keeps writing and shipping, but a recovery reads only the
// new owner's log after the hand-over, and the old one can publish nothing.
class TakeoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/archil-takeover-XXXXXX";
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
  // Seals, uploads and ships everything of `e`.
  Status ToStore(engine::Engine* e) {
    SegmentUploaderOptions u;
    u.engine = e;
    u.store = &mem_;
    LogShipperOptions l;
    l.engine = e;
    l.store = &mem_;
    l.max_object_bytes = 4 << 10;
    SegmentUploader up(u);
    LogShipper ship(l);
    for (Status s : {e->SealSegmentsOlderThan(0), up.Pass(), ship.Pass(), ship.Pass()}) {
      ARCHIL_RETURN_IF_ERROR(s);
    }
    return Status::Ok();
  }
  static Status Write(engine::Engine* e, const std::string& name, const std::string& data) {
    ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, e->Disk(DiskNo(1)));
    Result<posix::Attr> a = fs->Lookup(posix::kRootIno, name);
    if (!a.ok()) a = fs->Mknod(posix::kRootIno, name, S_IFREG | 0644, 0, {});
    ARCHIL_RETURN_IF_ERROR(a.status());
    posix::SetAttrRequest empty;
    empty.size = 0;
    ARCHIL_RETURN_IF_ERROR(fs->SetAttr(a->ino, empty).status());
    return fs->Write(a->ino, 0, data).status();
  }
  static Result<std::string> ReadFile(engine::Engine* e, const std::string& name) {
    ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, e->Disk(DiskNo(1)));
    ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, fs->Lookup(posix::kRootIno, name));
    return fs->Read(a.ino, 0, a.size);
  }
  std::string root_;
  FakeClock clock_;
  MemoryStore mem_;
};

TEST_F(TakeoverTest, AFencedOwnerWritesNothingTheNewOneReads) {
  std::unique_ptr<engine::Engine> a = Open("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->CreateDisk(DiskNo(1), {}).ok());
  ASSERT_TRUE(Write(a.get(), "before", std::string(200000, 'b')).ok());
  ASSERT_TRUE(ToStore(a.get()).ok());

  // A is paused; B recovers the bucket as generation 2 and takes the disk's log.
  Result<RecoveryReport> r = RecoverFromStore(Options("b"), &mem_, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::unique_ptr<engine::Engine> b = Open("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->owner_gen(), 2u);
  ASSERT_TRUE(ClaimDisks(b.get(), &mem_, 2).ok());
  ASSERT_TRUE(Write(b.get(), "after", std::string(300000, 'n')).ok());
  ASSERT_TRUE(Write(b.get(), "before", "overwritten by the new owner").ok());
  ASSERT_TRUE(ToStore(b.get()).ok());

  // A resumes: it writes and ships under generation 1, and tries to publish a snapshot.
  ASSERT_TRUE(Write(a.get(), "zombie", std::string(100000, 'z')).ok());
  ASSERT_TRUE(Write(a.get(), "before", "the old owner's late write").ok());
  ASSERT_TRUE(ToStore(a.get()).ok());  // its objects land under names no reader takes
  SnapshotterOptions so;
  so.engine = a.get();
  so.store = &mem_;
  so.clock = &clock_;
  so.log_bytes = 1;
  Snapshotter snap(so);
  Result<Seq> x = snap.TakeAndUpload(DiskNo(1));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ(snap.Publish(DiskNo(1), *x).code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(ClaimDisks(a.get(), &mem_, 1).code(), Status::Code::kPermissionDenied);

  // B's own segments never took one of A's names: every upload of B's went through.
  for (const auto& [key, data] : mem_.objects()) {
    if (key.find("/seg/") == std::string::npos) continue;
    const uint64_t seg = std::stoull(key.substr(key.rfind('/') + 1), nullptr, 16);
    EXPECT_TRUE(seg >> 32 == 1 || seg >> 32 == 2) << key;
  }

  // A fresh recovery: B's state, none of A's late writes.
  Result<RecoveryReport> c_report = RecoverFromStore(Options("c"), &mem_, 3);
  ASSERT_TRUE(c_report.ok()) << c_report.status().ToString();
  EXPECT_GT(c_report->fenced_log_objects, 0u);
  std::unique_ptr<engine::Engine> c = Open("c");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(*ReadFile(c.get(), "after") == std::string(300000, 'n'));
  EXPECT_EQ(*ReadFile(c.get(), "before"), "overwritten by the new owner");
  EXPECT_EQ(ReadFile(c.get(), "zombie").status().code(), Status::Code::kNotFound);
  posix::CompareOptions exact;
  exact.times = true;
  EXPECT_TRUE(posix::CompareTrees(*b->Disk(DiskNo(1)), *c->Disk(DiskNo(1)), exact).ok());
}

}  // namespace
}  // namespace archil::tier
