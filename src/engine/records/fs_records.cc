#include "engine/records/fs_records.h"

#include <sys/stat.h>

#include "engine/records/field_codec.h"
#include "engine/records/record_util.h"

namespace archil::engine {

namespace {

// The bodies of formats.md §4.2-4.3 and §4.7 (after the 12-byte envelope), one line per field.
// clang-format off

// Then, for a symlink only, its target (u16 length + bytes).
constexpr auto kInodeBodyLayout = Layout<InodeRecord>(
    Field(&InodeRecord::mode),
    Field(&InodeRecord::uid),
    Field(&InodeRecord::gid),
    Field(&InodeRecord::nlink),
    Field(&InodeRecord::flags),
    Field(&InodeRecord::size),
    Field(&InodeRecord::atime),
    Field(&InodeRecord::mtime),
    Field(&InodeRecord::ctime),
    Field(&InodeRecord::btime),
    Field(&InodeRecord::change),
    Field(&InodeRecord::parent),
    Field(&InodeRecord::blocks),
    Field(&InodeRecord::rdev),
    Field(&InodeRecord::tgen));
static_assert(kEnvelopeSize + kInodeBodyLayout.size() == kInodeValueSize);

constexpr auto kBackrefBodyLayout = Layout<BackrefRecord>(Field(&BackrefRecord::links));

constexpr auto kTruncateBodyLayout = Layout<TruncateRecord>(Field(&TruncateRecord::size));

constexpr auto kDentryBodyLayout = Layout<DentryRecord>(
    Field(&DentryRecord::ino),
    Field(&DentryRecord::dtype));
// clang-format on

// Decodes the envelope into a Versioned<T> with an empty body; `*body` is what follows it.
template <typename T>
Result<Versioned<T>> Open(std::string_view cf, std::string_view v, std::string_view* body) {
  ARCHIL_ASSIGN_OR_RETURN(Envelope env, DecodeEnvelope(cf, v, body));
  return Versioned<T>{env, T{}};
}

std::string Start(const Envelope& env) {
  std::string v;
  PutEnvelope(&v, env);
  return v;
}

// A value whose body is exactly `layout`: the envelope, then the body unless a WHITEOUT.
template <typename T, typename BodyLayout>
std::string EncodeFixedBody(const Envelope& env, const BodyLayout& layout, const T& r) {
  std::string v = Start(env);
  if (env.kind == ValueKind::kValue) layout.Put(&v, r);
  return v;
}

template <typename T, typename BodyLayout>
Result<Versioned<T>> DecodeFixedBody(std::string_view cf, std::string_view record,
                                     const BodyLayout& layout, std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Versioned<T> out, Open<T>(cf, v, &body));
  if (out.env.kind == ValueKind::kWhiteout) return out;
  const size_t want = kEnvelopeSize + layout.size();
  if (v.size() != want) return BadLength(record, v.size(), std::to_string(want));
  ARCHIL_RETURN_IF_ERROR(layout.Get(record, body, &out.body));
  return out;
}

}  // namespace

bool IsSymlinkMode(uint32_t mode) { return (mode & S_IFMT) == S_IFLNK; }

// ---- inode ----

std::string EncodeInode(const Envelope& env, const InodeRecord& r) {
  std::string v = Start(env);
  if (env.kind == ValueKind::kWhiteout) return v;
  kInodeBodyLayout.Put(&v, r);
  if (IsSymlinkMode(r.mode)) PutString16(&v, r.symlink_target);
  return v;
}

Result<Versioned<InodeRecord>> DecodeInode(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Versioned<InodeRecord> out, Open<InodeRecord>("inode", v, &body));
  if (out.env.kind == ValueKind::kWhiteout) return out;
  if (v.size() < kInodeValueSize) return BadLength("inode", v.size(), "104 (+ 2 + target)");
  InodeRecord& r = out.body;
  ARCHIL_RETURN_IF_ERROR(kInodeBodyLayout.Get("inode", body, &r));
  if (IsSymlinkMode(r.mode)) {
    ARCHIL_RETURN_IF_ERROR(TailString("inode (symlink)", v, kInodeValueSize, &r.symlink_target));
    if (r.symlink_target.size() > kMaxSymlinkTarget) {
      return Status::Corruption("inode record: symlink target of " +
                                std::to_string(r.symlink_target.size()) + " bytes");
    }
  } else if (v.size() != kInodeValueSize) {
    return BadLength("inode", v.size(), "104 (not a symlink)");
  }
  return out;
}

// ---- back-reference ----

std::string EncodeBackref(const Envelope& env, const BackrefRecord& r) {
  return EncodeFixedBody(env, kBackrefBodyLayout, r);
}

Result<Versioned<BackrefRecord>> DecodeBackref(std::string_view v) {
  return DecodeFixedBody<BackrefRecord>("inode", "back-reference", kBackrefBodyLayout, v);
}

// ---- truncate record ----

std::string EncodeTruncate(const Envelope& env, const TruncateRecord& r) {
  return EncodeFixedBody(env, kTruncateBodyLayout, r);
}

Result<Versioned<TruncateRecord>> DecodeTruncate(std::string_view v) {
  return DecodeFixedBody<TruncateRecord>("inode", "truncate", kTruncateBodyLayout, v);
}

// ---- dentry ----

std::string EncodeDentry(const Envelope& env, const DentryRecord& r) {
  return EncodeFixedBody(env, kDentryBodyLayout, r);
}

Result<Versioned<DentryRecord>> DecodeDentry(std::string_view v) {
  return DecodeFixedBody<DentryRecord>("dentry", "dentry", kDentryBodyLayout, v);
}

// ---- xattr: the body is the raw value, no fields to declare ----

std::string EncodeXattr(const Envelope& env, const XattrRecord& r) {
  std::string v = Start(env);
  if (env.kind == ValueKind::kValue) v.append(r.value);
  return v;
}

Result<Versioned<XattrRecord>> DecodeXattr(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Versioned<XattrRecord> out, Open<XattrRecord>("xattr", v, &body));
  if (out.env.kind == ValueKind::kWhiteout) return out;
  if (body.size() > kMaxXattrValue) return BadLength("xattr", v.size(), "at most 12 + 65536");
  out.body.value.assign(body);
  return out;
}

}  // namespace archil::engine
