// Codecs of every value: typed round trips with random fields, byte-exact layouts against
// docs/formats.md's offsets, and strict decoding (every truncation, a trailing byte, an unknown
// fmt, broken invariants).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <vector>

#include "base/coding.h"
#include "base/crc32c.h"
#include "engine/records/chunk_record.h"
#include "engine/records/default_records.h"
#include "engine/records/fs_records.h"
#include "engine/records/intent_record.h"
#include "engine/records/meta_records.h"
#include "engine/records/segusage_record.h"
#include "engine/records/session_records.h"
#include "engine/test_util.h"

namespace archil::engine {
namespace {

using testing::Rng;

// ---- Random records ----

Envelope RandomValueEnvelope(Rng& r) {
  return Envelope{ValueKind::kValue, r.U16(), Epoch(r.U64())};
}

DiskRecord RandomDisk(Rng& r) {
  DiskRecord d;
  d.state = static_cast<DiskState>(r.Range(1, 3));
  d.flags = r.U16();
  d.lineage_index = static_cast<uint32_t>(r.Range(0, kMaxLineageIndex));
  d.root = DiskNo(r.U64());
  d.parent = DiskNo(r.U64());
  d.fork_epoch = Epoch(r.U64());
  d.read_parent = DiskNo(r.U64());
  d.read_parent_epoch = Epoch(r.U64());
  d.depth = r.U16();
  d.owner_gen = r.U32();
  d.cur_epoch = Epoch(r.U64());
  d.created = r.I64();
  d.dir_hash_key = r.Array<16>();
  d.next_lineage_index = r.U32();
  return d;
}

CountersRecord RandomCounters(Rng& r) {
  return CountersRecord{Seq(r.U64()), r.U64(), r.U32(), r.U64()};
}

EpochRecord RandomEpoch(Rng& r) {
  return EpochRecord{static_cast<EpochState>(r.Range(1, 2)), r.U16(), r.U32(), r.I64(),
                     r.Bytes(r.Range(0, 100))};
}

CkptRecord RandomCkpt(Rng& r) {
  return CkptRecord{static_cast<CkptState>(r.Range(1, 2)), Epoch(r.U64()), r.I64(), r.I64(),
                    r.Array<16>()};
}

BranchRecord RandomBranch(Rng& r) {
  return BranchRecord{DiskNo(r.U64()),          DiskNo(r.U64()),
                      Epoch(r.U64()),           r.I64(),
                      r.Bytes(r.Range(0, 100)), r.Bytes(r.Range(0, 2) == 0 ? 0 : r.Range(1, 64))};
}

OrphanRecord RandomOrphan(Rng& r) {
  OrphanRecord o{Epoch(r.U64()), r.I64(), {}};
  for (uint64_t i = r.Range(0, 5); i > 0; --i) o.holders.push_back(r.Array<16>());
  return o;
}

PurgeRecord RandomPurge(Rng& r) {
  return PurgeRecord{static_cast<PurgeReason>(r.Range(1, 3)), Epoch(r.U64()), r.U64(), r.I64()};
}

SegRecord RandomSeg(Rng& r) {
  return SegRecord{static_cast<SegState>(r.Range(1, 5)),
                   r.U16(),
                   r.U32(),
                   r.U64(),
                   r.U64(),
                   r.U32(),
                   r.U32(),
                   r.I64(),
                   r.I64(),
                   r.I64(),
                   r.I64(),
                   DiskNo(r.U64())};
}

LocalRecord RandomLocal(Rng& r) {
  return LocalRecord{r.U16(), r.U32(), Seq(r.U64()), Seq(r.U64()), Seq(r.U64())};
}

InodeRecord RandomInode(Rng& r) {
  InodeRecord i;
  static constexpr uint32_t kTypes[] = {S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFIFO, S_IFSOCK};
  i.mode = kTypes[r.Range(0, 5)] | static_cast<uint32_t>(r.Range(0, 07777));
  i.uid = r.U32();
  i.gid = r.U32();
  i.nlink = r.U32();
  i.flags = r.U32();
  i.size = r.U64();
  i.atime = r.I64();
  i.mtime = r.I64();
  i.ctime = r.I64();
  i.btime = r.I64();
  i.change = r.U64();
  i.parent = Ino(r.U64());
  i.blocks = r.U64();
  i.rdev = r.U32();
  i.tgen = r.U32();
  if (IsSymlinkMode(i.mode)) i.symlink_target = r.Bytes(r.Range(0, kMaxSymlinkTarget));
  return i;
}

Extent RandomExtent(Rng& r, uint32_t blk_off, uint32_t nblk) {
  Extent e;
  e.blk_off = static_cast<uint16_t>(blk_off);
  e.nblk = static_cast<uint16_t>(nblk);
  e.seg_blk = static_cast<uint32_t>(r.Range(1, 1u << 20));
  e.seg_disk = DiskNo(r.U64());
  e.seg_no = SegNo(r.U64());
  e.birth = Epoch(r.U64());
  e.flags = r.U16();
  for (uint32_t i = 0; i < nblk; ++i) e.crcs.push_back(r.U32());
  return e;
}

ChunkRecord RandomChunk(Rng& r) {
  ChunkRecord c;
  c.tgen = r.U32();
  uint32_t blk = static_cast<uint32_t>(r.Range(0, 20));
  while (blk < kChunkBlocks && r.Range(0, 5) != 0) {
    const uint32_t n =
        static_cast<uint32_t>(r.Range(1, std::min<uint32_t>(40, kChunkBlocks - blk)));
    c.extents.push_back(RandomExtent(r, blk, n));
    blk += n + static_cast<uint32_t>(r.Range(0, 3));
  }
  return c;
}

ChunkOp RandomChunkOp(Rng& r) {
  ChunkOp op;
  op.op = static_cast<ChunkOpType>(r.Range(1, 3));
  op.birth = Epoch(r.U64());
  op.tgen = r.U32();
  switch (op.op) {
    case ChunkOpType::kWrite: {
      const uint32_t off = static_cast<uint32_t>(r.Range(0, 255));
      op.extent = RandomExtent(r, off, static_cast<uint32_t>(r.Range(1, 256 - off)));
      break;
    }
    case ChunkOpType::kClip:
      op.keep_blk = static_cast<uint16_t>(r.Range(0, 256));
      break;
    case ChunkOpType::kPunch:
      op.punch_off = static_cast<uint16_t>(r.Range(0, 255));
      op.punch_nblk = static_cast<uint16_t>(r.Range(1, 256 - op.punch_off));
      break;
  }
  return op;
}

SegUsageRecord RandomSegUsage(Rng& r) {
  SegUsageRecord s = SegUsageRecord::Empty(static_cast<uint32_t>(r.Range(0, 200)));
  for (uint32_t b = 1; b <= s.max_blocks; ++b) {
    if (r.Bool()) {
      s.bitmap[b / 8] = static_cast<char>(s.bitmap[b / 8] | (1 << (b % 8)));
      ++s.live_blocks;
    }
  }
  return s;
}

SessionRecord RandomSession(Rng& r) {
  return SessionRecord{static_cast<SessionMode>(r.Range(0, 1)),
                       r.U16(),
                       r.U32(),
                       r.Array<16>(),
                       r.I64(),
                       Ino(r.U64()),
                       r.U32(),
                       r.Array<8>(),
                       r.Bytes(r.Range(0, 64)),
                       r.Bytes(r.Range(0, 300)),
                       r.Bytes(r.Range(0, 40))};
}

SlotRecord RandomSlot(Rng& r) {
  return SlotRecord{r.U16(), r.U16(), r.U64(), r.Bytes(r.Range(0, kMaxSlotReplyBody))};
}

DelegationRecord RandomDelegation(Rng& r) {
  return DelegationRecord{DelegationMode::kWrite, static_cast<DelegationOrigin>(r.Range(0, 2)),
                          Ino(r.U64()),           r.Array<16>(),
                          r.Array<16>(),          r.I64()};
}

RevocationRecord RandomRevocation(Rng& r) {
  return RevocationRecord{r.U8(), Ino(r.U64()), r.I64(), r.Array<16>()};
}

IntentRecord RandomIntent(Rng& r) { return MakeIntent(r.Bytes(kBlockSize * r.Range(1, 17))); }

// ---- Typed round trips ----

template <typename T, typename Enc, typename Dec>
void ExpectRoundTrip(const T& rec, Enc encode, Dec decode) {
  const std::string v = encode(rec);
  auto d = decode(v);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(*d == rec);
  EXPECT_EQ(encode(*d), v);
}

template <typename T, typename Enc, typename Dec>
void ExpectVersionedRoundTrip(const Envelope& env, const T& rec, Enc encode, Dec decode) {
  const std::string v = encode(env, rec);
  auto d = decode(v);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->env, env);
  EXPECT_TRUE(d->body == rec);
  EXPECT_EQ(encode(d->env, d->body), v);
  // The same key's WHITEOUT: envelope only, body ignored on encode and empty on decode.
  const Envelope wo{ValueKind::kWhiteout, 0, env.birth};
  EXPECT_EQ(encode(wo, rec), EncodeWhiteout(env.birth));
  auto w = decode(EncodeWhiteout(env.birth));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->env, wo);
  EXPECT_TRUE(w->body == T{});
}

