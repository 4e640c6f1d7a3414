#include "engine/records/keys.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "base/coding.h"
#include "engine/test_util.h"

namespace archil::engine {
namespace {

using testing::Rng;

class KeysTest : public ::testing::Test {
 protected:
  KeysTest() : seed_(testing::TestSeed()), rng_(seed_) {}
  uint64_t seed_;
  Rng rng_;
};

void ExpectCorruption(const Status& s) {
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
}

// Every strict prefix of `key` fails `parse`.
template <typename Parse>
void ExpectTruncationsRejected(const std::string& key, Parse parse) {
  for (size_t n = 0; n < key.size(); ++n) {
    SCOPED_TRACE("truncated to " + std::to_string(n));
    ExpectCorruption(parse(std::string_view(key).substr(0, n)).status());
  }
}

TEST_F(KeysTest, DiskPrefixAndRange) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  const DiskNo disk(0x0102030405060708ULL);
  EXPECT_EQ(DiskPrefix(disk), std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  KeyRange r = DiskRange(disk);
  EXPECT_EQ(r.begin, DiskPrefix(disk));
  EXPECT_EQ(r.end, DiskPrefix(DiskNo(disk.value() + 1)));
  for (int i = 0; i < 200; ++i) {
    std::string k = ChunkKey(disk, Ino(rng_.U64()), rng_.U64());
    EXPECT_LE(r.begin, k);
    EXPECT_LT(k, r.end);
    EXPECT_EQ(DiskOfKey(k)->value(), disk.value());
  }
  // Keys of the neighbours stay outside.
  EXPECT_LT(MetaKey(DiskNo(disk.value() - 1), MetaType::kLocal) + std::string(300, '\xff'),
            r.begin);
  EXPECT_GE(MetaKey(DiskNo(disk.value() + 1), MetaType::kDisk), r.end);
  EXPECT_TRUE(DiskRange(DiskNo(UINT64_MAX)).end.empty());
  EXPECT_EQ(InodeKeyRange(disk, Ino(UINT64_MAX)).end, r.end);
  EXPECT_EQ(DiskRange(DiskNo(UINT64_MAX)).begin, std::string(8, '\xff'));
  ExpectCorruption(DiskOfKey("1234567").status());
}

TEST_F(KeysTest, DefaultKeys) {
  EXPECT_EQ(DefaultKey(DefaultRecordType::kSchema), "\x01schema");
  EXPECT_EQ(DefaultKey(DefaultRecordType::kServer), "\x02server");
  EXPECT_EQ(DefaultKey(DefaultRecordType::kBoot),
            "\x03"
            "boot");
}

TEST_F(KeysTest, MetaKeysRoundTrip) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  for (int i = 0; i < 200; ++i) {
    const DiskNo disk = rng_.Disk();
    const uint64_t id = rng_.U64();
    const uint32_t blk = rng_.U32();
    const std::string name = rng_.Bytes(rng_.Range(1, 100));
    struct Case {
      std::string key;
      MetaType type;
      size_t size;
    };
    const std::vector<Case> cases = {
        {MetaKey(disk, MetaType::kDisk), MetaType::kDisk, 9},
        {MetaKey(disk, MetaType::kCounters), MetaType::kCounters, 9},
        {MetaKey(disk, MetaType::kLocal), MetaType::kLocal, 9},
        {MetaEpochKey(disk, Epoch(id)), MetaType::kEpoch, 17},
        {MetaCkptKey(disk, name), MetaType::kCkpt, 9 + name.size()},
        {MetaBranchKey(disk, name), MetaType::kBranch, 9 + name.size()},
        {MetaInoKey(disk, MetaType::kOrigin, Ino(id)), MetaType::kOrigin, 17},
        {MetaInoKey(disk, MetaType::kOrphan, Ino(id)), MetaType::kOrphan, 17},
        {MetaInoKey(disk, MetaType::kPurge, Ino(id)), MetaType::kPurge, 17},
        {MetaSegKey(disk, SegNo(id)), MetaType::kSeg, 17},
        {MetaRelocKey(disk, MetaType::kReloc, SegNo(id), blk), MetaType::kReloc, 21},
        {MetaRelocKey(disk, MetaType::kRelocRev, SegNo(id), blk), MetaType::kRelocRev, 21},
    };
    for (const Case& c : cases) {
      ASSERT_EQ(c.key.size(), c.size);
      Result<MetaKeyParts> p = ParseMetaKey(c.key);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      EXPECT_EQ(p->disk, disk);
      EXPECT_EQ(p->type, c.type);
      EXPECT_EQ(static_cast<uint8_t>(c.key[8]), static_cast<uint8_t>(c.type));
      switch (c.type) {
        case MetaType::kCkpt:
        case MetaType::kBranch:
          EXPECT_EQ(p->name, name);
          // A shorter name is still a name: only cutting into the fixed part fails.
          ExpectTruncationsRejected(c.key.substr(0, 10), ParseMetaKey);
          break;
        case MetaType::kReloc:
        case MetaType::kRelocRev:
          EXPECT_EQ(p->blk, blk);
          [[fallthrough]];
        case MetaType::kEpoch:
        case MetaType::kOrigin:
        case MetaType::kOrphan:
        case MetaType::kPurge:
        case MetaType::kSeg:
          EXPECT_EQ(p->id, id);
          ExpectTruncationsRejected(c.key, ParseMetaKey);
          ExpectCorruption(ParseMetaKey(c.key + "x").status());
          break;
        default:
          ExpectTruncationsRejected(c.key, ParseMetaKey);
          ExpectCorruption(ParseMetaKey(c.key + "x").status());
      }
    }
  }
  ExpectCorruption(ParseMetaKey(DiskPrefix(DiskNo(1)) + "\x0d").status());
  ExpectCorruption(ParseMetaKey(DiskPrefix(DiskNo(1)) + std::string(1, '\0')).status());
  ExpectCorruption(ParseMetaKey(MetaCkptKey(DiskNo(1), std::string(101, 'a'))).status());
}

TEST_F(KeysTest, MetaEpochKeysSortNumerically) {
  const DiskNo disk(9);
  EXPECT_LT(MetaEpochKey(disk, Epoch(255)), MetaEpochKey(disk, Epoch(256)));
  EXPECT_LT(MetaRelocKey(disk, MetaType::kReloc, SegNo(1), 0xFFFFFFFF),
            MetaRelocKey(disk, MetaType::kReloc, SegNo(2), 0));
}

TEST_F(KeysTest, InodeCfKeys) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  for (int i = 0; i < 200; ++i) {
    const DiskNo disk = rng_.Disk();
    const Ino ino(rng_.Range(0, UINT64_MAX - 1));
    const Ino parent(rng_.U64());
    const uint32_t tgen = rng_.U32();
    const std::string ik = InodeKey(disk, ino);
    const std::string tk = TruncateKey(disk, ino, tgen);
    const std::string bk = BackrefKey(disk, ino, parent);
    ASSERT_EQ(ik.size(), 16u);
    ASSERT_EQ(tk.size(), 21u);
    ASSERT_EQ(bk.size(), 25u);
    Result<InodeKeyParts> p = ParseInodeKey(ik);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->disk, disk);
    EXPECT_EQ(p->ino, ino);
    EXPECT_EQ(p->kind, InodeKeyKind::kInode);
    p = ParseInodeKey(tk);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, InodeKeyKind::kTruncate);
    EXPECT_EQ(p->ino, ino);
    EXPECT_EQ(p->tgen, tgen);
    p = ParseInodeKey(bk);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, InodeKeyKind::kBackref);
    EXPECT_EQ(p->parent, parent);
    // An inode's own key comes first, then its truncate records, then its back-references, all
    // before the next inode: a Get never sees them and one prefix scan finds them.
    EXPECT_LT(ik, tk);
    EXPECT_LT(tk, bk);
    const KeyRange r = InodeKeyRange(disk, ino);
    EXPECT_EQ(r.begin, ik);
    EXPECT_LT(bk, r.end);
    EXPECT_EQ(r.end, InodeKey(disk, Ino(ino.value() + 1)));
    ExpectTruncationsRejected(ik, ParseInodeKey);
    for (size_t n = 17; n < 25; ++n) {
      if (n != 21) ExpectCorruption(ParseInodeKey(bk.substr(0, n)).status());
    }
    ExpectCorruption(ParseInodeKey(tk + "x").status());
  }
  std::string bad = InodeKey(DiskNo(1), Ino(2)) + std::string("\x03\0\0\0\0", 5);
  ExpectCorruption(ParseInodeKey(bad).status());
}

