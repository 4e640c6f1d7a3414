#include "io/posix_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

namespace archil::io {
namespace {

class PosixEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/archil_io_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Env* env_ = PosixEnv();
  std::string dir_;
};

OpenOptions Create() {
  OpenOptions o;
  o.create = true;
  return o;
}

TEST_F(PosixEnvTest, WriteReadSyncSizeTruncate) {
  auto f = env_->OpenFile(dir_ + "/a", Create());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE((*f)->Pwrite(0, "hello").ok());
  ASSERT_TRUE((*f)->Pwrite(10, "world").ok());  // a gap reads as zeros
  ASSERT_TRUE((*f)->Sync().ok());
  EXPECT_EQ(*(*f)->Size(), 15u);
  char buf[32];
  auto n = (*f)->Pread(0, sizeof(buf), buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buf, *n), std::string("hello\0\0\0\0\0world", 15));
  ASSERT_TRUE((*f)->Truncate(3).ok());
  EXPECT_EQ(*(*f)->Size(), 3u);
  EXPECT_EQ(*(*f)->Pread(5, 4, buf), 0u);
  ASSERT_TRUE((*f)->Allocate(0, 8192, /*keep_size=*/true).ok());
  EXPECT_EQ(*(*f)->Size(), 3u);
  ASSERT_TRUE((*f)->Allocate(0, 8192, /*keep_size=*/false).ok());
  EXPECT_EQ(*(*f)->Size(), 8192u);
  ASSERT_TRUE((*f)->Pwrite(4096, std::string(4096, 'x')).ok());
  ASSERT_TRUE((*f)->PunchHole(4096, 4096).ok());
  ASSERT_EQ(*(*f)->Pread(4096, 1, buf), 1u);
  EXPECT_EQ(buf[0], '\0');
  EXPECT_EQ(*(*f)->Size(), 8192u);
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_FALSE((*f)->Sync().ok());
}

TEST_F(PosixEnvTest, NamesAndErrnos) {
  EXPECT_EQ(ErrnoFor(env_->OpenFile(dir_ + "/missing", OpenOptions()).status()), ENOENT);
  ASSERT_TRUE(env_->OpenFile(dir_ + "/a", Create()).ok());
  OpenOptions excl = Create();
  excl.exclusive = true;
  EXPECT_EQ(ErrnoFor(env_->OpenFile(dir_ + "/a", excl).status()), EEXIST);
  ASSERT_TRUE(env_->CreateDir(dir_ + "/d").ok());
  EXPECT_EQ(ErrnoFor(env_->CreateDir(dir_ + "/d")), EEXIST);
  EXPECT_EQ(ErrnoFor(env_->OpenFile(dir_ + "/d", OpenOptions()).status()), EISDIR);
  ASSERT_TRUE(env_->Link(dir_ + "/a", dir_ + "/d/b").ok());
  EXPECT_EQ(env_->Stat(dir_ + "/a")->nlink, 2u);
  EXPECT_EQ(ErrnoFor(env_->RemoveDir(dir_ + "/d")), ENOTEMPTY);
  ASSERT_TRUE(env_->Rename(dir_ + "/d/b", dir_ + "/c").ok());
  ASSERT_TRUE(env_->SyncDir(dir_).ok());
  ASSERT_TRUE(env_->SyncDir(dir_ + "/d").ok());
  auto names = env_->ListDir(dir_);
  ASSERT_TRUE(names.ok());
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_TRUE(*env_->FileExists(dir_ + "/c"));
  ASSERT_TRUE(env_->Unlink(dir_ + "/c").ok());
  EXPECT_FALSE(*env_->FileExists(dir_ + "/c"));
  EXPECT_EQ(ErrnoFor(env_->Unlink(dir_ + "/c")), ENOENT);
  ASSERT_TRUE(env_->RemoveDir(dir_ + "/d").ok());
  EXPECT_EQ(env_->Stat(dir_)->type, FileType::kDirectory);
  EXPECT_EQ(*env_->FileSize(dir_ + "/a"), 0u);
}

TEST_F(PosixEnvTest, LockIsExclusiveEvenWithinTheProcess) {
  auto lock = env_->LockFile(dir_ + "/LOCK");
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  EXPECT_EQ(ErrnoFor(env_->LockFile(dir_ + "/LOCK").status()), EWOULDBLOCK);
  ASSERT_TRUE(env_->UnlockFile(std::move(lock).value()).ok());
  EXPECT_TRUE(env_->LockFile(dir_ + "/LOCK").ok());
}

}  // namespace
}  // namespace archil::io
