#include "server/attr_convert.h"

namespace archil::server {

namespace {

// FUSE_SET_ATTR_* bits (protocol.md §5.3).
constexpr uint32_t kMode = 1, kUid = 2, kGid = 4, kSize = 8, kAtime = 16, kMtime = 32,
                   kAtimeNow = 128, kMtimeNow = 256;

}  // namespace

void ToProto(const posix::Attr& a, v1::Attr* out) {
  out->set_ino(a.ino.value());
  out->set_mode(a.mode);
  out->set_nlink(a.nlink);
  out->set_uid(a.uid);
  out->set_gid(a.gid);
  out->set_size(a.size);
  out->set_blocks(a.blocks);
  out->set_rdev(a.rdev);
  out->set_atime_ns(a.atime.nanos());
  out->set_mtime_ns(a.mtime.nanos());
  out->set_ctime_ns(a.ctime.nanos());
  out->set_btime_ns(a.btime.nanos());
}

posix::SetAttrRequest FromProto(const v1::SetAttr& m) {
  posix::SetAttrRequest r;
  const uint32_t v = m.valid();
  if (v & kMode) r.mode = m.mode() & 07777;
  if (v & kUid) r.uid = m.uid();
  if (v & kGid) r.gid = m.gid();
  if (v & kSize) r.size = m.size();
  if (v & kAtimeNow) {
    r.atime = posix::TimeUpdate::Now();
  } else if (v & kAtime) {
    r.atime = posix::TimeUpdate::At(posix::Timespec::FromNanos(m.atime_ns()));
  }
  if (v & kMtimeNow) {
    r.mtime = posix::TimeUpdate::Now();
  } else if (v & kMtime) {
    r.mtime = posix::TimeUpdate::At(posix::Timespec::FromNanos(m.mtime_ns()));
  }
  return r;
}

posix::AttrPut FromProto(const v1::AttrPut& m) {
  posix::AttrPut p;
  p.ino = posix::Ino(m.ino());
  const uint32_t v = m.valid();
  if (v & kMode) p.mode = m.mode() & 07777;
  if (v & kUid) p.uid = m.uid();
  if (v & kGid) p.gid = m.gid();
  if (v & kAtime) p.atime = posix::Timespec::FromNanos(m.atime_ns());
  if (v & kMtime) p.mtime = posix::Timespec::FromNanos(m.mtime_ns());
  p.ctime = posix::Timespec::FromNanos(m.ctime_ns());
  return p;
}

}  // namespace archil::server
