#include "mount_diff/lockstep.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <tuple>
#include <utility>

#include "mount_diff/trees.h"

namespace archil::testing::mount_diff {

void Prepare(const std::string& top) {
  const std::string root = top + "/r";
  auto ok = [&](int rc, const std::string& what) {
    if (rc != 0) ADD_FAILURE() << "prepare " << root << ": " << what << ": " << Err(errno);
  };
  ok(mkdir(top.c_str(), 0755), "mkdir top");
  ok(mkdir(root.c_str(), 0777), "mkdir");
  ok(chmod(root.c_str(), 0777), "chmod");
  ok(mkdir((root + "/a").c_str(), 0755), "mkdir a");
  ok(chmod((root + "/a").c_str(), 01777), "chmod a");
  ok(mkdir((root + "/b").c_str(), 0755), "mkdir b");
  ok(chown((root + "/b").c_str(), 1000, 1000), "chown b");
  ok(mkdir((root + "/a/c").c_str(), 0777), "mkdir a/c");
  ok(chown((root + "/a/c").c_str(), 1001, 1001), "chown a/c");
  for (auto [name, size, uid] :
       {std::tuple{"f", 10000, 0}, std::tuple{"a/g", 5000, 1000}, std::tuple{"b/b", 70000, 1000}}) {
    std::string p = root + "/" + name;
    int fd = open(p.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0664);
    ok(fd < 0 ? -1 : 0, std::string("create ") + name);
    std::string data(size_t(size), '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = char('a' + (i * 7 + size_t(size)) % 26);
    ok(write(fd, data.data(), data.size()) == ssize_t(data.size()) ? 0 : -1, "write");
    ok(close(fd), "close");
    ok(chown(p.c_str(), uid_t(uid), gid_t(uid)), "chown");
  }
  ok(symlink("../f", (root + "/b/f").c_str()), "symlink");
  ok(link((root + "/f").c_str(), (root + "/a/c/f").c_str()), "link");
  ok(setxattr((root + "/f").c_str(), "user.a", "va", 2, 0), "setxattr");
}

Lockstep::Lockstep(uint64_t replay_seed, uint64_t seed, std::string label, std::string mount_top,
                   std::string local_top, bool a_is_mount)
    : seed_(replay_seed),
      label_(std::move(label)),
      rng_(seed),
      top_a_(std::move(mount_top)),
      top_b_(std::move(local_top)) {
  a_.name = "mount";
  a_.root = top_a_ + "/r";
  a_.mount = a_is_mount;
  b_.name = "ext4";
  b_.root = top_b_ + "/r";
}

Lockstep::~Lockstep() { (void)CloseAll(); }

std::optional<std::string> Lockstep::Run(int n) {
  for (int end = next_ + n; next_ < end; ++next_) {
    const int i = next_;
    Op op = Gen(rng_, a_, b_);
    NoteTouched(op, &touched_);
    Outcome oa = Apply(a_, op);
    Outcome ob = Apply(b_, op);
    NoteRootWrite(op);
    SettleSetidBits(op);
    if (oa.text != ob.text && oa.data == ob.data) ReconcileKilledBits(op, oa, &ob);
    if (oa.text != ob.text) ReconcileShortDirectRead(op, &oa, ob);
    std::string line = "#" + std::to_string(i) + " " + Describe(op) + " -> " + oa.text;
    if (oa.text != ob.text || oa.data != ob.data) {
      std::string m = SeedText(seed_) + " " + label_ + ": op #" + std::to_string(i) +
                      " differs: " + Describe(op) + "\n  mount: " + oa.text +
                      "\n  ext4:  " + ob.text;
      if (oa.data != ob.data) m += "\n  data:  " + FirstDifference(oa.data, ob.data);
      m += "\n  the ops before it:";
      for (const std::string& r : recent_) m += "\n    " + r;
      return m;
    }
    if (trace_) std::fprintf(stderr, "%s %s\n", label_.c_str(), line.c_str());
    recent_.push_back(line);
    if (recent_.size() > 40) recent_.pop_front();
    ++counts_[op.as ? kAsUser : op.kind];
    if (oa.text.rfind("ok", 0) == 0 || oa.text.rfind("mapped", 0) == 0 ||
        oa.text.rfind("unlink ok", 0) == 0 || oa.text.rfind("close=ok; ok", 0) == 0) {
      ++succeeded_;
      ++ok_[op.as ? kAsUser : op.kind];
    }
  }
  return std::nullopt;
}

void Lockstep::ReconcileTrees() { ReconcileTree(top_a_, top_b_); }

std::optional<std::string> Lockstep::CloseAll() {
  std::optional<std::string> diff;
  for (int i = 0; i < kSlots; ++i) {
    std::string ta = a_.slots[i].fd >= 0 ? Rc(close(a_.slots[i].fd)) : "-";
    std::string tb = b_.slots[i].fd >= 0 ? Rc(close(b_.slots[i].fd)) : "-";
    a_.slots[i].fd = b_.slots[i].fd = -1;
    if (ta != tb && !diff) {
      diff = SeedText(seed_) + " " + label_ + ": close of slot " + std::to_string(i) + ": mount " +
             ta + ", ext4 " + tb;
    }
  }
  return diff;
}

std::string Lockstep::Counts() const {
  std::string s = std::to_string(succeeded_) + " succeeded;";
  for (int k = 0; k < kKinds; ++k) {
    if (counts_[k])
      s += std::string(" ") + kKindNames[k] + "=" + std::to_string(ok_[k]) + "/" +
           std::to_string(counts_[k]);
  }
  return s;
}

ino_t Lockstep::SlotIno(int slot) const {
  struct stat st {};
  return b_.slots[slot].fd >= 0 && fstat(b_.slots[slot].fd, &st) == 0 ? st.st_ino : 0;
}

void Lockstep::NoteRootWrite(const Op& op) {
  if (op.as != 0) return;  // other writers lose their set-ID bits on both sides
  switch (op.kind) {
    case kPwrite:
    case kWrite:
    case kMmapWrite:
    case kOrphan:
      if (ino_t ino = SlotIno(op.slot)) root_written_.insert(ino);
      break;
    default:
      break;
  }
}

void Lockstep::SettleSetidBits(const Op& op) {
  if (op.as != 0 && op.kind != kChmod) return;  // an owner's chmod may set the bits too
  int fa = -1, fb = -1;
  bool opened = false;
  switch (op.kind) {
    case kPwrite:
    case kWrite:
    case kMmapWrite:
    case kOrphan:
    case kFchmod:
      fa = a_.slots[op.slot].fd;
      fb = b_.slots[op.slot].fd;
      break;
    case kChmod:
      fa = open(a_.P(op.p1).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      fb = open(b_.P(op.p1).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      opened = true;
      break;
    default:
      return;
  }
  struct stat sb {};
  struct statx sx {};
  if (fa >= 0 && fb >= 0 && fstat(fb, &sb) == 0 && S_ISREG(sb.st_mode) &&
      (sb.st_mode & (S_ISUID | S_ISGID)) && fsync(fa) == 0 &&
      statx(fa, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_MODE, &sx) == 0 &&
      KilledBits(sb, (sb.st_mode & S_IFMT) | (sx.stx_mode & 07777))) {
    fchmod(fb, sx.stx_mode & 07777);
  }
  if (opened) {
    if (fa >= 0) close(fa);
    if (fb >= 0) close(fb);
  }
}

bool Lockstep::KilledBits(const struct stat& sb, mode_t ma) const {
  const mode_t mb = sb.st_mode;
  mode_t killed = mb & ~mode_t{S_ISUID};
  if (mb & S_IXGRP) killed &= ~mode_t{S_ISGID};
  return S_ISREG(mb) && ma != mb && ma == killed && root_written_.count(sb.st_ino) &&
         Allowed("killpriv_root");
}

mode_t Lockstep::ModeIn(const std::string& text) {
  size_t at = text.find("mode=");
  return at == std::string::npos ? 0 : mode_t(std::strtoul(text.c_str() + at + 5, nullptr, 8));
}

void Lockstep::ReconcileShortDirectRead(const Op& op, Outcome* oa, const Outcome& ob) {
  if (op.as != 0 || (op.kind != kPread && op.kind != kRead && op.kind != kOrphan)) return;
  if (!DirectIo(a_.slots[op.slot].flags) || oa->data.size() >= ob.data.size() ||
      ob.data.compare(0, oa->data.size(), oa->data) != 0 ||
      ob.data.find_first_not_of('\0', oa->data.size()) != std::string::npos) {
    return;
  }
  // The results with the mount's read count replaced by ext4's must be equal.
  auto count = [](size_t n) {
    return n == 0 ? std::string("ok;") : "ok " + std::to_string(n) + ";";
  };
  std::string fixed = oa->text + ";";
  const std::string ra = count(oa->data.size()), rb = count(ob.data.size());
  size_t at = op.kind == kOrphan ? fixed.find("; pread " + ra) : 0;
  if (at == std::string::npos) return;
  if (op.kind == kOrphan) at += 8;
  if (fixed.compare(at, ra.size(), ra) != 0) return;
  fixed.replace(at, ra.size(), rb);
  fixed.pop_back();
  if (fixed != ob.text || !Allowed("odirect_short_read")) return;
  if (op.kind == kRead) {
    lseek(a_.slots[op.slot].fd, off_t(ob.data.size() - oa->data.size()), SEEK_CUR);
  }
  *oa = ob;
}

void Lockstep::ReconcileKilledBits(const Op& op, const Outcome& oa, Outcome* ob) {
  if (op.as != 0 || (op.kind != kStat && op.kind != kFstat && op.kind != kOrphan)) return;
  const mode_t ma = ModeIn(oa.text), mb = ModeIn(ob->text);
  std::string fixed = ob->text;
  size_t at = fixed.find("mode=");
  if (at == std::string::npos || ma == mb) return;
  fixed.replace(at, 5 + Oct(mb).size(), "mode=" + Oct(ma));
  if (fixed != oa.text) return;
  struct stat sb {};
  const int fd = op.kind == kStat ? -1 : b_.slots[op.slot].fd;
  if (fd >= 0 ? fstat(fd, &sb) != 0 : stat(b_.P(op.p1).c_str(), &sb) != 0) return;
  struct stat seen = sb;  // what ext4 reported (SettleSetidBits may have changed it since)
  seen.st_mode = mb;
  if (!KilledBits(seen, ma)) return;
  if (sb.st_mode != ma &&
      (fd >= 0 ? fchmod(fd, ma & 07777) : chmod(b_.P(op.p1).c_str(), ma & 07777)) != 0) {
    return;
  }
  ob->text = fixed;
}

void Lockstep::ReconcileTree(const std::string& pa, const std::string& pb) {
  struct stat sa {};
  struct stat sb {};
  if (lstat(pa.c_str(), &sa) != 0 || lstat(pb.c_str(), &sb) != 0) return;
  if (S_ISREG(sa.st_mode) && KilledBits(sb, sa.st_mode)) chmod(pb.c_str(), sa.st_mode & 07777);
  if (!S_ISDIR(sa.st_mode) || !S_ISDIR(sb.st_mode)) return;
  std::string err;
  for (const std::string& n : Names(pa, &err)) ReconcileTree(pa + "/" + n, pb + "/" + n);
}

}  // namespace archil::testing::mount_diff