TEST_F(KeysTest, DentryAndXattrKeys) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  for (int i = 0; i < 200; ++i) {
    const DiskNo disk = rng_.Disk();
    const Ino parent(rng_.U64());
    const uint64_t cookie = rng_.U64() >> 1;
    const std::string name = rng_.Name(255);
    const std::string dk = DentryKey(disk, parent, cookie, name);
    EXPECT_EQ(dk.size(), 24 + name.size());
    EXPECT_EQ(dk.substr(0, 16), DentryPrefix(disk, parent));
    EXPECT_EQ(dk.substr(0, 24), DentrySeekKey(disk, parent, cookie));
    Result<DentryKeyParts> p = ParseDentryKey(dk);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->disk, disk);
    EXPECT_EQ(p->parent, parent);
    EXPECT_EQ(p->cookie, cookie);
    EXPECT_EQ(p->name, name);
    // A shorter name is still a name: only cutting into the fixed part (or the whole name) fails.
    ExpectTruncationsRejected(dk.substr(0, 25), ParseDentryKey);

    const std::string xk = XattrKey(disk, parent, "user." + name.substr(0, 250));
    Result<XattrKeyParts> x = ParseXattrKey(xk);
    ASSERT_TRUE(x.ok());
    EXPECT_EQ(x->ino, parent);
    EXPECT_EQ(x->name, "user." + name.substr(0, 250));
    ExpectTruncationsRejected(xk.substr(0, 17), ParseXattrKey);
  }
  const std::string base = DentrySeekKey(DiskNo(1), Ino(1), 3);
  ExpectCorruption(ParseDentryKey(base + "a/b").status());
  ExpectCorruption(ParseDentryKey(base + std::string("a\0b", 3)).status());
  ExpectCorruption(ParseDentryKey(base + std::string(256, 'a')).status());
  ExpectCorruption(ParseXattrKey(XattrPrefix(DiskNo(1), Ino(1)) + std::string(256, 'a')).status());
  // Entries of a directory sort by cookie, then name; readdir(off) resumes after cookie off.
  EXPECT_LT(DentryKey(DiskNo(1), Ino(5), 3, "zzz"), DentryKey(DiskNo(1), Ino(5), 4, "a"));
  EXPECT_LT(DentryKey(DiskNo(1), Ino(5), 7, "zzz"), DentrySeekKey(DiskNo(1), Ino(5), 8));
  EXPECT_LT(DentryKey(DiskNo(1), Ino(5), UINT64_MAX >> 1, "z"), DentryPrefix(DiskNo(1), Ino(6)));
}