TEST(RecordsTest, EveryRecordRoundTrips) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Rng r(seed);
  for (int i = 0; i < 300; ++i) {
    ExpectRoundTrip(SchemaRecord{r.U32(), r.U32(), r.I64()}, EncodeSchema, DecodeSchema);
    ExpectRoundTrip(ServerRecord{r.Array<16>(), r.I64()}, EncodeServer, DecodeServer);
    ExpectRoundTrip(BootRecord{r.U64()}, EncodeBoot, DecodeBoot);
    ExpectRoundTrip(OwnerRecord{1 + r.U32() % 0xFFFFFFFEu}, EncodeOwner, DecodeOwner);
    ExpectRoundTrip(RandomDisk(r), EncodeDisk, DecodeDisk);
    ExpectRoundTrip(RandomCounters(r), EncodeCounters, DecodeCounters);
    ExpectRoundTrip(RandomEpoch(r), EncodeEpoch, DecodeEpoch);
    ExpectRoundTrip(RandomCkpt(r), EncodeCkpt, DecodeCkpt);
    ExpectRoundTrip(RandomBranch(r), EncodeBranch, DecodeBranch);
    ExpectRoundTrip(OriginRecord{DiskNo(r.U64()), Epoch(r.U64())}, EncodeOrigin, DecodeOrigin);
    ExpectRoundTrip(RandomOrphan(r), EncodeOrphan, DecodeOrphan);
    ExpectRoundTrip(RandomPurge(r), EncodePurge, DecodePurge);
    ExpectRoundTrip(RandomSeg(r), EncodeSeg, DecodeSeg);
    ExpectRoundTrip(RelocRecord{r.U32(), SegNo(r.U64()), r.U32()}, EncodeReloc, DecodeReloc);
    ExpectRoundTrip(RandomLocal(r), EncodeLocal, DecodeLocal);
    ExpectVersionedRoundTrip(RandomValueEnvelope(r), RandomInode(r), EncodeInode, DecodeInode);
    ExpectVersionedRoundTrip(RandomValueEnvelope(r), BackrefRecord{r.U32()}, EncodeBackref,
                             DecodeBackref);
    ExpectVersionedRoundTrip(RandomValueEnvelope(r), TruncateRecord{r.U64()}, EncodeTruncate,
                             DecodeTruncate);
    ExpectVersionedRoundTrip(RandomValueEnvelope(r), DentryRecord{Ino(r.U64()), r.U8()},
                             EncodeDentry, DecodeDentry);
    ExpectVersionedRoundTrip(RandomValueEnvelope(r),
                             XattrRecord{r.Bytes(r.Range(0, r.Bool() ? 100 : kMaxXattrValue))},
                             EncodeXattr, DecodeXattr);
    ExpectVersionedRoundTrip(RandomValueEnvelope(r), RandomChunk(r), EncodeChunk, DecodeChunk);
    ExpectRoundTrip(RandomChunkOp(r), EncodeChunkOp, DecodeChunkOp);
    ExpectRoundTrip(RandomSegUsage(r), EncodeSegUsage, DecodeSegUsage);
    ExpectRoundTrip(SegUsageOp{static_cast<SegUsageOpType>(r.Range(1, 2)), r.U32(), r.U32()},
                    EncodeSegUsageOp, DecodeSegUsageOp);
    if (i % 10 == 0) ExpectRoundTrip(RandomIntent(r), EncodeIntent, DecodeIntent);
    ExpectRoundTrip(RandomSession(r), EncodeSession, DecodeSession);
    ExpectRoundTrip(RandomSlot(r), EncodeSlot, DecodeSlot);
    ExpectRoundTrip(RandomDelegation(r), EncodeDelegation, DecodeDelegation);
    ExpectRoundTrip(RandomRevocation(r), EncodeRevocation, DecodeRevocation);
  }
  EXPECT_EQ(EncodeDeadValue(), std::string(1, '\x01'));
  EXPECT_TRUE(DecodeDeadValue(EncodeDeadValue()).ok());
}

