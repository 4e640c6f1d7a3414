// The snapshot part and the manifests (formats.md §8.1, §8.4, §8.5): round trips, and every
// truncation and every flipped byte refused.
#include "tier/snapshot_part.h"

#include <gtest/gtest.h>

#include "engine/records/keys.h"
#include "tier/manifest.h"

namespace archil::tier {
namespace {

using engine::Cf;
using engine::DiskNo;
using engine::Seq;

SnapshotPart SamplePart() {
  SnapshotPart p;
  p.disk = DiskNo(7);
  p.seq = Seq(41);
  p.index = 3;
  p.entries.push_back({Cf::kMeta, engine::MetaKey(DiskNo(7), engine::MetaType::kCounters), "c"});
  p.entries.push_back({Cf::kInode, engine::InodeKey(DiskNo(7), engine::Ino(1)), "inode one"});
  p.entries.push_back({Cf::kInode, engine::InodeKey(DiskNo(7), engine::Ino(2)), ""});
  p.entries.push_back({Cf::kSegUsage, engine::SegUsageKey(DiskNo(7), engine::SegNo(5)), "bits"});
  return p;
}

TEST(SnapshotPart, RoundTripsAndEveryTruncationOrFlippedByteIsRefused) {
  const SnapshotPart p = SamplePart();
  const std::string v = EncodeSnapshotPart(p);
  Result<SnapshotPart> back = DecodeSnapshotPart(v);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, p);
  for (size_t n = 0; n < v.size(); ++n) {
    EXPECT_EQ(DecodeSnapshotPart(v.substr(0, n)).status().code(), Status::Code::kCorruption) << n;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    std::string bad = v;
    bad[i] ^= 0x20;
    EXPECT_EQ(DecodeSnapshotPart(bad).status().code(), Status::Code::kCorruption) << i;
  }
}

TEST(SnapshotPart, RefusesWhatTheWriterNeverWrites) {
  // Each is well framed (CRCs right) but says something a snapshot cannot.
  SnapshotPart unordered = SamplePart();
  std::swap(unordered.entries[1], unordered.entries[2]);
  SnapshotPart other_disk = SamplePart();
  other_disk.entries[1].key = engine::InodeKey(DiskNo(8), engine::Ino(1));
  SnapshotPart local = SamplePart();
  local.entries[0].key = engine::MetaKey(DiskNo(7), engine::MetaType::kLocal);
  SnapshotPart not_logged = SamplePart();
  not_logged.entries.push_back({Cf::kOutbox, engine::OutboxKey(DiskNo(7), Seq(1)), "r"});
  SnapshotPart repeated = SamplePart();
  repeated.entries.insert(repeated.entries.begin() + 1, repeated.entries[1]);
  for (const SnapshotPart* p : {&unordered, &other_disk, &local, &not_logged, &repeated}) {
    EXPECT_EQ(DecodeSnapshotPart(EncodeSnapshotPart(*p)).status().code(),
              Status::Code::kCorruption);
  }
}

TEST(SnapshotPart, TheWriterMakesWhatTheEncoderMakes) {
  const SnapshotPart p = SamplePart();
  SnapshotPartWriter w(p.disk, p.seq, p.index);
  for (const SnapshotEntry& e : p.entries) w.Add(e.cf, e.key, e.value);
  EXPECT_EQ(w.entries(), p.entries.size());
  EXPECT_EQ(w.Finish(), EncodeSnapshotPart(p));
  EXPECT_EQ(ParseSnapshotName(SnapshotName(3, Seq(0x41))), (PublishedSnapshot{3, Seq(0x41)}));
  EXPECT_EQ(ParseSnapshotName("00000003-000000000000004"), std::nullopt);
  EXPECT_EQ(ParseSnapshotName("00000003_0000000000000041"), std::nullopt);
  EXPECT_EQ(SnapshotPartKey(DiskNo(7), 1, Seq(0x41), 2),
            "disks/" + engine::DiskIdFromNo(DiskNo(7)).str() +
                "/snap/00000001-0000000000000041/part-000002");
}

TEST(Manifests, RoundTripAndRefuseDamage) {
  SnapshotManifest s;
  s.disk = DiskNo(7);
  s.owner_gen = 2;
  s.seq = Seq(99);
  s.created_ns = 1'700'000'000'000'000'000;
  s.parts = {{100, 0xdeadbeef, 3}, {200, 7, 1}};
  s.segments = {1, 4, 9};
  const std::string sv = EncodeSnapshotManifest(s);
  Result<SnapshotManifest> sb = DecodeSnapshotManifest(sv);
  ASSERT_TRUE(sb.ok()) << sb.status().ToString();
  EXPECT_EQ(*sb, s);

  DiskManifest d;
  d.disk = DiskNo(7);
  d.snapshots = {{2, Seq(99)}, {1, Seq(40)}};
  d.owners = {{1, Seq(1), Seq(50)}, {2, Seq(51), Seq(0)}};
  d.deleting = true;
  const std::string dv = EncodeDiskManifest(d);
  Result<DiskManifest> db = DecodeDiskManifest(dv);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*db, d);
  // The two kinds are not interchangeable.
  EXPECT_EQ(DecodeDiskManifest(sv).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodeSnapshotManifest(dv).status().code(), Status::Code::kCorruption);
  for (const std::string& v : {sv, dv}) {
    for (size_t n = 0; n < v.size(); ++n) {
      EXPECT_FALSE(DecodeEnvelope(v.substr(0, n), EnvelopeKind::kDiskManifest).ok()) << n;
    }
    for (size_t i = 0; i < v.size(); ++i) {
      std::string bad = v;
      bad[i] ^= 0x01;
      EXPECT_FALSE(DecodeDiskManifest(bad).ok()) << i;
      EXPECT_FALSE(DecodeSnapshotManifest(bad).ok()) << i;
    }
  }
  // Well-framed JSON that says what the writer never would.
  for (
      const char* body :
      {R"({"format":2,"disk_id":"dsk-0000000000000007","snapshots":[]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[],"extra":1})",
       R"({"format":1,"disk_id":"nope","snapshots":[]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[{"owner_gen":1,"seq":1},{"owner_gen":1,"seq":2}]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[{"owner_gen":1,"seq":3},{"owner_gen":1,"seq":2},{"owner_gen":1,"seq":1}]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[{"owner_gen":-1,"seq":3}]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[],"state":"gone"})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[],"owners":[]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[],"owners":[{"gen":1,"first_seq":1,"last_seq":9}]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[],"owners":[{"gen":1,"first_seq":1,"last_seq":9},{"gen":2,"first_seq":11,"last_seq":0}]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[],"owners":[{"gen":2,"first_seq":1,"last_seq":9},{"gen":2,"first_seq":10,"last_seq":0}]})",
       R"({"format":1,"disk_id":"dsk-0000000000000007","snapshots":[],"owners":[{"gen":0,"first_seq":1,"last_seq":0}]})",
       R"([1,2])", R"({"format":1)"}) {
    EXPECT_EQ(DecodeDiskManifest(EncodeEnvelope(EnvelopeKind::kDiskManifest, body)).status().code(),
              Status::Code::kCorruption)
        << body;
  }
}

