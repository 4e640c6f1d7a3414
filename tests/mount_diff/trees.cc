#include "mount_diff/trees.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <utility>

namespace archil::testing::mount_diff {
namespace {

std::string XattrText(const std::string& path) {
  std::string list(65536, '\0');
  long n = llistxattr(path.c_str(), list.data(), list.size());
  if (n < 0) return "listxattr " + Err(errno);
  std::string names = UserXattrs(list.substr(0, static_cast<size_t>(n)));
  std::string t;
  size_t i = 0;
  while (i < names.size()) {
    size_t j = names.find(' ', i + 1);
    if (j == std::string::npos) j = names.size();
    std::string name = names.substr(i + 1, j - i - 1);
    std::string v(65536, '\0');
    long vn = lgetxattr(path.c_str(), name.c_str(), v.data(), v.size());
    t += " " + name + "=" + (vn < 0 ? Err(errno) : std::to_string(Fnv(v.substr(0, size_t(vn)))));
    i = j;
  }
  return t;
}

// Reads [off, off+len) of `fd` (short at EOF).
std::string ReadRange(int fd, uint64_t off, uint64_t len) {
  std::string s(len, '\0');
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, s.data() + done, len - done, static_cast<off_t>(off + done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  s.resize(done);
  return s;
}

// Compares the contents of two regular files of `size` bytes. Up to 64 MiB: every byte. Beyond:
// the data extents ext4 reports (SEEK_DATA/SEEK_HOLE on `b`) byte for byte, and in ext4's holes
// the mount must read zeros at each hole's ends, at a few spots, and at every block any op touched.
std::optional<std::string> CompareContents(const std::string& pa, const std::string& pb,
                                           uint64_t size, const std::set<uint64_t>& touched) {
  int fa = open(pa.c_str(), O_RDONLY | O_CLOEXEC);
  int fb = open(pb.c_str(), O_RDONLY | O_CLOEXEC);
  std::optional<std::string> diff;
  auto done = [&] {
    if (fa >= 0) close(fa);
    if (fb >= 0) close(fb);
    return diff;
  };
  if (fa < 0 || fb < 0) {
    diff = "open for reading: mount " + std::string(fa < 0 ? Err(errno) : "ok");
    return done();
  }
  constexpr uint64_t kChunk = 1 << 20;
  auto compare = [&](uint64_t off, uint64_t len) {
    for (uint64_t o = off; o < off + len && !diff; o += kChunk) {
      uint64_t n = std::min(kChunk, off + len - o);
      std::string a = ReadRange(fa, o, n), b = ReadRange(fb, o, n);
      if (a != b) diff = "contents at " + std::to_string(o) + ": " + FirstDifference(a, b);
    }
  };
  if (size <= (64u << 20)) {
    compare(0, size);
    return done();
  }
  std::vector<std::pair<uint64_t, uint64_t>> data;  // ext4's extents
  for (off_t o = 0; o < static_cast<off_t>(size);) {
    off_t d = lseek(fb, o, SEEK_DATA);
    if (d < 0) break;
    off_t h = lseek(fb, d, SEEK_HOLE);
    if (h < 0) h = static_cast<off_t>(size);
    data.emplace_back(d, h);
    o = h;
  }
  uint64_t pos = 0;
  auto zeros = [&](uint64_t from, uint64_t to) {  // the mount must read zeros in [from, to)
    std::set<uint64_t> spots = {from, to - std::min<uint64_t>(to - from, 4096), (from + to) / 2,
                                from + (to - from) / 3};
    for (auto it = touched.lower_bound(from / 4096); it != touched.end() && *it * 4096 < to; ++it) {
      spots.insert(std::max(from, *it * 4096));
    }
    for (uint64_t o : spots) {
      if (diff) break;
      uint64_t n = std::min<uint64_t>(4096, to - o);
      std::string a = ReadRange(fa, o, n);
      if (a != std::string(n, '\0')) {
        diff = "contents at " + std::to_string(o) +
               " (a hole on ext4): " + FirstDifference(a, std::string(n, '\0'));
      }
    }
  };
  for (auto [d, h] : data) {
    if (d > pos) zeros(pos, d);
    compare(d, std::min<uint64_t>(h, size) - d);
    pos = h;
  }
  if (pos < size) zeros(pos, size);
  return done();
}

}  // namespace

std::vector<std::string> Names(const std::string& dir, std::string* err) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    *err = "opendir " + dir + ": " + Err(errno);
    return names;
  }
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// The block offsets an op may have touched (for sampling holes of huge files at the end).
void NoteTouched(const Op& op, std::set<uint64_t>* touched) {
  auto note = [&](uint64_t off, uint64_t len) {
    touched->insert(off / 4096);
    if (len > 0) touched->insert((off + len - 1) / 4096);
    touched->insert((off + len) / 4096);
  };
  switch (op.kind) {
    case kPwrite:
    case kMmapWrite:
    case kOrphan:
      note(op.off, op.data.size());
      break;
    case kFallocate:
      note(op.off, op.len);
      break;
    case kFtruncate:
    case kTruncate:
      note(op.len, 0);
      break;
    default:
      break;
  }
}

// Compares the trees under `a` (the mount) and `b` (ext4), the roots included.
std::optional<std::string> CompareTrees(const std::string& a, const std::string& b,
                                        const std::set<uint64_t>& touched) {
  std::map<uint64_t, std::string> links_a, links_b;  // st_ino → first name (hard links)
  std::vector<std::string> todo = {""};
  int entries = 0;
  while (!todo.empty()) {
    std::string rel = todo.back();
    todo.pop_back();
    const std::string pa = rel.empty() ? a : a + "/" + rel, pb = rel.empty() ? b : b + "/" + rel;
    const std::string shown = rel.empty() ? "." : rel;
    struct stat sa {};
    struct stat sb {};
    if (lstat(pa.c_str(), &sa) != 0) return "lstat " + shown + " on the mount: " + Err(errno);
    if (lstat(pb.c_str(), &sb) != 0) return "lstat " + shown + " on ext4: " + Err(errno);
    ++entries;
    std::string ta = StatText(sa), tb = StatText(sb);
    Allowed("ino_dev");
    if (!S_ISDIR(sa.st_mode)) {
      auto [ia, new_a] = links_a.emplace(sa.st_ino, shown);
      auto [ib, new_b] = links_b.emplace(sb.st_ino, shown);
      if (!new_a) ta += " hard link of " + ia->second;
      if (!new_b) tb += " hard link of " + ib->second;
    }
    if (S_ISLNK(sa.st_mode) && S_ISLNK(sb.st_mode)) {
      char la[4096], lb[4096];
      ssize_t na = readlink(pa.c_str(), la, sizeof(la)), nb = readlink(pb.c_str(), lb, sizeof(lb));
      ta += " -> " + (na < 0 ? Err(errno) : std::string(la, size_t(na)));
      tb += " -> " + (nb < 0 ? Err(errno) : std::string(lb, size_t(nb)));
    }
    ta += XattrText(pa);
    tb += XattrText(pb);
    if (ta != tb) return shown + ":\n    mount: " + ta + "\n    ext4:  " + tb;
    if (S_ISREG(sa.st_mode) && links_a[sa.st_ino] == shown) {
      if (auto d = CompareContents(pa, pb, static_cast<uint64_t>(sa.st_size), touched)) {
        return shown + ": " + *d;
      }
    }
    if (S_ISDIR(sa.st_mode)) {
      std::string err;
      std::vector<std::string> na = Names(pa, &err), nb = Names(pb, &err);
      if (!err.empty()) return err;
      if (na != nb) {
        std::string la, lb;
        for (auto& n : na) la += " " + n;
        for (auto& n : nb) lb += " " + n;
        return shown + "/ lists:\n    mount:" + la + "\n    ext4: " + lb;
      }
      for (auto it = na.rbegin(); it != na.rend(); ++it) {
        todo.push_back(rel.empty() ? *it : rel + "/" + *it);
      }
    }
  }
  std::printf("  trees equal: %d entries\n", entries);
  std::fflush(stdout);
  return std::nullopt;
}

}  // namespace archil::testing::mount_diff