// ---- Strict decoding, for every codec ----

struct Codec {
  const char* name;
  const char* cf;  // the fmt error names it; nullptr for merge operands (no fmt byte)
  std::function<std::string(Rng&)> sample;
  std::function<Status(std::string_view)> decode;
  size_t free_tail_from = SIZE_MAX;  // xattr: any body length decodes
};

template <typename Dec>
std::function<Status(std::string_view)> StatusOf(Dec decode) {
  return [decode](std::string_view v) { return decode(v).status(); };
}

std::vector<Codec> AllCodecs() {
  return {
      {"SCHEMA", "default",
       [](Rng& r) {
         return EncodeSchema({r.U32(), r.U32(), r.I64()});
       },
       StatusOf(DecodeSchema)},
      {"SERVER", "default",
       [](Rng& r) {
         return EncodeServer({r.Array<16>(), r.I64()});
       },
       StatusOf(DecodeServer)},
      {"BOOT", "default", [](Rng& r) { return EncodeBoot({r.U64()}); }, StatusOf(DecodeBoot)},
      {"OWNER", "default", [](Rng& r) { return EncodeOwner({1 + r.U32() % 1000}); },
       StatusOf(DecodeOwner)},
      {"DISK", "meta", [](Rng& r) { return EncodeDisk(RandomDisk(r)); }, StatusOf(DecodeDisk)},
      {"COUNTERS", "meta", [](Rng& r) { return EncodeCounters(RandomCounters(r)); },
       StatusOf(DecodeCounters)},
      {"EPOCH", "meta", [](Rng& r) { return EncodeEpoch(RandomEpoch(r)); }, StatusOf(DecodeEpoch)},
      {"CKPT", "meta", [](Rng& r) { return EncodeCkpt(RandomCkpt(r)); }, StatusOf(DecodeCkpt)},
      {"BRANCH", "meta", [](Rng& r) { return EncodeBranch(RandomBranch(r)); },
       StatusOf(DecodeBranch)},
      {"ORIGIN", "meta",
       [](Rng& r) {
         return EncodeOrigin({DiskNo(r.U64()), Epoch(r.U64())});
       },
       StatusOf(DecodeOrigin)},
      {"ORPHAN", "meta", [](Rng& r) { return EncodeOrphan(RandomOrphan(r)); },
       StatusOf(DecodeOrphan)},
      {"PURGE", "meta", [](Rng& r) { return EncodePurge(RandomPurge(r)); }, StatusOf(DecodePurge)},
      {"SEG", "meta", [](Rng& r) { return EncodeSeg(RandomSeg(r)); }, StatusOf(DecodeSeg)},
      {"RELOC", "meta",
       [](Rng& r) {
         return EncodeReloc({r.U32(), SegNo(r.U64()), r.U32()});
       },
       StatusOf(DecodeReloc)},
      {"LOCAL", "meta", [](Rng& r) { return EncodeLocal(RandomLocal(r)); }, StatusOf(DecodeLocal)},
      {"inode", "inode", [](Rng& r) { return EncodeInode(RandomValueEnvelope(r), RandomInode(r)); },
       StatusOf(DecodeInode)},
      {"back-reference", "inode",
       [](Rng& r) { return EncodeBackref(RandomValueEnvelope(r), {r.U32()}); },
       StatusOf(DecodeBackref)},
      {"truncate", "inode",
       [](Rng& r) { return EncodeTruncate(RandomValueEnvelope(r), {r.U64()}); },
       StatusOf(DecodeTruncate)},
      {"dentry", "dentry",
       [](Rng& r) {
         return EncodeDentry(RandomValueEnvelope(r), {Ino(r.U64()), r.U8()});
       },
       StatusOf(DecodeDentry)},
      {"xattr", "xattr",
       [](Rng& r) { return EncodeXattr(RandomValueEnvelope(r), {r.Bytes(r.Range(0, 300))}); },
       StatusOf(DecodeXattr), kEnvelopeSize},
      {"chunk", "chunk", [](Rng& r) { return EncodeChunk(RandomValueEnvelope(r), RandomChunk(r)); },
       StatusOf(DecodeChunk)},
      {"whiteout", "chunk", [](Rng& r) { return EncodeWhiteout(Epoch(r.U64())); },
       StatusOf(DecodeChunk)},
      {"segusage", "segusage", [](Rng& r) { return EncodeSegUsage(RandomSegUsage(r)); },
       StatusOf(DecodeSegUsage)},
      {"intent", "intent",
       [](Rng& r) { return EncodeIntent(MakeIntent(r.Bytes(kBlockSize * r.Range(1, 3)))); },
       StatusOf(DecodeIntent)},
      {"session", "session", [](Rng& r) { return EncodeSession(RandomSession(r)); },
       StatusOf(DecodeSession)},
      {"slot", "session", [](Rng& r) { return EncodeSlot(RandomSlot(r)); }, StatusOf(DecodeSlot)},
      {"delegation", "session", [](Rng& r) { return EncodeDelegation(RandomDelegation(r)); },
       StatusOf(DecodeDelegation)},
      {"revocation", "session", [](Rng& r) { return EncodeRevocation(RandomRevocation(r)); },
       StatusOf(DecodeRevocation)},
      {"dead", "dead", [](Rng&) { return EncodeDeadValue(); }, DecodeDeadValue},
      {"ChunkMerge operand", nullptr, [](Rng& r) { return EncodeChunkOp(RandomChunkOp(r)); },
       StatusOf(DecodeChunkOp)},
      {"SegUsageMerge operand", nullptr,
       [](Rng& r) {
         return EncodeSegUsageOp({SegUsageOpType::kClear, r.U32(), r.U32()});
       },
       StatusOf(DecodeSegUsageOp)},
  };
}

