#include "engine/records/fs_records.h"

#include <sys/stat.h>

#include "engine/records/record_util.h"

namespace archil::engine {

namespace {

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

}  // namespace

bool IsSymlinkMode(uint32_t mode) { return (mode & S_IFMT) == S_IFLNK; }

// ---- inode ----

std::string EncodeInode(const Envelope& env, const InodeRecord& r) {
  std::string v = Start(env);
  if (env.kind == ValueKind::kWhiteout) return v;
  PutFixed32LE(&v, r.mode);
  PutFixed32LE(&v, r.uid);
  PutFixed32LE(&v, r.gid);
  PutFixed32LE(&v, r.nlink);
  PutFixed32LE(&v, r.flags);
  PutFixed64LE(&v, r.size);
  PutI64(&v, r.atime);
  PutI64(&v, r.mtime);
  PutI64(&v, r.ctime);
  PutI64(&v, r.btime);
  PutFixed64LE(&v, r.change);
  PutFixed64LE(&v, r.parent.value());
  PutFixed64LE(&v, r.blocks);
  PutFixed32LE(&v, r.rdev);
  PutFixed32LE(&v, r.tgen);
  if (IsSymlinkMode(r.mode)) PutString16(&v, r.symlink_target);
  return v;
}

Result<Versioned<InodeRecord>> DecodeInode(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Versioned<InodeRecord> out, Open<InodeRecord>("inode", v, &body));
  if (out.env.kind == ValueKind::kWhiteout) return out;
  if (v.size() < kInodeValueSize) return BadLength("inode", v.size(), "104 (+ 2 + target)");
  InodeRecord& r = out.body;
  r.mode = U32(v, 12);
  r.uid = U32(v, 16);
  r.gid = U32(v, 20);
  r.nlink = U32(v, 24);
  r.flags = U32(v, 28);
  r.size = U64(v, 32);
  r.atime = I64(v, 40);
  r.mtime = I64(v, 48);
  r.ctime = I64(v, 56);
  r.btime = I64(v, 64);
  r.change = U64(v, 72);
  r.parent = Ino(U64(v, 80));
  r.blocks = U64(v, 88);
  r.rdev = U32(v, 96);
  r.tgen = U32(v, 100);
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
  std::string v = Start(env);
  if (env.kind == ValueKind::kValue) PutFixed32LE(&v, r.links);
  return v;
}

Result<Versioned<BackrefRecord>> DecodeBackref(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Versioned<BackrefRecord> out, Open<BackrefRecord>("inode", v, &body));
  if (out.env.kind == ValueKind::kWhiteout) return out;
  if (v.size() != 16) return BadLength("back-reference", v.size(), "16");
  out.body.links = U32(v, 12);
  return out;
}

// ---- truncate record ----

std::string EncodeTruncate(const Envelope& env, const TruncateRecord& r) {
  std::string v = Start(env);
  if (env.kind == ValueKind::kValue) PutFixed64LE(&v, r.size);
  return v;
}

Result<Versioned<TruncateRecord>> DecodeTruncate(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Versioned<TruncateRecord> out, Open<TruncateRecord>("inode", v, &body));
  if (out.env.kind == ValueKind::kWhiteout) return out;
  if (v.size() != 20) return BadLength("truncate", v.size(), "20");
  out.body.size = U64(v, 12);
  return out;
}

// ---- dentry ----

std::string EncodeDentry(const Envelope& env, const DentryRecord& r) {
  std::string v = Start(env);
  if (env.kind == ValueKind::kWhiteout) return v;
  PutFixed64LE(&v, r.ino.value());
  v.push_back(static_cast<char>(r.dtype));
  return v;
}

Result<Versioned<DentryRecord>> DecodeDentry(std::string_view v) {
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Versioned<DentryRecord> out, Open<DentryRecord>("dentry", v, &body));
  if (out.env.kind == ValueKind::kWhiteout) return out;
  if (v.size() != 21) return BadLength("dentry", v.size(), "21");
  out.body.ino = Ino(U64(v, 12));
  out.body.dtype = U8(v, 20);
  return out;
}

// ---- xattr ----

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
