// Golden bytes of every record codec: one instance of each record, every field a distinct non-zero
// value, must encode to exactly the bytes below and decode from them to the same instance. The
// hex strings were generated from the hand-written codecs before they moved to field_codec.h (ADR
// 0024) and checked against docs/formats.md: spaces separate its fields, in its order. A change to
// a string here is a format change. The second test pins the decoders' error messages.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/records/chunk_record.h"
#include "engine/records/default_records.h"
#include "engine/records/fs_records.h"
#include "engine/records/intent_record.h"
#include "engine/records/log_record.h"
#include "engine/records/meta_records.h"
#include "engine/records/segusage_record.h"
#include "engine/records/session_records.h"

namespace archil::engine {
namespace {

std::string GoldenHexOf(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(c) & 0xF]);
  }
  return out;
}

// Hex digits to bytes; spaces are ignored.
std::string GoldenBytes(std::string_view hex) {
  std::string digits;
  for (char c : hex) {
    if (c != ' ') digits.push_back(c);
  }
  std::string out;
  for (size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// 16 (or N) consecutive bytes from `first`.
template <size_t N = 16>
std::array<uint8_t, N> GoldenRun(uint8_t first) {
  std::array<uint8_t, N> a;
  for (size_t i = 0; i < N; ++i) a[i] = static_cast<uint8_t>(first + i);
  return a;
}

// Little-endian values whose bytes count up from `first`: 0x14131211 is written 11 12 13 14.
constexpr uint16_t GoldenU16(uint8_t first) {
  return static_cast<uint16_t>(first | (first + 1) << 8);
}
constexpr uint32_t GoldenU32(uint8_t first) {
  return uint32_t{GoldenU16(first)} | uint32_t{GoldenU16(static_cast<uint8_t>(first + 2))} << 16;
}
constexpr uint64_t GoldenU64(uint8_t first) {
  return uint64_t{GoldenU32(first)} | uint64_t{GoldenU32(static_cast<uint8_t>(first + 4))} << 32;
}

// Compares as hex, so that a failure shows both sides readably.
void ExpectGoldenBytes(const std::string& encoded, std::string_view hex) {
  EXPECT_EQ(GoldenHexOf(encoded), GoldenHexOf(GoldenBytes(hex)));
}

template <typename T, typename Enc, typename Dec>
void ExpectGolden(const T& rec, std::string_view hex, Enc encode, Dec decode) {
  ExpectGoldenBytes(encode(rec), hex);
  auto d = decode(GoldenBytes(hex));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(*d == rec);
}

template <typename T, typename Enc, typename Dec>
void ExpectGoldenVersioned(const Envelope& env, const T& rec, std::string_view hex, Enc encode,
                           Dec decode) {
  ExpectGoldenBytes(encode(env, rec), hex);
  auto d = decode(GoldenBytes(hex));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->env, env);
  EXPECT_TRUE(d->body == rec);
}

// ---- The instances and their bytes ----

// Every versioned value below starts with this envelope: fmt, kind, flags, birth.
const Envelope kGoldenEnv{ValueKind::kValue, 0x0A09, Epoch(0x0807060504030201)};

constexpr std::string_view kSchemaHex = "01 000000 11121314 21222324 3132333435363738";
const SchemaRecord kGoldenSchema{0x14131211, 0x24232221, 0x3837363534333231};

constexpr std::string_view kServerHex =
    "01 000000 1112131415161718191a1b1c1d1e1f20 3132333435363738";
const ServerRecord kGoldenServer{GoldenRun(0x11), 0x3837363534333231};

constexpr std::string_view kOwnerHex = "01 000000 11121314";
const OwnerRecord kGoldenOwner{0x14131211};

constexpr std::string_view kBootHex = "01 00000000000000 1112131415161718";
const BootRecord kGoldenBoot{0x1817161514131211};

constexpr std::string_view kDiskHex =
    "01 02 1112 21222300 3132333435363738 4142434445464748 5152535455565758 "
    "6162636465666768 7172737475767778 8182 0000 91929394 a1a2a3a4a5a6a7a8 "
    "0102030405060708 c1c2c3c4c5c6c7c8c9cacbcccdcecfd0 e1e2e3e4 00000000";
DiskRecord GoldenDisk() {
  DiskRecord d;
  d.state = DiskState::kHidden;
  d.flags = 0x1211;
  d.lineage_index = 0x232221;
  d.root = DiskNo(0x3837363534333231);
  d.parent = DiskNo(0x4847464544434241);
  d.fork_epoch = Epoch(0x5857565554535251);
  d.read_parent = DiskNo(0x6867666564636261);
  d.read_parent_epoch = Epoch(0x7877767574737271);
  d.depth = 0x8281;
  d.owner_gen = 0x94939291;
  d.cur_epoch = Epoch(0xA8A7A6A5A4A3A2A1);
  d.created = 0x0807060504030201;
  d.dir_hash_key = GoldenRun(0xC1);
  d.next_lineage_index = 0xE4E3E2E1;
  return d;
}

constexpr std::string_view kCountersHex =
    "01 00000000000000 1112131415161718 2122232425262728 31323334 00000000 "
    "4142434445464748";
const CountersRecord kGoldenCounters{Seq(0x1817161514131211), 0x2827262524232221, 0x34333231,
                                     0x4847464544434241};

constexpr std::string_view kEpochHex = "01 02 1112 21222324 3132333435363738 0600 636b70742d31";
const EpochRecord kGoldenEpoch{EpochState::kReleased, 0x1211, 0x24232221, 0x3837363534333231,
                               "ckpt-1"};

constexpr std::string_view kCkptHex =
    "01 02 000000000000 1112131415161718 2122232425262728 3132333435363738 "
    "4142434445464748494a4b4c4d4e4f50";
const CkptRecord kGoldenCkpt{CkptState::kCommitted, Epoch(0x1817161514131211), 0x2827262524232221,
                             0x3837363534333231, GoldenRun(0x41)};

constexpr std::string_view kBranchHex =
    "01 00000000000000 1112131415161718 2122232425262728 3132333435363738 4142434445464748 "
    "0600 636b70742d31 0600 6964656d2d37";
const BranchRecord kGoldenBranch{DiskNo(0x1817161514131211),
                                 DiskNo(0x2827262524232221),
                                 Epoch(0x3837363534333231),
                                 0x4847464544434241,
                                 "ckpt-1",
                                 "idem-7"};

constexpr std::string_view kOriginHex = "01 00000000000000 1112131415161718 2122232425262728";
const OriginRecord kGoldenOrigin{DiskNo(0x1817161514131211), Epoch(0x2827262524232221)};

constexpr std::string_view kOrphanHex =
    "01 00 0200 00000000 1112131415161718 2122232425262728 "
    "3132333435363738393a3b3c3d3e3f40 4142434445464748494a4b4c4d4e4f50";
const OrphanRecord kGoldenOrphan{
    Epoch(0x1817161514131211), 0x2827262524232221, {GoldenRun(0x31), GoldenRun(0x41)}};

constexpr std::string_view kPurgeHex =
    "01 02 000000000000 1112131415161718 2122232425262728 3132333435363738";
const PurgeRecord kGoldenPurge{PurgeReason::kOrphanClosed, Epoch(0x1817161514131211),
                               0x2827262524232221, 0x3837363534333231};

constexpr std::string_view kSegHex =
    "01 04 1112 21222324 3132333435363738 4142434445464748 51525354 61626364 "
    "7172737475767778 0102030405060708 1112131415161718 2122232425262728 9192939495969798";
const SegRecord kGoldenSeg{SegState::kRelocated, 0x1211,
                           0x24232221,           0x3837363534333231,
                           0x4847464544434241,   0x54535251,
                           0x64636261,           0x7877767574737271,
                           0x0807060504030201,   0x1817161514131211,
                           0x2827262524232221,   DiskNo(0x9897969594939291)};

constexpr std::string_view kRelocHex = "01 000000 11121314 2122232425262728 31323334 00000000";
const RelocRecord kGoldenReloc{0x14131211, SegNo(0x2827262524232221), 0x34333231};

constexpr std::string_view kLocalHex =
    "01 00 1112 21222324 3132333435363738 4142434445464748 5152535455565758 "
    "0000000000000000";
const LocalRecord kGoldenLocal{0x1211, 0x24232221, Seq(0x3837363534333231), Seq(0x4847464544434241),
                               Seq(0x5857565554535251)};

InodeRecord GoldenInode(uint32_t mode, std::string target) {
  InodeRecord i;
  i.mode = mode;
  i.uid = 0x14131211;
  i.gid = 0x24232221;
  i.nlink = 0x34333231;
  i.flags = 0x44434241;
  i.size = 0x5857565554535251;
  i.atime = 0x6867666564636261;
  i.mtime = 0x7877767574737271;
  i.ctime = 0x1817161514131211;
  i.btime = 0x2827262524232221;
  i.change = 0x8887868584838281;
  i.parent = Ino(0x9897969594939291);
  i.blocks = 0xA8A7A6A5A4A3A2A1;
  i.rdev = 0xB4B3B2B1;
  i.tgen = 0xC4C3C2C1;
  i.symlink_target = std::move(target);
  return i;
}
constexpr std::string_view kSymlinkInodeHex =
    "01 00 090a 0102030405060708 eda10000 11121314 21222324 31323334 41424344 "
    "5152535455565758 6162636465666768 7172737475767778 1112131415161718 2122232425262728 "
    "8182838485868788 9192939495969798 a1a2a3a4a5a6a7a8 b1b2b3b4 c1c2c3c4 0900 "
    "2e2e2f746172676574";
constexpr std::string_view kDirInodeHex =
    "01 00 090a 0102030405060708 e8410000 11121314 21222324 31323334 41424344 "
    "5152535455565758 6162636465666768 7172737475767778 1112131415161718 2122232425262728 "
    "8182838485868788 9192939495969798 a1a2a3a4a5a6a7a8 b1b2b3b4 c1c2c3c4";

constexpr std::string_view kBackrefHex = "01 00 090a 0102030405060708 11121314";
constexpr std::string_view kTruncateHex = "01 00 090a 0102030405060708 1112131415161718";
constexpr std::string_view kDentryHex = "01 00 090a 0102030405060708 1112131415161718 04";
constexpr std::string_view kXattrHex = "01 00 090a 0102030405060708 76616c75652d31";
constexpr std::string_view kWhiteoutHex = "01 01 0000 1112131415161718";

Extent GoldenExtent(uint16_t blk_off, uint16_t nblk, uint8_t first) {
  Extent e;
  e.blk_off = blk_off;
  e.nblk = nblk;
  e.seg_blk = GoldenU32(first);
  e.seg_disk = DiskNo(GoldenU64(first + 0x10));
  e.seg_no = SegNo(GoldenU64(first + 0x20));
  e.birth = Epoch(GoldenU64(first + 0x30));
  e.flags = GoldenU16(first + 0x40);
  for (uint32_t i = 0; i < nblk; ++i) e.crcs.push_back(GoldenU32(first + 0x50 + 8 * i));
  return e;
}
constexpr std::string_view kChunkHex =
    "01 00 090a 0102030405060708 11121314 0200 0000 2100 0200 20212223 3031323334353637 "
    "4041424344454647 5051525354555657 6061 0000 70717273 78797a7b 4000 0100 90919293 "
    "a0a1a2a3a4a5a6a7 b0b1b2b3b4b5b6b7 c0c1c2c3c4c5c6c7 d0d1 0000 e0e1e2e3";
const ChunkRecord kGoldenChunk{0x14131211,
                               {GoldenExtent(0x21, 2, 0x20), GoldenExtent(0x40, 1, 0x90)}};

constexpr std::string_view kChunkWriteHex =
    "01 000000 1112131415161718 21222324 3100 0200 30313233 4041424344454647 "
    "5051525354555657 6061626364656667 7071 0000 80818283 88898a8b";
constexpr std::string_view kChunkClipHex = "02 000000 1112131415161718 21222324 c800 0000";
constexpr std::string_view kChunkPunchHex = "03 000000 1112131415161718 21222324 3100 4200";
ChunkOp GoldenChunkOp(ChunkOpType type) {
  ChunkOp op;
  op.op = type;
  op.birth = Epoch(0x1817161514131211);
  op.tgen = 0x24232221;
  switch (type) {
    case ChunkOpType::kWrite:
      op.extent = GoldenExtent(0x31, 2, 0x30);
      break;
    case ChunkOpType::kClip:
      op.keep_blk = 0xC8;
      break;
    case ChunkOpType::kPunch:
      op.punch_off = 0x31;
      op.punch_nblk = 0x42;
      break;
  }
  return op;
}

constexpr std::string_view kSegUsageHex = "01 000000 14000000 04000000 00000000 060210";
// Blocks 1, 2, 9 and 20 of 20 live.
const SegUsageRecord kGoldenSegUsage{20, 4, std::string("\x06\x02\x10", 3)};

constexpr std::string_view kSegUsageOpHex = "02 000000 11121314 21222324";
const SegUsageOp kGoldenSegUsageOp{SegUsageOpType::kClear, 0x14131211, 0x24232221};

// The intent's header and CRC; its one block of data follows.
constexpr std::string_view kIntentHeaderHex = "01 000000 01000000 43b696ed";
std::string GoldenIntentData() {
  std::string data(kBlockSize, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + 3);
  return data;
}

constexpr std::string_view kDeadHex = "01";

constexpr std::string_view kSessionHex =
    "01 01 1112 21222324 3132333435363738393a3b3c3d3e3f40 5152535455565758 "
    "6162636465666768 71727374 00000000 8182838485868788 0600 686f73742d31 0600 "
    "2f6d6e742f64 0500 746f6b2d39";
const SessionRecord kGoldenSession{SessionMode::kShared,
                                   0x1211,
                                   0x24232221,
                                   GoldenRun(0x31),
                                   0x5857565554535251,
                                   Ino(0x6867666564636261),
                                   0x74737271,
                                   GoldenRun<8>(0x81),
                                   "host-1",
                                   "/mnt/d",
                                   "tok-9"};

constexpr std::string_view kSlotHex =
    "01 000000 1112 2122 3132333435363738 0a000000 7265706c792d626f6479";
const SlotRecord kGoldenSlot{0x1211, 0x2221, 0x3837363534333231, "reply-body"};

constexpr std::string_view kDelegationHex =
    "01 02 01 00 00000000 1112131415161718 2122232425262728292a2b2c2d2e2f30 "
    "3132333435363738393a3b3c3d3e3f40 4142434445464748";
const DelegationRecord kGoldenDelegation{DelegationMode::kWrite,  DelegationOrigin::kCheckout,
                                         Ino(0x1817161514131211), GoldenRun(0x21),
                                         GoldenRun(0x31),         0x4847464544434241};

constexpr std::string_view kRevocationHex =
    "01 05 000000000000 1112131415161718 2122232425262728 3132333435363738393a3b3c3d3e3f40";
const RevocationRecord kGoldenRevocation{0x05, Ino(0x1817161514131211), 0x2827262524232221,
                                         GoldenRun(0x31)};

constexpr std::string_view kInoGrantHex =
    "01 00000000000000 1112131415161718 2122232425262728 3132333435363738 4142434445464748";
const InoGrantRecord kGoldenInoGrant{Ino(0x1817161514131211), Ino(0x2827262524232221),
                                     Ino(0x3837363534333231), Ino(0x4847464544434241)};

// A log record of disk 0x0102030405060708 (keys start with it, big-endian).
constexpr DiskNo kGoldenLogDisk{0x0102030405060708};
constexpr std::string_view kLogHex =
    "01 05 0100 03000000 1112131415161718 2122232425262728 3132333435363738 "
    "4142434445464748 5152535455565758 0100 6162636465666768 7172737475767778 01 02 0900 "
    "02000000 010203040506070869 7631 02 03 0900 00000000 010203040506070864 03 05 0900 "
    "02000000 010203040506070863 6f70";
LogRecord GoldenLog() {
  const std::string disk_key("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
  LogRecord r;
  r.flags = kLogFlagEpochBump;
  r.seq = Seq(0x1817161514131211);
  r.epoch = Epoch(0x2827262524232221);
  r.commit_ns = 0x3837363534333231;
  r.segrefs = {{DiskNo(0x4847464544434241), SegNo(0x5857565554535251)}};
  r.depends_on = {{DiskNo(0x6867666564636261), Seq(0x7877767574737271)}};
  r.mutations = {{LogOp::kPut, Cf::kInode, disk_key + "i", "v1"},
                 {LogOp::kDelete, Cf::kDentry, disk_key + "d", ""},
                 {LogOp::kMerge, Cf::kChunk, disk_key + "c", "op"}};
  return r;
}

TEST(RecordsGoldenTest, EveryRecordEncodesToItsBytesAndBack) {
  ExpectGolden(kGoldenSchema, kSchemaHex, EncodeSchema, DecodeSchema);
  ExpectGolden(kGoldenServer, kServerHex, EncodeServer, DecodeServer);
  ExpectGolden(kGoldenOwner, kOwnerHex, EncodeOwner, DecodeOwner);
  ExpectGolden(kGoldenBoot, kBootHex, EncodeBoot, DecodeBoot);

  ExpectGolden(GoldenDisk(), kDiskHex, EncodeDisk, DecodeDisk);
  ExpectGolden(kGoldenCounters, kCountersHex, EncodeCounters, DecodeCounters);
  ExpectGolden(kGoldenEpoch, kEpochHex, EncodeEpoch, DecodeEpoch);
  ExpectGolden(kGoldenCkpt, kCkptHex, EncodeCkpt, DecodeCkpt);
  ExpectGolden(kGoldenBranch, kBranchHex, EncodeBranch, DecodeBranch);
  ExpectGolden(kGoldenOrigin, kOriginHex, EncodeOrigin, DecodeOrigin);
  ExpectGolden(kGoldenOrphan, kOrphanHex, EncodeOrphan, DecodeOrphan);
  ExpectGolden(kGoldenPurge, kPurgeHex, EncodePurge, DecodePurge);
  ExpectGolden(kGoldenSeg, kSegHex, EncodeSeg, DecodeSeg);
  ExpectGolden(kGoldenReloc, kRelocHex, EncodeReloc, DecodeReloc);
  ExpectGolden(kGoldenLocal, kLocalHex, EncodeLocal, DecodeLocal);

  ExpectGoldenVersioned(kGoldenEnv, GoldenInode(S_IFLNK | 0755, "../target"), kSymlinkInodeHex,
                        EncodeInode, DecodeInode);
  ExpectGoldenVersioned(kGoldenEnv, GoldenInode(S_IFDIR | 0750, ""), kDirInodeHex, EncodeInode,
                        DecodeInode);
  ExpectGoldenVersioned(kGoldenEnv, BackrefRecord{0x14131211}, kBackrefHex, EncodeBackref,
                        DecodeBackref);
  ExpectGoldenVersioned(kGoldenEnv, TruncateRecord{0x1817161514131211}, kTruncateHex,
                        EncodeTruncate, DecodeTruncate);
  ExpectGoldenVersioned(kGoldenEnv, DentryRecord{Ino(0x1817161514131211), 4}, kDentryHex,
                        EncodeDentry, DecodeDentry);
  ExpectGoldenVersioned(kGoldenEnv, XattrRecord{"value-1"}, kXattrHex, EncodeXattr, DecodeXattr);
  ExpectGoldenVersioned(kGoldenEnv, kGoldenChunk, kChunkHex, EncodeChunk, DecodeChunk);
  // A WHITEOUT: the envelope alone, the same for every versioned CF.
  ExpectGoldenBytes(EncodeWhiteout(Epoch(0x1817161514131211)), kWhiteoutHex);
  const Envelope whiteout{ValueKind::kWhiteout, 0, Epoch(0x1817161514131211)};
  ExpectGoldenBytes(EncodeInode(whiteout, GoldenInode(S_IFREG, "")), kWhiteoutHex);
  ExpectGoldenBytes(EncodeChunk(whiteout, kGoldenChunk), kWhiteoutHex);
  EXPECT_EQ(DecodeInode(GoldenBytes(kWhiteoutHex))->env, whiteout);
  EXPECT_EQ(DecodeDentry(GoldenBytes(kWhiteoutHex))->env, whiteout);
  EXPECT_EQ(DecodeChunk(GoldenBytes(kWhiteoutHex))->env, whiteout);

  ExpectGolden(GoldenChunkOp(ChunkOpType::kWrite), kChunkWriteHex, EncodeChunkOp, DecodeChunkOp);
  ExpectGolden(GoldenChunkOp(ChunkOpType::kClip), kChunkClipHex, EncodeChunkOp, DecodeChunkOp);
  ExpectGolden(GoldenChunkOp(ChunkOpType::kPunch), kChunkPunchHex, EncodeChunkOp, DecodeChunkOp);
  ExpectGolden(kGoldenSegUsage, kSegUsageHex, EncodeSegUsage, DecodeSegUsage);
  ExpectGolden(kGoldenSegUsageOp, kSegUsageOpHex, EncodeSegUsageOp, DecodeSegUsageOp);

  const std::string data = GoldenIntentData();
  const IntentRecord intent = MakeIntent(data);
  EXPECT_EQ(GoldenHexOf(EncodeIntent(intent)), GoldenHexOf(GoldenBytes(kIntentHeaderHex) + data));
  auto decoded_intent = DecodeIntent(GoldenBytes(kIntentHeaderHex) + data);
  ASSERT_TRUE(decoded_intent.ok()) << decoded_intent.status().ToString();
  EXPECT_EQ(*decoded_intent, intent);
  EXPECT_EQ(*IntentBlocks(GoldenBytes(kIntentHeaderHex) + data), 1u);
  ExpectGoldenBytes(EncodeDeadValue(), kDeadHex);
  EXPECT_TRUE(DecodeDeadValue(GoldenBytes(kDeadHex)).ok());

  ExpectGolden(kGoldenSession, kSessionHex, EncodeSession, DecodeSession);
  ExpectGolden(kGoldenSlot, kSlotHex, EncodeSlot, DecodeSlot);
  ExpectGolden(kGoldenDelegation, kDelegationHex, EncodeDelegation, DecodeDelegation);
  ExpectGolden(kGoldenRevocation, kRevocationHex, EncodeRevocation, DecodeRevocation);
  ExpectGolden(kGoldenInoGrant, kInoGrantHex, EncodeInoGrant, DecodeInoGrant);

  ExpectGolden(GoldenLog(), kLogHex, EncodeLogRecord,
               [](std::string_view v) { return DecodeLogRecord(v, kGoldenLogDisk); });
}

// ---- Error messages ----

std::string GoldenMessage(const Status& s) { return s.ok() ? "ok" : s.message(); }

template <typename Dec>
std::function<std::string(std::string_view)> GoldenMessageOf(Dec decode) {
  return [decode](std::string_view v) { return GoldenMessage(decode(v).status()); };
}

// `bytes` with the byte at `off` replaced by `b`.
std::string GoldenWith(std::string bytes, size_t off, uint8_t b) {
  bytes[off] = static_cast<char>(b);
  return bytes;
}

struct GoldenErrors {
  const char* name;
  std::function<std::string(std::string_view)> decode;
  std::string bytes;
  // The messages for no bytes, the first byte only, the last byte missing, and one byte more.
  const char* empty;
  const char* first_byte;
  const char* short_by_one;
  const char* long_by_one;
};

TEST(RecordsGoldenTest, DecodersKeepTheirMessages) {
  const std::string intent = GoldenBytes(kIntentHeaderHex) + GoldenIntentData();
  auto decode_log = [](std::string_view v) { return DecodeLogRecord(v, kGoldenLogDisk); };
  const std::vector<GoldenErrors> cases = {
      {"SCHEMA", GoldenMessageOf(DecodeSchema), GoldenBytes(kSchemaHex),
       "SCHEMA record: 0 bytes, want at least 1", "SCHEMA record: 1 bytes, want 20",
       "SCHEMA record: 19 bytes, want 20", "SCHEMA record: 21 bytes, want 20"},
      {"SERVER", GoldenMessageOf(DecodeServer), GoldenBytes(kServerHex),
       "SERVER record: 0 bytes, want at least 1", "SERVER record: 1 bytes, want 28",
       "SERVER record: 27 bytes, want 28", "SERVER record: 29 bytes, want 28"},
      {"OWNER", GoldenMessageOf(DecodeOwner), GoldenBytes(kOwnerHex),
       "OWNER record: 0 bytes, want at least 1", "OWNER record: 1 bytes, want 8",
       "OWNER record: 7 bytes, want 8", "OWNER record: 9 bytes, want 8"},
      {"BOOT", GoldenMessageOf(DecodeBoot), GoldenBytes(kBootHex),
       "BOOT record: 0 bytes, want at least 1", "BOOT record: 1 bytes, want 16",
       "BOOT record: 15 bytes, want 16", "BOOT record: 17 bytes, want 16"},
      {"DISK", GoldenMessageOf(DecodeDisk), GoldenBytes(kDiskHex),
       "DISK record: 0 bytes, want at least 1", "DISK record: 1 bytes, want 96",
       "DISK record: 95 bytes, want 96", "DISK record: 97 bytes, want 96"},
      {"COUNTERS", GoldenMessageOf(DecodeCounters), GoldenBytes(kCountersHex),
       "COUNTERS record: 0 bytes, want at least 1", "COUNTERS record: 1 bytes, want 40",
       "COUNTERS record: 39 bytes, want 40", "COUNTERS record: 41 bytes, want 40"},
      {"EPOCH", GoldenMessageOf(DecodeEpoch), GoldenBytes(kEpochHex),
       "EPOCH record: 0 bytes, want at least 1", "EPOCH record: 1 bytes, want 18 + name",
       "EPOCH record: 23 bytes, want 16 + 2 + string length",
       "EPOCH record: 25 bytes, want 16 + 2 + string length"},
      {"CKPT", GoldenMessageOf(DecodeCkpt), GoldenBytes(kCkptHex),
       "CKPT record: 0 bytes, want at least 1", "CKPT record: 1 bytes, want 48",
       "CKPT record: 47 bytes, want 48", "CKPT record: 49 bytes, want 48"},
      {"BRANCH", GoldenMessageOf(DecodeBranch), GoldenBytes(kBranchHex),
       "BRANCH record: 0 bytes, want at least 1", "BRANCH record: 1 bytes, want 44 + name + key",
       "BRANCH record: 55 bytes, want 40 + 2 + name + 2 + idempotency key",
       "BRANCH record: 57 bytes, want 40 + 2 + name + 2 + idempotency key"},
      {"ORIGIN", GoldenMessageOf(DecodeOrigin), GoldenBytes(kOriginHex),
       "ORIGIN record: 0 bytes, want at least 1", "ORIGIN record: 1 bytes, want 24",
       "ORIGIN record: 23 bytes, want 24", "ORIGIN record: 25 bytes, want 24"},
      {"ORPHAN", GoldenMessageOf(DecodeOrphan), GoldenBytes(kOrphanHex),
       "ORPHAN record: 0 bytes, want at least 1",
       "ORPHAN record: 1 bytes, want 24 + 16 * n_holders", "ORPHAN record: 55 bytes, want 56",
       "ORPHAN record: 57 bytes, want 56"},
      {"PURGE", GoldenMessageOf(DecodePurge), GoldenBytes(kPurgeHex),
       "PURGE record: 0 bytes, want at least 1", "PURGE record: 1 bytes, want 32",
       "PURGE record: 31 bytes, want 32", "PURGE record: 33 bytes, want 32"},
      {"SEG", GoldenMessageOf(DecodeSeg), GoldenBytes(kSegHex),
       "SEG record: 0 bytes, want at least 1", "SEG record: 1 bytes, want 72",
       "SEG record: 71 bytes, want 72", "SEG record: 73 bytes, want 72"},
      {"RELOC", GoldenMessageOf(DecodeReloc), GoldenBytes(kRelocHex),
       "RELOC record: 0 bytes, want at least 1", "RELOC record: 1 bytes, want 24",
       "RELOC record: 23 bytes, want 24", "RELOC record: 25 bytes, want 24"},
      {"LOCAL", GoldenMessageOf(DecodeLocal), GoldenBytes(kLocalHex),
       "LOCAL record: 0 bytes, want at least 1", "LOCAL record: 1 bytes, want 40",
       "LOCAL record: 39 bytes, want 40", "LOCAL record: 41 bytes, want 40"},
      {"symlink inode", GoldenMessageOf(DecodeInode), GoldenBytes(kSymlinkInodeHex),
       "inode envelope record: 0 bytes, want at least 1",
       "inode envelope record: 1 bytes, want at least 12",
       "inode (symlink) record: 114 bytes, want 104 + 2 + string length",
       "inode (symlink) record: 116 bytes, want 104 + 2 + string length"},
      {"directory inode", GoldenMessageOf(DecodeInode), GoldenBytes(kDirInodeHex),
       "inode envelope record: 0 bytes, want at least 1",
       "inode envelope record: 1 bytes, want at least 12",
       "inode record: 103 bytes, want 104 (+ 2 + target)",
       "inode record: 105 bytes, want 104 (not a symlink)"},
      {"back-reference", GoldenMessageOf(DecodeBackref), GoldenBytes(kBackrefHex),
       "inode envelope record: 0 bytes, want at least 1",
       "inode envelope record: 1 bytes, want at least 12",
       "back-reference record: 15 bytes, want 16", "back-reference record: 17 bytes, want 16"},
      {"truncate", GoldenMessageOf(DecodeTruncate), GoldenBytes(kTruncateHex),
       "inode envelope record: 0 bytes, want at least 1",
       "inode envelope record: 1 bytes, want at least 12", "truncate record: 19 bytes, want 20",
       "truncate record: 21 bytes, want 20"},
      {"dentry", GoldenMessageOf(DecodeDentry), GoldenBytes(kDentryHex),
       "dentry envelope record: 0 bytes, want at least 1",
       "dentry envelope record: 1 bytes, want at least 12", "dentry record: 20 bytes, want 21",
       "dentry record: 22 bytes, want 21"},
      {"xattr", GoldenMessageOf(DecodeXattr), GoldenBytes(kXattrHex),
       "xattr envelope record: 0 bytes, want at least 1",
       "xattr envelope record: 1 bytes, want at least 12", "ok", "ok"},
      {"whiteout", GoldenMessageOf(DecodeChunk), GoldenBytes(kWhiteoutHex),
       "chunk envelope record: 0 bytes, want at least 1",
       "chunk envelope record: 1 bytes, want at least 12",
       "chunk envelope record: 11 bytes, want at least 12",
       "chunk WHITEOUT record: 13 bytes, want 12"},
      {"chunk", GoldenMessageOf(DecodeChunk), GoldenBytes(kChunkHex),
       "chunk envelope record: 0 bytes, want at least 1",
       "chunk envelope record: 1 bytes, want at least 12",
       "chunk record: 39 bytes, want 40 for an extent",
       "chunk record: 105 bytes, want no bytes after the last extent"},
      {"WRITE", GoldenMessageOf(DecodeChunkOp), GoldenBytes(kChunkWriteHex),
       "ChunkMerge operand record: 0 bytes, want at least 16",
       "ChunkMerge operand record: 1 bytes, want at least 16",
       "ChunkMerge WRITE record: 43 bytes, want 44 for an extent",
       "ChunkMerge WRITE record: 61 bytes, want 16 + one extent"},
      {"CLIP", GoldenMessageOf(DecodeChunkOp), GoldenBytes(kChunkClipHex),
       "ChunkMerge operand record: 0 bytes, want at least 16",
       "ChunkMerge operand record: 1 bytes, want at least 16",
       "ChunkMerge CLIP record: 19 bytes, want 20", "ChunkMerge CLIP record: 21 bytes, want 20"},
      {"PUNCH", GoldenMessageOf(DecodeChunkOp), GoldenBytes(kChunkPunchHex),
       "ChunkMerge operand record: 0 bytes, want at least 16",
       "ChunkMerge operand record: 1 bytes, want at least 16",
       "ChunkMerge PUNCH record: 19 bytes, want 20", "ChunkMerge PUNCH record: 21 bytes, want 20"},
      {"segusage", GoldenMessageOf(DecodeSegUsage), GoldenBytes(kSegUsageHex),
       "segusage record: 0 bytes, want at least 1", "segusage record: 1 bytes, want 16 + bitmap",
       "segusage record: 18 bytes, want 19", "segusage record: 20 bytes, want 19"},
      {"SegUsageMerge", GoldenMessageOf(DecodeSegUsageOp), GoldenBytes(kSegUsageOpHex),
       "SegUsageMerge operand record: 0 bytes, want 12",
       "SegUsageMerge operand record: 1 bytes, want 12",
       "SegUsageMerge operand record: 11 bytes, want 12",
       "SegUsageMerge operand record: 13 bytes, want 12"},
      {"intent", GoldenMessageOf(DecodeIntent), intent, "intent record: 0 bytes, want at least 1",
       "intent record: 1 bytes, want 8 + 4100 * nblk", "intent record: 4107 bytes, want 4108",
       "intent record: 4109 bytes, want 4108"},
      {"dead", [](std::string_view v) { return GoldenMessage(DecodeDeadValue(v)); },
       GoldenBytes(kDeadHex), "dead record: 0 bytes, want at least 1", "ok",
       "dead record: 0 bytes, want at least 1", "dead record: 2 bytes, want 1"},
      {"session", GoldenMessageOf(DecodeSession), GoldenBytes(kSessionHex),
       "session record: 0 bytes, want at least 1",
       "session record: 1 bytes, want 56 + three strings",
       "session record: 78 bytes, want 56 + exactly three strings",
       "session record: 80 bytes, want 56 + exactly three strings"},
      {"slot", GoldenMessageOf(DecodeSlot), GoldenBytes(kSlotHex),
       "slot record: 0 bytes, want at least 1", "slot record: 1 bytes, want 20 + body",
       "slot record: 29 bytes, want 20 + body_len (at most 4096)",
       "slot record: 31 bytes, want 20 + body_len (at most 4096)"},
      {"delegation", GoldenMessageOf(DecodeDelegation), GoldenBytes(kDelegationHex),
       "delegation record: 0 bytes, want at least 1", "delegation record: 1 bytes, want 56",
       "delegation record: 55 bytes, want 56", "delegation record: 57 bytes, want 56"},
      {"revocation", GoldenMessageOf(DecodeRevocation), GoldenBytes(kRevocationHex),
       "revocation record: 0 bytes, want at least 1", "revocation record: 1 bytes, want 40",
       "revocation record: 39 bytes, want 40", "revocation record: 41 bytes, want 40"},
      {"ino grant", GoldenMessageOf(DecodeInoGrant), GoldenBytes(kInoGrantHex),
       "ino grant record: 0 bytes, want at least 1", "ino grant record: 1 bytes, want 40",
       "ino grant record: 39 bytes, want 40", "ino grant record: 41 bytes, want 40"},
      {"log", GoldenMessageOf(decode_log), GoldenBytes(kLogHex),
       "log record: 0 bytes, want at least 32", "log record: 1 bytes, want at least 32",
       "log record: mutation 2 runs past the end", "log record: 1 bytes after the mutations"},
  };
  for (const GoldenErrors& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.decode(""), c.empty);
    EXPECT_EQ(c.decode(std::string_view(c.bytes).substr(0, 1)), c.first_byte);
    EXPECT_EQ(c.decode(std::string_view(c.bytes).substr(0, c.bytes.size() - 1)), c.short_by_one);
    EXPECT_EQ(c.decode(c.bytes + '\0'), c.long_by_one);
  }

  // Enums and other fields out of range.
  auto chunk = GoldenMessageOf(DecodeChunk);
  auto chunk_op = GoldenMessageOf(DecodeChunkOp);
  auto log = GoldenMessageOf(decode_log);
  EXPECT_EQ(GoldenMessageOf(DecodeDisk)(GoldenWith(GoldenBytes(kDiskHex), 1, 4)),
            "DISK record: state 4 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodeDisk)(GoldenWith(GoldenBytes(kDiskHex), 7, 1)),
            "DISK record: lineage_index 19079713 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodeEpoch)(GoldenWith(GoldenBytes(kEpochHex), 1, 3)),
            "EPOCH record: state 3 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodeCkpt)(GoldenWith(GoldenBytes(kCkptHex), 1, 0)),
            "CKPT record: state 0 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodePurge)(GoldenWith(GoldenBytes(kPurgeHex), 1, 4)),
            "PURGE record: reason 4 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodeSeg)(GoldenWith(GoldenBytes(kSegHex), 1, 6)),
            "SEG record: state 6 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodeOwner)(GoldenBytes("01 000000 00000000")),
            "default: OWNER with generation 0");
  EXPECT_EQ(GoldenMessageOf(DecodeDentry)(GoldenWith(GoldenBytes(kDentryHex), 1, 2)),
            "dentry envelope: unknown kind 2");
  EXPECT_EQ(chunk(GoldenWith(GoldenBytes(kChunkHex), 16, 3)),
            "chunk record: 0 bytes, want an extent of at least 36 bytes");              // n_ext
  EXPECT_EQ(chunk(GoldenWith(GoldenBytes(kChunkHex), 22, 0)), "chunk: extent nblk 0");  // nblk 0
  EXPECT_EQ(chunk(GoldenWith(GoldenBytes(kChunkHex), 64, 0x22)),
            "chunk extents unsorted or overlapping at block 34");  // overlapping extents
  EXPECT_EQ(chunk_op(GoldenWith(GoldenBytes(kChunkWriteHex), 0, 4)),
            "ChunkMerge operand: unknown op 4");
  EXPECT_EQ(chunk_op(GoldenWith(GoldenBytes(kChunkClipHex), 17, 1)),
            "ChunkMerge CLIP: keep_blk 456");
  EXPECT_EQ(chunk_op(GoldenWith(GoldenBytes(kChunkPunchHex), 18, 0xF0)),
            "ChunkMerge PUNCH: range [49, +240) leaves the chunk");
  EXPECT_EQ(GoldenMessageOf(DecodeSegUsage)(GoldenWith(GoldenBytes(kSegUsageHex), 8, 3)),
            "segusage: live_blocks 3 but 4 bits set");
  EXPECT_EQ(GoldenMessageOf(DecodeSegUsageOp)(GoldenWith(GoldenBytes(kSegUsageOpHex), 0, 3)),
            "SegUsageMerge operand: unknown op 3");
  EXPECT_EQ(GoldenMessageOf(DecodeIntent)(GoldenWith(intent, 4, 0)), "intent record: nblk 0");
  EXPECT_EQ(GoldenMessageOf(DecodeIntent)(GoldenWith(intent, 20, 0)),
            "intent record: block 0 fails its CRC");
  EXPECT_EQ(GoldenMessageOf(DecodeSession)(GoldenWith(GoldenBytes(kSessionHex), 1, 2)),
            "session record: mode 2 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodeSlot)(GoldenWith(GoldenBytes(kSlotHex), 17, 0x10)),
            "slot record: 30 bytes, want 20 + body_len (at most 4096)");
  EXPECT_EQ(GoldenMessageOf(DecodeDelegation)(GoldenWith(GoldenBytes(kDelegationHex), 1, 1)),
            "delegation record: mode 1 out of range");
  EXPECT_EQ(GoldenMessageOf(DecodeDelegation)(GoldenWith(GoldenBytes(kDelegationHex), 2, 3)),
            "delegation record: origin 3 out of range");
  EXPECT_EQ(log(GoldenWith(GoldenBytes(kLogHex), 1, 2)), "log record: unknown flags 2");
  EXPECT_EQ(log(GoldenWith(GoldenBytes(kLogHex), 66, 4)),
            "log record: mutation 0: unknown op");  // op of mutation 0
  EXPECT_EQ(log(GoldenWith(GoldenBytes(kLogHex), 67, 0)),
            "log record: mutation 0: cf tag 0 is not logged");  // cf of mutation 0
}

}  // namespace
}  // namespace archil::engine