void ExpectCorruption(const Status& s) {
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
}

TEST(RecordsTest, DecodersRejectTruncationsTrailingBytesAndUnknownFmt) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Rng r(seed);
  for (const Codec& c : AllCodecs()) {
    SCOPED_TRACE(c.name);
    for (int i = 0; i < 20; ++i) {
      const std::string v = c.sample(r);
      ASSERT_TRUE(c.decode(v).ok()) << c.decode(v).ToString();
      for (size_t n = 0; n < std::min(v.size(), c.free_tail_from); ++n) {
        SCOPED_TRACE("truncated to " + std::to_string(n));
        ExpectCorruption(c.decode(std::string_view(v).substr(0, n)));
      }
      if (c.free_tail_from == SIZE_MAX) ExpectCorruption(c.decode(v + '\0'));
      if (c.cf != nullptr) {
        for (uint8_t fmt : {0, 2, 255}) {
          std::string bad = v;
          bad[0] = static_cast<char>(fmt);
          Status s = c.decode(bad);
          ExpectCorruption(s);
          EXPECT_EQ(s.message(),
                    std::string(c.cf) + " fmt " + std::to_string(fmt) + " unsupported");
        }
      }
    }
  }
}

TEST(RecordsTest, EnvelopeKinds) {
  std::string v = EncodeDentry({ValueKind::kValue, 0, Epoch(5)}, {Ino(9), 4});
  v[1] = 2;  // no such kind
  ExpectCorruption(DecodeDentry(v).status());
  // A WHITEOUT carries no body.
  ExpectCorruption(DecodeDentry(EncodeWhiteout(Epoch(1)) + std::string(9, '\0')).status());
  for (auto decode : {+[](std::string_view s) { return DecodeInode(s).status(); },
                      +[](std::string_view s) { return DecodeBackref(s).status(); },
                      +[](std::string_view s) { return DecodeTruncate(s).status(); },
                      +[](std::string_view s) { return DecodeXattr(s).status(); }}) {
    EXPECT_TRUE(decode(EncodeWhiteout(Epoch(3))).ok());
    ExpectCorruption(decode(EncodeWhiteout(Epoch(3)) + "x"));
  }
}