TEST_F(KeysTest, ChunkKeysSortByChunkIndex) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  const DiskNo disk = rng_.Disk();
  const Ino ino(rng_.U64());
  std::vector<uint64_t> idx;
  for (int i = 0; i < 500; ++i) idx.push_back(i % 3 == 0 ? rng_.Range(0, 1000) : rng_.U64());
  std::vector<std::string> keys;
  for (uint64_t c : idx) keys.push_back(ChunkKey(disk, ino, c));
  std::sort(idx.begin(), idx.end());
  std::sort(keys.begin(), keys.end());
  for (size_t i = 0; i < keys.size(); ++i) {
    Result<ChunkKeyParts> p = ParseChunkKey(keys[i]);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->chunk, idx[i]);
    EXPECT_EQ(p->ino, ino);
    EXPECT_EQ(p->disk, disk);
    EXPECT_EQ(keys[i].substr(0, 16), ChunkPrefix(disk, ino));
  }
  ExpectTruncationsRejected(keys[0], ParseChunkKey);
  ExpectCorruption(ParseChunkKey(keys[0] + "x").status());
}

TEST_F(KeysTest, IntentSegUsageOutboxKeys) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  for (int i = 0; i < 100; ++i) {
    const DiskNo disk = rng_.Disk();
    const SegNo seg(rng_.U64());
    const uint32_t blk = rng_.U32();
    const std::string ik = IntentKey(disk, seg, blk);
    Result<IntentKeyParts> p = ParseIntentKey(ik);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->disk, disk);
    EXPECT_EQ(p->seg, seg);
    EXPECT_EQ(p->seg_blk, blk);
    ExpectTruncationsRejected(ik, ParseIntentKey);
    // DeleteRange(intent, (disk, seg, 0), (disk, seg, W)) covers exactly the blocks below W.
    if (blk > 0) {
      EXPECT_LT(IntentKey(disk, seg, 0), ik);
      EXPECT_LT(IntentKey(disk, seg, blk - 1), ik);
    }
    const std::string sk = SegUsageKey(disk, seg);
    EXPECT_EQ(ParseSegUsageKey(sk)->second, seg);
    ExpectTruncationsRejected(sk, ParseSegUsageKey);
    const std::string ok = OutboxKey(disk, Seq(seg.value()));
    EXPECT_EQ(ParseOutboxKey(ok)->second.value(), seg.value());
    EXPECT_EQ(ParseOutboxKey(ok)->first, disk);
    ExpectTruncationsRejected(ok, ParseOutboxKey);
  }
  EXPECT_LT(OutboxKey(DiskNo(1), Seq(0xFF)), OutboxKey(DiskNo(1), Seq(0x100)));
}

