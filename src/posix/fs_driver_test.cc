#include "posix/fs_driver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>

#include "posix/model_fs.h"

namespace archil::posix {
namespace {

uint64_t TestSeed(uint64_t fallback) {
  const char* env = std::getenv("ARCHIL_TEST_SEED");
  return env && *env ? std::strtoull(env, nullptr, 10) : fallback;
}

// A file system that forgets to shrink files: the comparison must catch it.
class ForgetsTruncate final : public FileSystem {
 public:
  explicit ForgetsTruncate(FileSystem* inner) : in_(inner) {}
  Result<Attr> SetAttr(Ino ino, const SetAttrRequest& r) override {
    SetAttrRequest copy = r;
    Result<Attr> now = in_->GetAttr(ino);
    if (copy.size && now.ok() && *copy.size < now->size) copy.size.reset();
    return in_->SetAttr(ino, copy);
  }
  Result<Attr> Lookup(Ino p, std::string_view n) override { return in_->Lookup(p, n); }
  Result<Attr> GetAttr(Ino i) override { return in_->GetAttr(i); }
  Result<Attr> Mknod(Ino p, std::string_view n, uint32_t m, uint32_t r, Owner o) override {
    return in_->Mknod(p, n, m, r, o);
  }
  Result<Attr> Mkdir(Ino p, std::string_view n, uint32_t m, Owner o) override {
    return in_->Mkdir(p, n, m, o);
  }
  Result<Attr> Symlink(Ino p, std::string_view n, std::string_view t, Owner o) override {
    return in_->Symlink(p, n, t, o);
  }
  Result<Attr> Link(Ino i, Ino p, std::string_view n) override { return in_->Link(i, p, n); }
  Status Unlink(Ino p, std::string_view n) override { return in_->Unlink(p, n); }
  Status Rmdir(Ino p, std::string_view n) override { return in_->Rmdir(p, n); }
  Status Rename(Ino p, std::string_view n, Ino p2, std::string_view n2, uint32_t f) override {
    return in_->Rename(p, n, p2, n2, f);
  }
  Result<std::string> Readlink(Ino i) override { return in_->Readlink(i); }
  Result<DirPage> ReadDir(Ino d, uint64_t c, size_t m) override { return in_->ReadDir(d, c, m); }
  Result<std::string> GetXattr(Ino i, std::string_view n) override { return in_->GetXattr(i, n); }
  Status SetXattr(Ino i, std::string_view n, std::string_view v, uint32_t f) override {
    return in_->SetXattr(i, n, v, f);
  }
  Result<std::vector<std::string>> ListXattr(Ino i) override { return in_->ListXattr(i); }
  Status RemoveXattr(Ino i, std::string_view n) override { return in_->RemoveXattr(i, n); }
  Result<std::string> Read(Ino i, uint64_t o, size_t l) override { return in_->Read(i, o, l); }
  Result<Attr> Write(Ino i, uint64_t o, std::string_view d) override { return in_->Write(i, o, d); }
  Status Fallocate(Ino i, uint32_t m, uint64_t o, uint64_t l) override {
    return in_->Fallocate(i, m, o, l);
  }
  Result<StatFs> Statfs() override { return in_->Statfs(); }
  Status Open(Ino i, HolderId h) override { return in_->Open(i, h); }
  Status Release(Ino i, HolderId h) override { return in_->Release(i, h); }
  Status DropHolder(HolderId h) override { return in_->DropHolder(h); }

 private:
  FileSystem* in_;
};

// Two models fed the same random sequence agree on every outcome and end with equal trees; the
// sequence reaches every kind of operation and both successes and failures.
TEST(FsDriverTest, TwoModelsAgreeAndTheGeneratorCoversEveryKind) {
  const uint64_t seed = TestSeed(42);
  SCOPED_TRACE("seed " + std::to_string(seed) +
               " (replay: ARCHIL_TEST_SEED=" + std::to_string(seed) + ")");
  FakeClock clock;
  ModelFs a(&clock), b(&clock);
  std::vector<Ino> ha, hb;
  FsOpGenerator gen(seed);
  std::set<FsOp::Kind> kinds;
  int failures = 0;
  for (int i = 0; i < 3000; ++i) {
    FsOp op = gen.Next(&a, ha.size());
    FsOutcome x = Apply(&a, op, &ha);
    FsOutcome y = Apply(&b, op, &hb);
    ASSERT_EQ(x, y) << "op " << i << ": " << Describe(op);
    kinds.insert(op.kind);
    failures += x.err != 0;
    clock.Advance(10);
  }
  EXPECT_EQ(kinds.size(), 18u);
  EXPECT_GT(failures, 100);
  EXPECT_LT(failures, 2000);
  ASSERT_TRUE(CompareTrees(&a, &b, {.times = true, .blocks = true}).ok());
  EXPECT_GT(a.InodeCount(), 5u);
}

TEST(FsDriverTest, CompareFindsADifferentFileSystem) {
  const uint64_t seed = TestSeed(7);
  SCOPED_TRACE("seed " + std::to_string(seed));
  FakeClock clock;
  ModelFs a(&clock), inner(&clock);
  ForgetsTruncate b(&inner);
  std::vector<Ino> ha, hb;
  FsOpGenerator gen(seed);
  bool diverged = false;
  for (int i = 0; i < 3000 && !diverged; ++i) {
    FsOp op = gen.Next(&a, ha.size());
    FsOutcome x = Apply(&a, op, &ha);
    FsOutcome y = Apply(&b, op, &hb);
    diverged = !(x == y) || (i % 20 == 19 && !CompareTrees(&a, &b).ok());
  }
  EXPECT_TRUE(diverged) << "a file system that never shrinks files went unnoticed";
}

TEST(FsDriverTest, CompareNamesTheFirstDifference) {
  FakeClock clock;
  ModelFs a(&clock), b(&clock);
  ASSERT_TRUE(a.Mkdir(kRootIno, "d", 0755, {}).ok());
  ASSERT_TRUE(b.Mkdir(kRootIno, "d", 0755, {}).ok());
  Ino fa = a.Mknod(a.Lookup(kRootIno, "d")->ino, "f", S_IFREG | 0644, 0, {})->ino;
  Ino fb = b.Mknod(b.Lookup(kRootIno, "d")->ino, "f", S_IFREG | 0644, 0, {})->ino;
  ASSERT_TRUE(a.Write(fa, 0, "hello").ok());
  ASSERT_TRUE(b.Write(fb, 0, "help!").ok());
  Status s = CompareTrees(&a, &b);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("d/f: data at byte 3"), std::string::npos) << s.message();
  ASSERT_TRUE(b.Write(fb, 0, "hello").ok());
  EXPECT_TRUE(CompareTrees(&a, &b).ok());
  ASSERT_TRUE(b.SetXattr(fb, "user.x", "1", 0).ok());
  EXPECT_NE(CompareTrees(&a, &b).message().find("xattr names"), std::string::npos);
}

}  // namespace
}  // namespace archil::posix