// ---- Byte-exact layouts ----

TEST(RecordsTest, DiskLayout) {
  DiskRecord d;
  d.state = DiskState::kHidden;
  d.flags = kDiskFlagXattrs;
  d.lineage_index = 0x123456;
  d.root = DiskNo(0x1111111111111111);
  d.parent = DiskNo(0x2222222222222222);
  d.fork_epoch = Epoch(0x3333);
  d.read_parent = DiskNo(0x4444);
  d.read_parent_epoch = Epoch(0x5555);
  d.depth = 0x0666;
  d.owner_gen = 0x77777777;
  d.cur_epoch = Epoch(0x0102030405060708);
  d.created = -2;
  for (int i = 0; i < 16; ++i) d.dir_hash_key[i] = static_cast<uint8_t>(0xA0 + i);
  d.next_lineage_index = 0x99;
  const std::string v = EncodeDisk(d);
  ASSERT_EQ(v.size(), 96u);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 2);
  EXPECT_EQ(DecodeFixed16LE(&v[2]), 1u);
  EXPECT_EQ(DecodeFixed32LE(&v[4]), 0x123456u);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 0x1111111111111111u);
  EXPECT_EQ(DecodeFixed64LE(&v[16]), 0x2222222222222222u);
  EXPECT_EQ(DecodeFixed64LE(&v[24]), 0x3333u);
  EXPECT_EQ(DecodeFixed64LE(&v[32]), 0x4444u);
  EXPECT_EQ(DecodeFixed64LE(&v[40]), 0x5555u);
  EXPECT_EQ(DecodeFixed16LE(&v[48]), 0x0666u);
  EXPECT_EQ(DecodeFixed16LE(&v[50]), 0u);
  EXPECT_EQ(DecodeFixed32LE(&v[52]), 0x77777777u);
  EXPECT_EQ(std::string(v, 56, 8), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  EXPECT_EQ(static_cast<int64_t>(DecodeFixed64LE(&v[64])), -2);
  EXPECT_EQ(static_cast<uint8_t>(v[72]), 0xA0);
  EXPECT_EQ(static_cast<uint8_t>(v[87]), 0xAF);
  EXPECT_EQ(DecodeFixed32LE(&v[88]), 0x99u);
  EXPECT_EQ(DecodeFixed32LE(&v[92]), 0u);
  // Reserved fields are ignored on read.
  std::string rsv = v;
  rsv[50] = 'x';
  rsv[95] = 'y';
  EXPECT_EQ(*DecodeDisk(rsv), d);
  // Enums out of range are corruption, not guesses.
  std::string bad = v;
  bad[1] = 4;
  ExpectCorruption(DecodeDisk(bad).status());
  bad = v;
  bad[7] = 1;  // lineage index over 24 bits
  ExpectCorruption(DecodeDisk(bad).status());
}