// Which generation's log a reader takes: each range's own seqs, an open range to the end, and
// nothing of a fenced owner's past its range; a hand-over closes the open range.
TEST(DiskManifestTest, OwnerRangesSayWhoseLogIsRead) {
  DiskManifest m;
  m.disk = DiskNo(3);
  EXPECT_EQ(CurrentOwner(m), 1u);
  EXPECT_EQ(UsableThrough(m, 1, Seq(5), Seq(9)), Seq(9));
  EXPECT_EQ(UsableThrough(m, 2, Seq(5), Seq(9)), std::nullopt);
  m = HandOver(m, 3, Seq(41));
  ASSERT_EQ(m.owners.size(), 2u);
  EXPECT_EQ(CurrentOwner(m), 3u);
  EXPECT_EQ(UsableThrough(m, 1, Seq(30), Seq(45)), Seq(40));  // the fenced owner's tail cut
  EXPECT_EQ(UsableThrough(m, 1, Seq(41), Seq(45)), std::nullopt);
  EXPECT_EQ(UsableThrough(m, 3, Seq(41), Seq(90)), Seq(90));
  EXPECT_EQ(UsableThrough(m, 3, Seq(30), Seq(45)), std::nullopt);
  EXPECT_EQ(UsableThrough(m, 2, Seq(41), Seq(45)), std::nullopt);
  // Handed over again below where generation 3 began: its range goes, generation 1's shrinks.
  m = HandOver(m, 4, Seq(21));
  ASSERT_EQ(m.owners.size(), 2u);
  EXPECT_EQ(m.owners[0], (OwnerRange{1, Seq(1), Seq(20)}));
  EXPECT_EQ(m.owners[1], (OwnerRange{4, Seq(21), Seq(0)}));
  Result<DiskManifest> back = DecodeDiskManifest(EncodeDiskManifest(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, m);
}

}  // namespace
}  // namespace archil::tier
