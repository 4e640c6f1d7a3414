#include "engine/space/segment_files.h"

#include <cerrno>
#include <cstdio>
#include <set>

#include "base/log.h"

namespace archil::engine {
namespace {

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

Status SegmentFiles::RemoveUnlisted(DiskNo disk, const std::vector<SegNo>& keep) {
  Result<std::vector<std::string>> names = env_->ListDir(DiskDir(disk));
  if (!names.ok()) return names.status().sys_errno() == ENOENT ? Status::Ok() : names.status();
  std::set<uint64_t> kept;
  for (SegNo s : keep) kept.insert(s.value());
  for (const std::string& name : *names) {
    if (name.size() != 16 || name.find_first_not_of("0123456789abcdef") != std::string::npos) {
      continue;
    }
    SegNo seg(std::stoull(name, nullptr, 16));
    if (kept.count(seg.value())) continue;
    ARCHIL_LOG(kInfo) << "engine: removing unreferenced segment " << Path(disk, seg);
    ARCHIL_RETURN_IF_ERROR(Remove(disk, seg));
  }
  return Status::Ok();
}

std::string SegmentFiles::DiskDir(DiskNo disk) const { return dir_ + "/" + Hex16(disk.value()); }

std::string SegmentFiles::Path(DiskNo disk, SegNo seg) const {
  return DiskDir(disk) + "/" + Hex16(seg.value());
}

Status SegmentFiles::Create(DiskNo disk, SegNo seg) {
  std::string ddir = DiskDir(disk);
  Status made = env_->CreateDir(ddir);
  if (made.ok()) {
    ARCHIL_RETURN_IF_ERROR(env_->SyncDir(dir_));
  } else if (made.sys_errno() != EEXIST) {
    return made;
  }
  io::OpenOptions o;
  o.create = true;
  o.exclusive = true;
  o.mode = 0600;
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<io::File> f, env_->OpenFile(Path(disk, seg), o));
  ARCHIL_RETURN_IF_ERROR(env_->SyncDir(ddir));
  MutexLock lock(&mu_);
  files_[{disk.value(), seg.value()}] = std::move(f);
  return Status::Ok();
}

Result<std::shared_ptr<io::File>> SegmentFiles::Handle(DiskNo disk, SegNo seg) {
  MutexLock lock(&mu_);
  auto key = std::make_pair(disk.value(), seg.value());
  auto it = files_.find(key);
  if (it != files_.end()) return it->second;
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<io::File> f, env_->OpenFile(Path(disk, seg), {}));
  std::shared_ptr<io::File> shared = std::move(f);
  files_[key] = shared;
  return shared;
}

Status SegmentFiles::Write(DiskNo disk, SegNo seg, uint32_t blk, std::string_view data) {
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<io::File> f, Handle(disk, seg));
  return f->Pwrite(uint64_t{blk} * kBlockSize, data);
}

void SegmentFiles::StartWriteback(DiskNo disk, SegNo seg, uint32_t blk, uint32_t nblk) {
  Result<std::shared_ptr<io::File>> f = Handle(disk, seg);
  if (f.ok()) (*f)->StartWriteback(uint64_t{blk} * kBlockSize, uint64_t{nblk} * kBlockSize);
}

Status SegmentFiles::Sync(DiskNo disk, SegNo seg) {
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<io::File> f, Handle(disk, seg));
  return f->Sync();
}

Result<std::string> SegmentFiles::Read(DiskNo disk, SegNo seg, uint32_t blk, uint32_t nblk) {
  std::string out(size_t{nblk} * kBlockSize, '\0');
  ARCHIL_RETURN_IF_ERROR(ReadInto(disk, seg, blk, nblk, out.data()));
  return out;
}

Status SegmentFiles::ReadInto(DiskNo disk, SegNo seg, uint32_t blk, uint32_t nblk, char* out) {
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<io::File> f, Handle(disk, seg));
  const size_t want = size_t{nblk} * kBlockSize;
  ARCHIL_ASSIGN_OR_RETURN(size_t n, f->Pread(uint64_t{blk} * kBlockSize, want, out));
  if (n != want) {
    return Status::Corruption("segment " + Path(disk, seg) + " ends before block " +
                              std::to_string(blk + nblk));
  }
  return Status::Ok();
}

Status SegmentFiles::Remove(DiskNo disk, SegNo seg) {
  {
    MutexLock lock(&mu_);
    files_.erase({disk.value(), seg.value()});
  }
  Status s = env_->Unlink(Path(disk, seg));
  if (!s.ok() && s.sys_errno() != ENOENT) return s;
  return env_->SyncDir(DiskDir(disk));
}

Status SegmentFiles::Empty(DiskNo disk, SegNo seg) {
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<io::File> f, Handle(disk, seg));
  return f->Truncate(0);
}

Status SegmentFiles::RemoveDisk(DiskNo disk) {
  {
    MutexLock lock(&mu_);
    for (auto it = files_.begin(); it != files_.end();) {
      it = it->first.first == disk.value() ? files_.erase(it) : std::next(it);
    }
  }
  std::string ddir = DiskDir(disk);
  Result<std::vector<std::string>> names = env_->ListDir(ddir);
  if (!names.ok()) return names.status().sys_errno() == ENOENT ? Status::Ok() : names.status();
  for (const std::string& name : *names) {
    Status s = env_->Unlink(ddir + "/" + name);
    if (!s.ok() && s.sys_errno() != ENOENT) return s;
  }
  ARCHIL_RETURN_IF_ERROR(env_->RemoveDir(ddir));
  return env_->SyncDir(dir_);
}

void SegmentFiles::CloseAll() {
  MutexLock lock(&mu_);
  files_.clear();
}

}  // namespace archil::engine