TEST(RecordsTest, SmallMetaLayouts) {
  std::string v = EncodeCounters({Seq(7), 0x1234, 9, 0xABC});
  ASSERT_EQ(v.size(), 40u);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 7u);
  EXPECT_EQ(DecodeFixed64LE(&v[16]), 0x1234u);
  EXPECT_EQ(DecodeFixed32LE(&v[24]), 9u);
  EXPECT_EQ(DecodeFixed64LE(&v[32]), 0xABCu);

  v = EncodeEpoch({EpochState::kReleased, kEpochFlagGcDone, 3, 44, "ck"});
  EXPECT_EQ(v, std::string("\x01\x02\x01\x00\x03\x00\x00\x00", 8) +
                   std::string("\x2c\0\0\0\0\0\0\0", 8) + std::string("\x02\x00", 2) + "ck");
  EXPECT_TRUE(DecodeEpoch(v)->pinned());
  EXPECT_FALSE((EpochRecord{EpochState::kReleased, 0, 0, 0, ""}.pinned()));

  CkptRecord ck{CkptState::kCommitted, Epoch(5), 6, 7, {}};
  ck.request_id[0] = 0xEE;
  v = EncodeCkpt(ck);
  ASSERT_EQ(v.size(), 48u);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 5u);
  EXPECT_EQ(DecodeFixed64LE(&v[24]), 7u);
  EXPECT_EQ(static_cast<uint8_t>(v[32]), 0xEE);

  v = EncodeBranch({DiskNo(1), DiskNo(2), Epoch(3), 4, "from", ""});
  ASSERT_EQ(v.size(), 48u);
  EXPECT_EQ(DecodeFixed64LE(&v[16]), 2u);
  EXPECT_EQ(DecodeFixed16LE(&v[40]), 4u);
  EXPECT_EQ(v.substr(42, 4), "from");
  EXPECT_EQ(DecodeFixed16LE(&v[46]), 0u);
  v = EncodeBranch({DiskNo(1), DiskNo(2), Epoch(3), 4, "from", "key-1"});
  ASSERT_EQ(v.size(), 53u);
  EXPECT_EQ(DecodeFixed16LE(&v[46]), 5u);
  EXPECT_EQ(DecodeBranch(v)->idempotency_key, "key-1");

  EXPECT_EQ(EncodeOrigin({DiskNo(8), Epoch(9)}).size(), 24u);
  OrphanRecord o{Epoch(5), 6, {Bytes16{}, Bytes16{}}};
  o.holders[1][15] = 0x5A;
  v = EncodeOrphan(o);
  ASSERT_EQ(v.size(), 24u + 32);
  EXPECT_EQ(DecodeFixed16LE(&v[2]), 2u);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 5u);
  EXPECT_EQ(static_cast<uint8_t>(v[24 + 31]), 0x5A);
  v[2] = 3;  // n_holders disagrees with the length
  ExpectCorruption(DecodeOrphan(v).status());

  v = EncodePurge({PurgeReason::kDiskDropped, Epoch(10), 11, 12});
  ASSERT_EQ(v.size(), 32u);
  EXPECT_EQ(v[1], 3);
  EXPECT_EQ(DecodeFixed64LE(&v[16]), 11u);

  SegRecord s;
  s.state = SegState::kUploaded;
  s.data_end_blk = 77;
  s.footer_crc = 0xCAFEBABE;
  s.dead = 5;
  s.root = DiskNo(0xDD);
  v = EncodeSeg(s);
  ASSERT_EQ(v.size(), 72u);
  EXPECT_EQ(DecodeFixed32LE(&v[4]), 77u);
  EXPECT_EQ(DecodeFixed32LE(&v[28]), 0xCAFEBABEu);
  EXPECT_EQ(DecodeFixed64LE(&v[56]), 5u);
  EXPECT_EQ(DecodeFixed64LE(&v[64]), 0xDDu);

  v = EncodeReloc({3, SegNo(4), 5});
  ASSERT_EQ(v.size(), 24u);
  EXPECT_EQ(DecodeFixed32LE(&v[4]), 3u);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 4u);
  EXPECT_EQ(DecodeFixed32LE(&v[16]), 5u);

  v = EncodeLocal({0x0102, Incarnation(0x12345, 0x0102), Seq(1), Seq(2), Seq(3)});
  ASSERT_EQ(v.size(), 40u);
  EXPECT_EQ(DecodeFixed16LE(&v[2]), 0x0102u);
  EXPECT_EQ(DecodeFixed32LE(&v[4]), 0x23450102u);
  EXPECT_EQ(DecodeFixed64LE(&v[24]), 3u);

  EXPECT_EQ(EncodeSchema({1, 1, 0}).size(), 20u);
  EXPECT_EQ(DecodeFixed32LE(&EncodeSchema({1, 7, 0})[8]), 7u);
  EXPECT_EQ(EncodeServer({}).size(), 28u);
  EXPECT_EQ(DecodeFixed64LE(&EncodeBoot({42})[8]), 42u);
}

TEST(RecordsTest, InodeAndOtherFsLayouts) {
  InodeRecord i;
  i.mode = S_IFREG | 0644;
  i.nlink = 2;
  i.size = 0x1000;
  i.parent = Ino(0);
  i.tgen = 0xBEEF;
  std::string v = EncodeInode({ValueKind::kValue, 0, Epoch(0x42)}, i);
  ASSERT_EQ(v.size(), 104u);
  EXPECT_EQ(v.substr(0, 4), std::string("\x01\x00\x00\x00", 4));
  EXPECT_EQ(DecodeFixed64LE(&v[4]), 0x42u);
  EXPECT_EQ(DecodeFixed32LE(&v[12]), uint32_t{S_IFREG | 0644});
  EXPECT_EQ(DecodeFixed32LE(&v[24]), 2u);
  EXPECT_EQ(DecodeFixed64LE(&v[32]), 0x1000u);
  EXPECT_EQ(DecodeFixed32LE(&v[100]), 0xBEEFu);
  ExpectCorruption(DecodeInode(v + std::string("\x01\x00x", 3)).status());  // target on a file

  i.mode = S_IFLNK | 0777;
  i.symlink_target = "../t";
  v = EncodeInode({ValueKind::kValue, 0, Epoch(1)}, i);
  ASSERT_EQ(v.size(), 110u);
  EXPECT_EQ(DecodeFixed16LE(&v[104]), 4u);
  EXPECT_EQ(v.substr(106), "../t");
  ExpectCorruption(DecodeInode(v.substr(0, 104)).status());  // symlink without a target
  i.symlink_target = std::string(kMaxSymlinkTarget + 1, 'x');
  ExpectCorruption(DecodeInode(EncodeInode({ValueKind::kValue, 0, Epoch(1)}, i)).status());

  v = EncodeDentry({ValueKind::kValue, 0, Epoch(3)}, {Ino(0x77), 4});
  ASSERT_EQ(v.size(), 21u);
  EXPECT_EQ(DecodeFixed64LE(&v[12]), 0x77u);
  EXPECT_EQ(v[20], 4);
  EXPECT_EQ(EncodeBackref({ValueKind::kValue, 0, Epoch(3)}, {2}).size(), 16u);
  v = EncodeTruncate({ValueKind::kValue, 0, Epoch(3)}, {0x99});
  ASSERT_EQ(v.size(), 20u);
  EXPECT_EQ(DecodeFixed64LE(&v[12]), 0x99u);
  ExpectCorruption(DecodeXattr(EncodeXattr({ValueKind::kValue, 0, Epoch(1)},
                                           {std::string(kMaxXattrValue + 1, 'v')}))
                       .status());
  EXPECT_EQ(EncodeWhiteout(Epoch(0x0102)), std::string("\x01\x01\x00\x00\x02\x01\0\0\0\0\0\0", 12));
}