TEST_F(KeysTest, HistSuffixesRoundTripThroughHeadKeys) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  for (int i = 0; i < 200; ++i) {
    const DiskNo disk = rng_.Disk();
    const Ino ino(rng_.U64());
    const std::string name = rng_.Name(255);
    const Epoch death(rng_.U64());
    const std::vector<std::pair<HistTag, std::string>> heads = {
        {HistTag::kInode, InodeKey(disk, ino)},
        {HistTag::kDentry, DentryKey(disk, ino, rng_.U64() >> 1, name)},
        {HistTag::kXattr, XattrKey(disk, ino, name)},
        {HistTag::kChunk, ChunkKey(disk, ino, rng_.U64())},
        {HistTag::kTruncate, TruncateKey(disk, ino, rng_.U32())},
        {HistTag::kBackref, BackrefKey(disk, ino, Ino(rng_.U64()))},
    };
    for (const auto& [tag, head] : heads) {
      Result<std::string> suffix = HistSuffixOf(tag, head);
      ASSERT_TRUE(suffix.ok()) << suffix.status().ToString();
      Result<std::string> back = HeadKeyOf(disk, tag, *suffix);
      ASSERT_TRUE(back.ok());
      EXPECT_EQ(*back, head);
      const std::string hk = HistKey(disk, tag, *suffix, death);
      EXPECT_EQ(hk.size(), 8 + 1 + suffix->size() + 8);
      EXPECT_EQ(hk.substr(0, hk.size() - 8), HistVersionsPrefix(disk, tag, *suffix));
      Result<HistKeyParts> p = ParseHistKey(hk);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      EXPECT_EQ(p->disk, disk);
      EXPECT_EQ(p->tag, tag);
      EXPECT_EQ(p->suffix, *suffix);
      EXPECT_EQ(p->death, death);
      ExpectTruncationsRejected(hk, ParseHistKey);
      // A head key of another CF kind is not a source of this tag.
      if (tag == HistTag::kTruncate) {
        ExpectCorruption(HistSuffixOf(tag, InodeKey(disk, ino)).status());
      }
    }
  }
  // Names carry their NUL.
  const std::string s = *HistSuffixOf(HistTag::kXattr, XattrKey(DiskNo(1), Ino(2), "user.x"));
  EXPECT_EQ(s.back(), '\0');
  ExpectCorruption(HeadKeyOf(DiskNo(1), HistTag::kXattr, s.substr(0, s.size() - 1)).status());
  ExpectCorruption(CheckHistSuffix(static_cast<HistTag>(9), "12345678"));
}

TEST_F(KeysTest, HistVersionsOfOneNameAreContiguousAndOrderedLikeTheHead) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  const DiskNo disk(42);
  const Ino dir(7);
  const uint64_t cookie = 12345;  // a collision group: every name shares the cookie
  // "ab\0" < "abc", as "ab" < "abc" in the head.
  auto hist = [&](std::string_view name, uint64_t death) {
    return HistKey(disk, HistTag::kDentry,
                   *HistSuffixOf(HistTag::kDentry, DentryKey(disk, dir, cookie, name)),
                   Epoch(death));
  };
  EXPECT_LT(hist("ab", UINT64_MAX), hist("abc", 0));
  EXPECT_LT(hist("ab", 5), hist("ab", 6));
  std::vector<std::string> names;
  for (int i = 0; i < 60; ++i) names.push_back(rng_.Name(4));
  std::vector<std::pair<std::string, std::string>> keys;  // hist key, name
  for (const std::string& n : names) keys.emplace_back(hist(n, rng_.U64()), n);
  std::sort(keys.begin(), keys.end());
  // Names appear in head order, and each name's versions form one run.
  std::vector<std::string> runs;
  for (const auto& [k, n] : keys) {
    if (runs.empty() || runs.back() != n) runs.push_back(n);
  }
  std::vector<std::string> head_order = names;
  std::sort(head_order.begin(), head_order.end(), [&](const std::string& a, const std::string& b) {
    return DentryKey(disk, dir, cookie, a) < DentryKey(disk, dir, cookie, b);
  });
  head_order.erase(std::unique(head_order.begin(), head_order.end()), head_order.end());
  EXPECT_EQ(runs, head_order);
}

