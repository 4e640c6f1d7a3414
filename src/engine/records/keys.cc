#include "engine/records/keys.h"

#include <string>

#include "base/coding.h"

namespace archil::engine {
namespace {

Status Bad(std::string_view cf, std::string_view what, std::string_view key) {
  return Status::Corruption(std::string(cf) + " key: " + std::string(what) + " (" +
                            std::to_string(key.size()) + " bytes)");
}

std::string Start(DiskNo disk) {
  std::string k;
  PutFixed64BE(&k, disk.value());
  return k;
}

std::string Start(DiskNo disk, uint8_t type) {
  std::string k = Start(disk);
  k.push_back(static_cast<char>(type));
  return k;
}

// Big-endian reads at fixed offsets (keys sort by their bytes); the length was checked.
uint64_t BeU64(std::string_view key, size_t off) { return DecodeFixed64BE(key.data() + off); }
uint32_t BeU32(std::string_view key, size_t off) { return DecodeFixed32BE(key.data() + off); }
uint8_t KeyU8(std::string_view key, size_t off) { return static_cast<uint8_t>(key[off]); }

// disk|id(8) with id + 1, or empty for the last id.
KeyRange Successor(std::string prefix, uint64_t id) {
  KeyRange r;
  r.begin = prefix;
  PutFixed64BE(&r.begin, id);
  if (id != UINT64_MAX) {
    r.end = std::move(prefix);
    PutFixed64BE(&r.end, id + 1);
  }
  return r;
}

}  // namespace

// ---- Whole disks ----

std::string DiskPrefix(DiskNo disk) { return Start(disk); }

KeyRange DiskRange(DiskNo disk) { return Successor(std::string(), disk.value()); }

Result<DiskNo> DiskOfKey(std::string_view key) {
  if (key.size() < 8) return Bad("engine", "shorter than a disk prefix", key);
  return DiskNo(BeU64(key, 0));
}

// ---- default ----

std::string DefaultKey(DefaultRecordType type) {
  std::string k(1, static_cast<char>(type));
  switch (type) {
    case DefaultRecordType::kSchema:
      k += "schema";
      break;
    case DefaultRecordType::kServer:
      k += "server";
      break;
    case DefaultRecordType::kBoot:
      k += "boot";
      break;
    case DefaultRecordType::kOwner:
      k += "owner";
      break;
    case DefaultRecordType::kDeleted:
      k += "deleted";
      break;
  }
  return k;
}

std::string DeletedDiskKey(DiskNo disk) {
  std::string k = DefaultKey(DefaultRecordType::kDeleted);
  PutFixed64BE(&k, disk.value());
  return k;
}

// ---- meta ----

std::string MetaKey(DiskNo disk, MetaType type) { return Start(disk, static_cast<uint8_t>(type)); }

std::string MetaEpochKey(DiskNo disk, Epoch epoch) {
  std::string k = MetaKey(disk, MetaType::kEpoch);
  PutFixed64BE(&k, epoch.value());
  return k;
}

std::string MetaCkptKey(DiskNo disk, std::string_view name) {
  return MetaKey(disk, MetaType::kCkpt).append(name);
}

std::string MetaBranchKey(DiskNo root, std::string_view name) {
  return MetaKey(root, MetaType::kBranch).append(name);
}

std::string MetaInoKey(DiskNo disk, MetaType type, Ino ino) {
  std::string k = MetaKey(disk, type);
  PutFixed64BE(&k, ino.value());
  return k;
}

std::string MetaSegKey(DiskNo disk, SegNo seg) {
  std::string k = MetaKey(disk, MetaType::kSeg);
  PutFixed64BE(&k, seg.value());
  return k;
}

std::string MetaRelocKey(DiskNo disk, MetaType type, SegNo seg, uint32_t blk) {
  std::string k = MetaKey(disk, type);
  PutFixed64BE(&k, seg.value());
  PutFixed32BE(&k, blk);
  return k;
}

Result<MetaKeyParts> ParseMetaKey(std::string_view key) {
  if (key.size() < 9) return Bad("meta", "too short", key);
  MetaKeyParts p;
  p.disk = DiskNo(BeU64(key, 0));
  const uint8_t t = KeyU8(key, 8);
  p.type = static_cast<MetaType>(t);
  const size_t rest = key.size() - 9;
  switch (p.type) {
    case MetaType::kDisk:
    case MetaType::kCounters:
    case MetaType::kLocal:
      if (rest != 0) return Bad("meta", "record key with trailing bytes", key);
      break;
    case MetaType::kEpoch:
    case MetaType::kOrigin:
    case MetaType::kOrphan:
    case MetaType::kPurge:
    case MetaType::kSeg:
      if (rest != 8) return Bad("meta", "wrong length", key);
      p.id = BeU64(key, 9);
      break;
    case MetaType::kCkpt:
    case MetaType::kBranch:
      if (rest < 1 || rest > 100) return Bad("meta", "name not 1..100 bytes", key);
      p.name = key.substr(9);
      break;
    case MetaType::kReloc:
    case MetaType::kRelocRev:
      if (rest != 12) return Bad("meta", "wrong length", key);
      p.id = BeU64(key, 9);
      p.blk = BeU32(key, 17);
      break;
    default:
      return Status::Corruption("meta key: unknown rtype " + std::to_string(t));
  }
  return p;
}

// ---- inode CF ----

std::string Ino8(Ino ino) {
  std::string s;
  PutFixed64BE(&s, ino.value());
  return s;
}

std::string InodeKey(DiskNo disk, Ino ino) {
  std::string k = Start(disk);
  PutFixed64BE(&k, ino.value());
  return k;
}

std::string TruncateKey(DiskNo disk, Ino ino, uint32_t tgen) {
  std::string k = InodeKey(disk, ino);
  k.push_back(static_cast<char>(InodeKeyKind::kTruncate));
  PutFixed32BE(&k, tgen);
  return k;
}

std::string BackrefKey(DiskNo disk, Ino ino, Ino parent) {
  std::string k = InodeKey(disk, ino);
  k.push_back(static_cast<char>(InodeKeyKind::kBackref));
  PutFixed64BE(&k, parent.value());
  return k;
}

KeyRange InodeKeyRange(DiskNo disk, Ino ino) {
  KeyRange r = Successor(Start(disk), ino.value());
  if (r.end.empty()) r.end = DiskRange(disk).end;
  return r;
}

Result<InodeKeyParts> ParseInodeKey(std::string_view key) {
  InodeKeyParts p;
  if (key.size() < 16) return Bad("inode", "too short", key);
  p.disk = DiskNo(BeU64(key, 0));
  p.ino = Ino(BeU64(key, 8));
  if (key.size() == 16) return p;
  const uint8_t kind = KeyU8(key, 16);
  if (kind == static_cast<uint8_t>(InodeKeyKind::kTruncate) && key.size() == 21) {
    p.kind = InodeKeyKind::kTruncate;
    p.tgen = BeU32(key, 17);
    return p;
  }
  if (kind == static_cast<uint8_t>(InodeKeyKind::kBackref) && key.size() == 25) {
    p.kind = InodeKeyKind::kBackref;
    p.parent = Ino(BeU64(key, 17));
    return p;
  }
  return Bad("inode", "unknown kind or wrong length", key);
}

// ---- dentry ----

std::string DentryPrefix(DiskNo disk, Ino parent) { return InodeKey(disk, parent); }

std::string DentrySeekKey(DiskNo disk, Ino parent, uint64_t cookie) {
  std::string k = DentryPrefix(disk, parent);
  PutFixed64BE(&k, cookie);
  return k;
}

std::string DentryKey(DiskNo disk, Ino parent, uint64_t cookie, std::string_view name) {
  return DentrySeekKey(disk, parent, cookie).append(name);
}

Result<DentryKeyParts> ParseDentryKey(std::string_view key) {
  if (key.size() < 25) return Bad("dentry", "too short", key);
  DentryKeyParts p;
  p.disk = DiskNo(BeU64(key, 0));
  p.parent = Ino(BeU64(key, 8));
  p.cookie = BeU64(key, 16);
  p.name = key.substr(24);
  if (!IsValidFileName(p.name)) return Bad("dentry", "invalid name", key);
  return p;
}

// ---- xattr ----

std::string XattrPrefix(DiskNo disk, Ino ino) { return InodeKey(disk, ino); }

std::string XattrKey(DiskNo disk, Ino ino, std::string_view name) {
  return XattrPrefix(disk, ino).append(name);
}

Result<XattrKeyParts> ParseXattrKey(std::string_view key) {
  if (key.size() < 17) return Bad("xattr", "too short", key);
  XattrKeyParts p;
  p.disk = DiskNo(BeU64(key, 0));
  p.ino = Ino(BeU64(key, 8));
  p.name = key.substr(16);
  if (!IsValidXattrName(p.name)) return Bad("xattr", "invalid name", key);
  return p;
}

// ---- chunk ----

std::string ChunkPrefix(DiskNo disk, Ino ino) { return InodeKey(disk, ino); }

std::string ChunkKey(DiskNo disk, Ino ino, uint64_t chunk) {
  std::string k = ChunkPrefix(disk, ino);
  PutFixed64BE(&k, chunk);
  return k;
}

Result<ChunkKeyParts> ParseChunkKey(std::string_view key) {
  if (key.size() != 24) return Bad("chunk", "wrong length", key);
  return ChunkKeyParts{DiskNo(BeU64(key, 0)), Ino(BeU64(key, 8)), BeU64(key, 16)};
}

// ---- intent ----

std::string IntentKey(DiskNo disk, SegNo seg, uint32_t seg_blk) {
  std::string k = Start(disk);
  PutFixed64BE(&k, seg.value());
  PutFixed32BE(&k, seg_blk);
  return k;
}

Result<IntentKeyParts> ParseIntentKey(std::string_view key) {
  if (key.size() != 20) return Bad("intent", "wrong length", key);
  return IntentKeyParts{DiskNo(BeU64(key, 0)), SegNo(BeU64(key, 8)), BeU32(key, 16)};
}

// ---- hist ----

Status CheckHistSuffix(HistTag tag, std::string_view s) {
  auto bad = [&](std::string_view what) { return Bad("hist", what, s); };
  switch (tag) {
    case HistTag::kInode:
      return s.size() == 8 ? Status::Ok() : bad("inode suffix not 8 bytes");
    case HistTag::kChunk:
    case HistTag::kBackref:
      return s.size() == 16 ? Status::Ok() : bad("suffix not 16 bytes");
    case HistTag::kTruncate:
      return s.size() == 12 ? Status::Ok() : bad("truncate suffix not 12 bytes");
    case HistTag::kDentry:
      if (s.size() < 18 || s.back() != '\0' || !IsValidFileName(s.substr(16, s.size() - 17))) {
        return bad("dentry suffix not parent|cookie|name|NUL");
      }
      return Status::Ok();
    case HistTag::kXattr:
      if (s.size() < 10 || s.back() != '\0' || !IsValidXattrName(s.substr(8, s.size() - 9))) {
        return bad("xattr suffix not ino|name|NUL");
      }
      return Status::Ok();
  }
  return Status::Corruption("hist: unknown tag " + std::to_string(static_cast<int>(tag)));
}

Result<std::string> HistSuffixOf(HistTag tag, std::string_view head_key) {
  std::string s;
  switch (tag) {
    case HistTag::kInode:
    case HistTag::kTruncate:
    case HistTag::kBackref: {
      ARCHIL_ASSIGN_OR_RETURN(InodeKeyParts p, ParseInodeKey(head_key));
      const InodeKeyKind want = tag == HistTag::kInode      ? InodeKeyKind::kInode
                                : tag == HistTag::kTruncate ? InodeKeyKind::kTruncate
                                                            : InodeKeyKind::kBackref;
      if (p.kind != want) return Bad("hist", "head key of another kind", head_key);
      PutFixed64BE(&s, p.ino.value());
      if (tag == HistTag::kTruncate) PutFixed32BE(&s, p.tgen);
      if (tag == HistTag::kBackref) PutFixed64BE(&s, p.parent.value());
      return s;
    }
    case HistTag::kDentry: {
      ARCHIL_RETURN_IF_ERROR(ParseDentryKey(head_key).status());
      s.assign(head_key.substr(8));
      s.push_back('\0');
      return s;
    }
    case HistTag::kXattr: {
      ARCHIL_RETURN_IF_ERROR(ParseXattrKey(head_key).status());
      s.assign(head_key.substr(8));
      s.push_back('\0');
      return s;
    }
    case HistTag::kChunk: {
      ARCHIL_RETURN_IF_ERROR(ParseChunkKey(head_key).status());
      s.assign(head_key.substr(8));
      return s;
    }
  }
  return Status::Corruption("hist: unknown tag " + std::to_string(static_cast<int>(tag)));
}

Result<std::string> HeadKeyOf(DiskNo disk, HistTag tag, std::string_view suffix) {
  ARCHIL_RETURN_IF_ERROR(CheckHistSuffix(tag, suffix));
  std::string k = Start(disk);
  switch (tag) {
    case HistTag::kInode:
    case HistTag::kChunk:
      k.append(suffix);
      break;
    case HistTag::kDentry:
    case HistTag::kXattr:
      k.append(suffix.substr(0, suffix.size() - 1));  // drop the NUL
      break;
    case HistTag::kTruncate:
      k.append(suffix.substr(0, 8));
      k.push_back(static_cast<char>(InodeKeyKind::kTruncate));
      k.append(suffix.substr(8));
      break;
    case HistTag::kBackref:
      k.append(suffix.substr(0, 8));
      k.push_back(static_cast<char>(InodeKeyKind::kBackref));
      k.append(suffix.substr(8));
      break;
  }
  return k;
}

std::string HistVersionsPrefix(DiskNo disk, HistTag tag, std::string_view suffix) {
  return Start(disk, static_cast<uint8_t>(tag)).append(suffix);
}

std::string HistKey(DiskNo disk, HistTag tag, std::string_view suffix, Epoch death) {
  std::string k = HistVersionsPrefix(disk, tag, suffix);
  PutFixed64BE(&k, death.value());
  return k;
}

Result<HistKeyParts> ParseHistKey(std::string_view key) {
  if (key.size() < 17) return Bad("hist", "too short", key);
  HistKeyParts p;
  p.disk = DiskNo(BeU64(key, 0));
  p.tag = static_cast<HistTag>(KeyU8(key, 8));
  p.suffix = key.substr(9, key.size() - 17);
  p.death = Epoch(BeU64(key, key.size() - 8));
  ARCHIL_RETURN_IF_ERROR(CheckHistSuffix(p.tag, p.suffix));
  return p;
}

// ---- dead ----

std::string DeadSeekKey(DiskNo disk, Epoch death, Epoch birth) {
  std::string k = Start(disk);
  PutFixed64BE(&k, death.value());
  PutFixed64BE(&k, birth.value());
  return k;
}

std::string DeadDataKey(DiskNo disk, Epoch death, Epoch birth, const DeadBlocks& b) {
  std::string k = DeadSeekKey(disk, death, birth);
  k.push_back(static_cast<char>(DeadKind::kData));
  PutFixed64BE(&k, b.seg_disk.value());
  PutFixed64BE(&k, b.seg_no.value());
  PutFixed32BE(&k, b.seg_blk);
  PutFixed32BE(&k, b.nblk);
  return k;
}

std::string DeadItemKey(DiskNo disk, Epoch death, Epoch birth, DeadKind kind, HistTag tag,
                        std::string_view suffix) {
  std::string k = DeadSeekKey(disk, death, birth);
  k.push_back(static_cast<char>(kind));
  k.push_back(static_cast<char>(tag));
  k.append(suffix);
  return k;
}

Result<DeadKeyParts> ParseDeadKey(std::string_view key) {
  if (key.size() < 25) return Bad("dead", "too short", key);
  DeadKeyParts p;
  p.disk = DiskNo(BeU64(key, 0));
  p.death = Epoch(BeU64(key, 8));
  p.birth = Epoch(BeU64(key, 16));
  const uint8_t kind = KeyU8(key, 24);
  p.kind = static_cast<DeadKind>(kind);
  switch (p.kind) {
    case DeadKind::kData:
      if (key.size() != 25 + 24) return Bad("dead", "DATA payload not 24 bytes", key);
      p.blocks.seg_disk = DiskNo(BeU64(key, 25));
      p.blocks.seg_no = SegNo(BeU64(key, 33));
      p.blocks.seg_blk = BeU32(key, 41);
      p.blocks.nblk = BeU32(key, 45);
      return p;
    case DeadKind::kHist:
    case DeadKind::kHead:
      if (key.size() < 26) return Bad("dead", "no tag", key);
      p.tag = static_cast<HistTag>(KeyU8(key, 25));
      p.suffix = key.substr(26);
      ARCHIL_RETURN_IF_ERROR(CheckHistSuffix(p.tag, p.suffix));
      return p;
  }
  return Status::Corruption("dead key: unknown kind " + std::to_string(kind));
}

// ---- segusage, outbox ----

std::string SegUsageKey(DiskNo disk, SegNo seg) {
  std::string k = Start(disk);
  PutFixed64BE(&k, seg.value());
  return k;
}

Result<std::pair<DiskNo, SegNo>> ParseSegUsageKey(std::string_view key) {
  if (key.size() != 16) return Bad("segusage", "wrong length", key);
  return std::pair(DiskNo(BeU64(key, 0)), SegNo(BeU64(key, 8)));
}

std::string OutboxKey(DiskNo disk, Seq seq) {
  std::string k = Start(disk);
  PutFixed64BE(&k, seq.value());
  return k;
}

Result<std::pair<DiskNo, Seq>> ParseOutboxKey(std::string_view key) {
  if (key.size() != 16) return Bad("outbox", "wrong length", key);
  return std::pair(DiskNo(BeU64(key, 0)), Seq(BeU64(key, 8)));
}

// ---- session ----

std::string SessionKey(DiskNo disk, const SessionIdBytes& session) {
  std::string k = Start(disk, static_cast<uint8_t>(SessionRecordType::kSession));
  k.append(reinterpret_cast<const char*>(session.data()), session.size());
  return k;
}

std::string InoGrantKey(DiskNo disk, const SessionIdBytes& session) {
  std::string k = Start(disk, static_cast<uint8_t>(SessionRecordType::kInoGrant));
  k.append(reinterpret_cast<const char*>(session.data()), session.size());
  return k;
}

std::string SlotKey(DiskNo disk, const SessionIdBytes& session, uint32_t slot) {
  std::string k = Start(disk, static_cast<uint8_t>(SessionRecordType::kSlot));
  k.append(reinterpret_cast<const char*>(session.data()), session.size());
  PutFixed32BE(&k, slot);
  return k;
}

std::string DelegationKey(DiskNo disk, SessionRecordType type, uint64_t deleg_gen) {
  std::string k = Start(disk, static_cast<uint8_t>(type));
  PutFixed64BE(&k, deleg_gen);
  return k;
}

Result<SessionKeyParts> ParseSessionKey(std::string_view key) {
  if (key.size() < 9) return Bad("session", "too short", key);
  SessionKeyParts p;
  p.disk = DiskNo(BeU64(key, 0));
  const uint8_t t = KeyU8(key, 8);
  p.type = static_cast<SessionRecordType>(t);
  auto session = [&] {
    for (size_t i = 0; i < 16; ++i) p.session[i] = KeyU8(key, 9 + i);
  };
  switch (p.type) {
    case SessionRecordType::kSession:
    case SessionRecordType::kInoGrant:
      if (key.size() != 25) return Bad("session", "wrong length", key);
      session();
      return p;
    case SessionRecordType::kSlot:
      if (key.size() != 29) return Bad("session", "wrong length", key);
      session();
      p.slot = BeU32(key, 25);
      return p;
    case SessionRecordType::kDelegation:
    case SessionRecordType::kRevocation:
      if (key.size() != 17) return Bad("session", "wrong length", key);
      p.deleg_gen = BeU64(key, 9);
      return p;
  }
  return Status::Corruption("session key: unknown rtype " + std::to_string(t));
}

}  // namespace archil::engine