Extent MakeExtent(uint16_t off, uint16_t n, uint32_t seg_blk, uint32_t crc_base) {
  Extent e;
  e.blk_off = off;
  e.nblk = n;
  e.seg_blk = seg_blk;
  e.seg_disk = DiskNo(0xD1);
  e.seg_no = SegNo(0x5E);
  e.birth = Epoch(3);
  for (uint32_t i = 0; i < n; ++i) e.crcs.push_back(crc_base + i);
  return e;
}

TEST(RecordsTest, ChunkLayoutAndChecks) {
  ChunkRecord c{7, {MakeExtent(0, 2, 10, 100), MakeExtent(5, 1, 40, 200)}};
  std::string v = EncodeChunk({ValueKind::kValue, 0, Epoch(9)}, c);
  ASSERT_EQ(v.size(), 20u + 36 + 8 + 36 + 4);
  EXPECT_EQ(DecodeFixed32LE(&v[12]), 7u);
  EXPECT_EQ(DecodeFixed16LE(&v[16]), 2u);
  EXPECT_EQ(DecodeFixed16LE(&v[20]), 0u);   // blk_off
  EXPECT_EQ(DecodeFixed16LE(&v[22]), 2u);   // nblk
  EXPECT_EQ(DecodeFixed32LE(&v[24]), 10u);  // seg_blk
  EXPECT_EQ(DecodeFixed64LE(&v[28]), 0xD1u);
  EXPECT_EQ(DecodeFixed64LE(&v[36]), 0x5Eu);
  EXPECT_EQ(DecodeFixed64LE(&v[44]), 3u);
  EXPECT_EQ(DecodeFixed32LE(&v[56]), 100u);
  EXPECT_EQ(DecodeFixed32LE(&v[60]), 101u);
  EXPECT_EQ(DecodeFixed16LE(&v[64]), 5u);  // second extent
  EXPECT_EQ(DecodeFixed32LE(&v[100]), 200u);
  // Reserved header and extent fields are ignored.
  std::string rsv = v;
  rsv[18] = 1;
  rsv[54] = 1;
  EXPECT_EQ(DecodeChunk(rsv)->body, c);

  auto rejects = [](const ChunkRecord& bad) {
    ExpectCorruption(CheckChunk(bad));
    ExpectCorruption(DecodeChunk(EncodeChunk({ValueKind::kValue, 0, Epoch(1)}, bad)).status());
  };
  rejects({0, {MakeExtent(5, 1, 1, 0), MakeExtent(0, 2, 1, 0)}});  // unsorted
  rejects({0, {MakeExtent(0, 3, 1, 0), MakeExtent(2, 2, 1, 0)}});  // overlapping
  rejects({0, {MakeExtent(250, 7, 1, 0)}});                        // crosses the chunk
  rejects({0, {MakeExtent(0, 1, 0, 0)}});                          // seg_blk 0 is the header
  rejects({0, {MakeExtent(0, 2, UINT32_MAX, 0)}});                 // segment block overflow
  Extent empty = MakeExtent(0, 1, 1, 0);
  empty.nblk = 0;
  empty.crcs.clear();
  rejects({0, {empty}});
  v[16] = 3;  // n_ext says more extents than there are
  ExpectCorruption(DecodeChunk(v).status());
  v[16] = 1;  // fewer: trailing bytes
  ExpectCorruption(DecodeChunk(v).status());
}

TEST(RecordsTest, ChunkOpLayoutAndChecks) {
  ChunkOp w{ChunkOpType::kWrite, Epoch(4), 6, MakeExtent(3, 2, 9, 50)};
  std::string v = EncodeChunkOp(w);
  ASSERT_EQ(v.size(), 16u + 36 + 8);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(DecodeFixed64LE(&v[4]), 4u);
  EXPECT_EQ(DecodeFixed32LE(&v[12]), 6u);
  EXPECT_EQ(DecodeFixed16LE(&v[16]), 3u);
  ChunkOp clip{ChunkOpType::kClip, Epoch(4), 6, {}, 17};
  v = EncodeChunkOp(clip);
  ASSERT_EQ(v.size(), 20u);
  EXPECT_EQ(DecodeFixed16LE(&v[16]), 17u);
  v[16] = 1;
  v[17] = 1;  // keep_blk 257
  ExpectCorruption(DecodeChunkOp(v).status());
  ChunkOp punch{ChunkOpType::kPunch, Epoch(4), 6, {}, 0, 250, 7};  // leaves the chunk
  ExpectCorruption(DecodeChunkOp(EncodeChunkOp(punch)).status());
  punch.punch_nblk = 0;
  ExpectCorruption(DecodeChunkOp(EncodeChunkOp(punch)).status());
  v = EncodeChunkOp(clip);
  v[0] = 4;
  ExpectCorruption(DecodeChunkOp(v).status());
}