TEST_F(KeysTest, DeadKeys) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  for (int i = 0; i < 200; ++i) {
    const DiskNo disk = rng_.Disk();
    const Epoch d(rng_.U64()), b(rng_.U64());
    const DeadBlocks blocks{rng_.Disk(), SegNo(rng_.U64()), rng_.U32(), rng_.U32()};
    const std::string dk = DeadDataKey(disk, d, b, blocks);
    ASSERT_EQ(dk.size(), 49u);
    Result<DeadKeyParts> p = ParseDeadKey(dk);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->disk, disk);
    EXPECT_EQ(p->death, d);
    EXPECT_EQ(p->birth, b);
    EXPECT_EQ(p->kind, DeadKind::kData);
    EXPECT_EQ(p->blocks, blocks);
    EXPECT_EQ(dk.substr(0, 24), DeadSeekKey(disk, d, b));
    ExpectTruncationsRejected(dk, ParseDeadKey);
    ExpectCorruption(ParseDeadKey(dk + "x").status());

    const std::string suffix = *HistSuffixOf(HistTag::kChunk, ChunkKey(disk, Ino(3), 4));
    for (DeadKind kind : {DeadKind::kHist, DeadKind::kHead}) {
      const std::string ik = DeadItemKey(disk, d, b, kind, HistTag::kChunk, suffix);
      p = ParseDeadKey(ik);
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p->kind, kind);
      EXPECT_EQ(p->tag, HistTag::kChunk);
      EXPECT_EQ(p->suffix, suffix);
      ExpectTruncationsRejected(ik, ParseDeadKey);
    }
  }
  // GC of checkpoint k scans dead[d, b] for b in (prev, k] with one Seek to (d, prev + 1).
  const DiskNo disk(5);
  const DeadBlocks blocks{DiskNo(5), SegNo(1), 1, 1};
  EXPECT_LT(DeadDataKey(disk, Epoch(10), Epoch(3), blocks), DeadSeekKey(disk, Epoch(10), Epoch(4)));
  EXPECT_LT(DeadSeekKey(disk, Epoch(10), Epoch(4)), DeadDataKey(disk, Epoch(10), Epoch(4), blocks));
  EXPECT_LT(DeadDataKey(disk, Epoch(10), Epoch(UINT64_MAX), blocks),
            DeadSeekKey(disk, Epoch(11), Epoch(0)));
  ExpectCorruption(ParseDeadKey(DeadSeekKey(disk, Epoch(1), Epoch(1)) + "\x04").status());
}

TEST_F(KeysTest, SessionKeys) {
  SCOPED_TRACE(testing::SeedTrace(seed_));
  for (int i = 0; i < 100; ++i) {
    const DiskNo disk = rng_.Disk();
    const SessionIdBytes sid = rng_.Array<16>();
    const uint32_t slot = rng_.U32();
    const uint64_t gen = rng_.U64();
    Result<SessionKeyParts> p = ParseSessionKey(SessionKey(disk, sid));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->type, SessionRecordType::kSession);
    EXPECT_EQ(p->session, sid);
    EXPECT_EQ(p->disk, disk);
    p = ParseSessionKey(SlotKey(disk, sid, slot));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->type, SessionRecordType::kSlot);
    EXPECT_EQ(p->session, sid);
    EXPECT_EQ(p->slot, slot);
    for (SessionRecordType t : {SessionRecordType::kDelegation, SessionRecordType::kRevocation}) {
      const std::string k = DelegationKey(disk, t, gen);
      p = ParseSessionKey(k);
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p->type, t);
      EXPECT_EQ(p->deleg_gen, gen);
      ExpectTruncationsRejected(k, ParseSessionKey);
    }
    ExpectTruncationsRejected(SlotKey(disk, sid, slot), ParseSessionKey);
    ExpectTruncationsRejected(SessionKey(disk, sid), ParseSessionKey);
    p = ParseSessionKey(InoGrantKey(disk, sid));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->type, SessionRecordType::kInoGrant);
    EXPECT_EQ(p->session, sid);
    EXPECT_EQ(p->disk, disk);
    ExpectTruncationsRejected(InoGrantKey(disk, sid), ParseSessionKey);
  }
  ExpectCorruption(ParseSessionKey(DiskPrefix(DiskNo(1)) + "\x06").status());
}

}  // namespace
}  // namespace archil::engine
