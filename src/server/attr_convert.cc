#include "server/attr_convert.h"

#include "proto/setattr_bits.h"

namespace archil::server {

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
  if (v & proto::kSetMode) r.mode = m.mode() & 07777;
  if (v & proto::kSetUid) r.uid = m.uid();
  if (v & proto::kSetGid) r.gid = m.gid();
  if (v & proto::kSetSize) r.size = m.size();
  if (v & proto::kSetAtimeNow) {
    r.atime = posix::TimeUpdate::Now();
  } else if (v & proto::kSetAtime) {
    r.atime = posix::TimeUpdate::At(posix::Timespec::FromNanos(m.atime_ns()));
  }
  if (v & proto::kSetMtimeNow) {
    r.mtime = posix::TimeUpdate::Now();
  } else if (v & proto::kSetMtime) {
    r.mtime = posix::TimeUpdate::At(posix::Timespec::FromNanos(m.mtime_ns()));
  }
  return r;
}

posix::AttrPut FromProto(const v1::AttrPut& m) {
  posix::AttrPut p;
  p.ino = posix::Ino(m.ino());
  const uint32_t v = m.valid();
  if (v & proto::kSetMode) p.mode = m.mode() & 07777;
  if (v & proto::kSetUid) p.uid = m.uid();
  if (v & proto::kSetGid) p.gid = m.gid();
  if (v & proto::kSetAtime) p.atime = posix::Timespec::FromNanos(m.atime_ns());
  if (v & proto::kSetMtime) p.mtime = posix::Timespec::FromNanos(m.mtime_ns());
  p.ctime = posix::Timespec::FromNanos(m.ctime_ns());
  return p;
}

}  // namespace archil::server