TEST(RecordsTest, SegUsageLayoutAndChecks) {
  SegUsageRecord s = SegUsageRecord::Empty(16);  // blocks 0..16: 17 bits, 3 bytes
  ASSERT_EQ(s.bitmap.size(), 3u);
  s.bitmap[0] = 0x02;  // block 1
  s.bitmap[2] = 0x01;  // block 16
  s.live_blocks = 2;
  std::string v = EncodeSegUsage(s);
  ASSERT_EQ(v.size(), 16u + 3);
  EXPECT_EQ(DecodeFixed32LE(&v[4]), 16u);
  EXPECT_EQ(DecodeFixed32LE(&v[8]), 2u);
  EXPECT_EQ(static_cast<uint8_t>(v[16]), 0x02);
  ASSERT_TRUE(DecodeSegUsage(v).ok());
  EXPECT_TRUE(s.live(1));
  EXPECT_TRUE(s.live(16));
  EXPECT_FALSE(s.live(2));
  EXPECT_FALSE(s.live(17));
  std::string bad = v;
  bad[16] |= 1;  // the header block
  bad[8] = 3;
  ExpectCorruption(DecodeSegUsage(bad).status());
  bad = v;
  bad[18] |= 2;  // block 17 > max_blocks
  bad[8] = 3;
  ExpectCorruption(DecodeSegUsage(bad).status());
  bad = v;
  bad[8] = 1;  // live_blocks disagrees with the bitmap
  ExpectCorruption(DecodeSegUsage(bad).status());
  EXPECT_EQ(EncodeSegUsageOp({SegUsageOpType::kClear, 5, 6}),
            std::string("\x02\0\0\0\x05\0\0\0\x06\0\0\0", 12));
  ExpectCorruption(DecodeSegUsageOp(std::string("\x03\0\0\0\x05\0\0\0\x06\0\0\0", 12)).status());
}

TEST(RecordsTest, IntentLayoutAndCrcs) {
  std::string data(2 * kBlockSize, 'a');
  data[kBlockSize] = 'b';
  const IntentRecord rec = MakeIntent(data);
  std::string v = EncodeIntent(rec);
  ASSERT_EQ(v.size(), 8u + 8 + 2 * kBlockSize);
  EXPECT_EQ(DecodeFixed32LE(&v[4]), 2u);
  EXPECT_EQ(DecodeFixed32LE(&v[8]), Crc32c(data.data(), kBlockSize));
  EXPECT_EQ(DecodeFixed32LE(&v[12]), Crc32c(data.data() + kBlockSize, kBlockSize));
  v[16 + kBlockSize + 5] ^= 1;  // a flipped bit in block 1
  ExpectCorruption(DecodeIntent(v).status());
}

TEST(RecordsTest, SessionLayouts) {
  SessionRecord s{
      SessionMode::kShared, 8, 30000, {}, 5, Ino(1), 0x10002, {7}, "host", "/mnt", "tok"};
  std::string v = EncodeSession(s);
  ASSERT_EQ(v.size(), 56u + 6 + 6 + 5);
  EXPECT_EQ(v[1], 1);
  EXPECT_EQ(DecodeFixed16LE(&v[2]), 8u);
  EXPECT_EQ(DecodeFixed32LE(&v[4]), 30000u);
  EXPECT_EQ(DecodeFixed64LE(&v[32]), 1u);
  EXPECT_EQ(DecodeFixed32LE(&v[40]), 0x10002u);
  EXPECT_EQ(v[48], 7);
  EXPECT_EQ(v.substr(56), std::string("\x04\0host\x04\0/mnt\x03\0tok", 17));
  v[1] = 2;
  ExpectCorruption(DecodeSession(v).status());

  v = EncodeSlot({3, 17, 99, "reply"});
  ASSERT_EQ(v.size(), 25u);
  EXPECT_EQ(DecodeFixed16LE(&v[4]), 3u);
  EXPECT_EQ(DecodeFixed16LE(&v[6]), 17u);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 99u);
  EXPECT_EQ(DecodeFixed32LE(&v[16]), 5u);
  ExpectCorruption(
      DecodeSlot(EncodeSlot({0, 0, 0, std::string(kMaxSlotReplyBody + 1, 'x')})).status());

  DelegationRecord d{DelegationMode::kWrite, DelegationOrigin::kCreated, Ino(0x55), {}, {}, 7};
  d.client_id[0] = 0xC1;
  v = EncodeDelegation(d);
  ASSERT_EQ(v.size(), 56u);
  EXPECT_EQ(v[1], 2);
  EXPECT_EQ(v[2], 2);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 0x55u);
  EXPECT_EQ(static_cast<uint8_t>(v[32]), 0xC1);
  EXPECT_EQ(DecodeFixed64LE(&v[48]), 7u);
  v[1] = 1;  // read delegations are never stored
  ExpectCorruption(DecodeDelegation(v).status());

  v = EncodeRevocation({3, Ino(0x66), 8, {}});
  ASSERT_EQ(v.size(), 40u);
  EXPECT_EQ(v[1], 3);
  EXPECT_EQ(DecodeFixed64LE(&v[8]), 0x66u);
  EXPECT_EQ(DecodeFixed64LE(&v[16]), 8u);
}

}  // namespace
}  // namespace archil::engine
