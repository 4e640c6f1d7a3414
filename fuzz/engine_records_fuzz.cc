// Fuzzes the storage engine's decoders of what RocksDB hands back (docs/formats.md §3-4): every
// value codec, every key parser, the merge operators and the segment header/footer/tail. A damaged
// database must never crash the server; a value that decodes must re-encode to a canonical form
// that decodes equal (reserved bytes come back as zero), and a key that parses must rebuild to the
// same bytes.
//
// Input: first byte picks the decoder, the rest is the value or key.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/fs/chunk_map.h"
#include "engine/records/chunk_record.h"
#include "engine/records/default_records.h"
#include "engine/records/fs_records.h"
#include "engine/records/intent_record.h"
#include "engine/records/keys.h"
#include "engine/records/meta_records.h"
#include "engine/records/segusage_record.h"
#include "engine/records/session_records.h"
#include "engine/space/segment_format.h"

namespace archil::engine {
namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Failures must be Corruption; successes must survive encode -> decode -> encode.
template <typename Dec, typename Enc>
void Plain(std::string_view in, Dec decode, Enc encode) {
  auto first = decode(in);
  if (!first.ok()) {
    Check(first.status().code() == Status::Code::kCorruption);
    return;
  }
  const std::string canonical = encode(*first);
  Check(canonical.size() == in.size());  // only reserved bytes may differ
  auto again = decode(canonical);
  Check(again.ok() && *again == *first && encode(*again) == canonical);
}

template <typename Dec, typename Enc>
void WithEnvelope(std::string_view in, Dec decode, Enc encode) {
  Plain(in, decode, [&](const auto& v) { return encode(v.env, v.body); });
}

template <typename Parsed>
void Key(std::string_view in, const Result<Parsed>& parsed, const std::string& rebuilt_if_ok) {
  if (!parsed.ok()) {
    Check(parsed.status().code() == Status::Code::kCorruption);
    return;
  }
  Check(rebuilt_if_ok == in);
}

void Keys(uint8_t which, std::string_view in) {
  switch (which) {
    case 0: {
      auto p = ParseMetaKey(in);
      std::string k;
      if (p.ok()) {
        switch (p->type) {
          case MetaType::kEpoch:
            k = MetaEpochKey(p->disk, Epoch(p->id));
            break;
          case MetaType::kCkpt:
            k = MetaCkptKey(p->disk, p->name);
            break;
          case MetaType::kBranch:
            k = MetaBranchKey(p->disk, p->name);
            break;
          case MetaType::kOrigin:
          case MetaType::kOrphan:
          case MetaType::kPurge:
            k = MetaInoKey(p->disk, p->type, Ino(p->id));
            break;
          case MetaType::kSeg:
            k = MetaSegKey(p->disk, SegNo(p->id));
            break;
          case MetaType::kReloc:
          case MetaType::kRelocRev:
            k = MetaRelocKey(p->disk, p->type, SegNo(p->id), p->blk);
            break;
          default:
            k = MetaKey(p->disk, p->type);
        }
      }
      Key(in, p, k);
      return;
    }
    case 1: {
      auto p = ParseInodeKey(in);
      std::string k;
      if (p.ok()) {
        k = p->kind == InodeKeyKind::kInode      ? InodeKey(p->disk, p->ino)
            : p->kind == InodeKeyKind::kTruncate ? TruncateKey(p->disk, p->ino, p->tgen)
                                                 : BackrefKey(p->disk, p->ino, p->parent);
      }
      Key(in, p, k);
      return;
    }
    case 2: {
      auto p = ParseDentryKey(in);
      Key(in, p, p.ok() ? DentryKey(p->disk, p->parent, p->cookie, p->name) : "");
      return;
    }
    case 3: {
      auto p = ParseXattrKey(in);
      Key(in, p, p.ok() ? XattrKey(p->disk, p->ino, p->name) : "");
      return;
    }
    case 4: {
      auto p = ParseChunkKey(in);
      Key(in, p, p.ok() ? ChunkKey(p->disk, p->ino, p->chunk) : "");
      return;
    }
    case 5: {
      auto p = ParseHistKey(in);
      Key(in, p, p.ok() ? HistKey(p->disk, p->tag, p->suffix, p->death) : "");
      if (p.ok()) {
        // The head key it names maps back to the same suffix.
        Result<std::string> head = HeadKeyOf(p->disk, p->tag, p->suffix);
        Check(head.ok());
        Result<std::string> suffix = HistSuffixOf(p->tag, *head);
        Check(suffix.ok() && *suffix == p->suffix);
      }
      return;
    }
    case 6: {
      auto p = ParseDeadKey(in);
      std::string k;
      if (p.ok()) {
        k = p->kind == DeadKind::kData
                ? DeadDataKey(p->disk, p->death, p->birth, p->blocks)
                : DeadItemKey(p->disk, p->death, p->birth, p->kind, p->tag, p->suffix);
      }
      Key(in, p, k);
      return;
    }
    case 7: {
      auto p = ParseSessionKey(in);
      std::string k;
      if (p.ok()) {
        switch (p->type) {
          case SessionRecordType::kSession:
            k = SessionKey(p->disk, p->session);
            break;
          case SessionRecordType::kSlot:
            k = SlotKey(p->disk, p->session, p->slot);
            break;
          case SessionRecordType::kInoGrant:
            k = InoGrantKey(p->disk, p->session);
            break;
          case SessionRecordType::kDelegation:
          case SessionRecordType::kRevocation:
            k = DelegationKey(p->disk, p->type, p->deleg_gen);
            break;
        }
      }
      Key(in, p, k);
      return;
    }
    default: {
      auto p = ParseIntentKey(in);
      Key(in, p, p.ok() ? IntentKey(p->disk, p->seg, p->seg_blk) : "");
      return;
    }
  }
}

// Operands split by a 0xFF 0xFE marker; the first piece is the base ("" = none).
std::vector<std::string_view> Split(std::string_view in) {
  std::vector<std::string_view> parts;
  size_t at;
  while ((at = in.find("\xff\xfe")) != std::string_view::npos) {
    parts.push_back(in.substr(0, at));
    in.remove_prefix(at + 2);
  }
  parts.push_back(in);
  return parts;
}

template <typename Merge, typename Decode>
void FullMerge(std::string_view in, Merge merge, Decode decode) {
  std::vector<std::string_view> parts = Split(in);
  std::optional<std::string_view> base;
  if (!parts[0].empty()) base = parts[0];
  parts.erase(parts.begin());
  Result<std::string> out = merge(base, parts);
  if (!out.ok()) {
    Check(out.status().code() == Status::Code::kCorruption);
    return;
  }
  Check(decode(*out).ok());  // a merge result is always a valid value
}

int FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (which % 32) {
    case 0:
      return Plain(in, DecodeSchema, EncodeSchema), 0;
    case 1:
      return Plain(in, DecodeServer, EncodeServer), 0;
    case 2:
      return Plain(in, DecodeBoot, EncodeBoot), 0;
    case 3:
      return Plain(in, DecodeDisk, EncodeDisk), 0;
    case 4:
      return Plain(in, DecodeCounters, EncodeCounters), 0;
    case 5:
      return Plain(in, DecodeEpoch, EncodeEpoch), 0;
    case 6:
      return Plain(in, DecodeCkpt, EncodeCkpt), 0;
    case 7:
      return Plain(in, DecodeBranch, EncodeBranch), 0;
    case 8:
      return Plain(in, DecodeOrigin, EncodeOrigin), 0;
    case 9:
      return Plain(in, DecodeOrphan, EncodeOrphan), 0;
    case 10:
      return Plain(in, DecodePurge, EncodePurge), 0;
    case 11:
      return Plain(in, DecodeSeg, EncodeSeg), 0;
    case 12:
      return Plain(in, DecodeReloc, EncodeReloc), 0;
    case 13:
      return Plain(in, DecodeLocal, EncodeLocal), 0;
    case 14:
      return WithEnvelope(in, DecodeInode, EncodeInode), 0;
    case 15:
      return WithEnvelope(in, DecodeBackref, EncodeBackref), 0;
    case 16:
      return WithEnvelope(in, DecodeTruncate, EncodeTruncate), 0;
    case 17:
      return WithEnvelope(in, DecodeDentry, EncodeDentry), 0;
    case 18:
      return WithEnvelope(in, DecodeXattr, EncodeXattr), 0;
    case 19:
      return WithEnvelope(in, DecodeChunk, EncodeChunk), 0;
    case 20:
      return Plain(in, DecodeChunkOp, EncodeChunkOp), 0;
    case 21:
      return Plain(in, DecodeSegUsage, EncodeSegUsage), 0;
    case 22:
      return Plain(in, DecodeSegUsageOp, EncodeSegUsageOp), 0;
    case 23:
      return Plain(in, DecodeIntent, EncodeIntent), 0;
    case 24: {
      const Status s = DecodeDeadValue(in);
      Check(s.ok() ? in == EncodeDeadValue() : s.code() == Status::Code::kCorruption);
      return 0;
    }
    case 25:
      return FullMerge(in, ChunkFullMerge, DecodeChunk), 0;
    case 26:
      return FullMerge(in, SegUsageFullMerge, DecodeSegUsage), 0;
    case 27:
      return Plain(in, DecodeSegmentHeader, EncodeSegmentHeader), 0;
    case 28:
      return Plain(in, DecodeSegmentFooter, EncodeSegmentFooter), 0;
    case 29:
      return Plain(in, DecodeSegmentTail, EncodeSegmentTail), 0;
    case 30:
      switch (which / 32) {
        case 0:
          return Plain(in, DecodeSession, EncodeSession), 0;
        case 1:
          return Plain(in, DecodeSlot, EncodeSlot), 0;
        case 2:
          return Plain(in, DecodeDelegation, EncodeDelegation), 0;
        case 3:
          return Plain(in, DecodeRevocation, EncodeRevocation), 0;
        case 4:
          return Plain(in, DecodeInoGrant, EncodeInoGrant), 0;
        default:
          return Keys(8, in), 0;  // intent keys
      }
    default:  // 31: the top three bits pick a key parser
      return Keys(static_cast<uint8_t>(which / 32), in), 0;
  }
}

}  // namespace
}  // namespace archil::engine

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return archil::engine::FuzzOne(data, size);
}
