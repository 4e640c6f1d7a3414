#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <filesystem>

#include "base/test_seed.h"
#include "io/posix_env.h"
#include "io/sim_env.h"

namespace archil::io {
namespace {

std::string Read(Env* env, const std::string& path) {
  OpenOptions o;
  o.read_only = true;
  auto f = env->OpenFile(path, o);
  if (!f.ok()) return ErrnoFor(f.status()) == ENOENT ? "<missing>" : f.status().ToString();
  std::string buf(*(*f)->Size(), '\0');
  buf.resize(*(*f)->Pread(0, buf.size(), buf.data()));
  return buf;
}

// Power is cut before the n-th operation of WriteFileAtomically, for every n, with several
// tearing seeds each: afterwards the file holds all of the old or all of the new contents.
void CrashAtEveryStep(bool existed_before) {
  const uint64_t seed = TestSeed(4242);
  SCOPED_TRACE(SeedTrace(seed));
  const std::string old_contents(3000, 'o');  // several sectors, so a mix would show
  const std::string new_contents(5000, 'n');
  const std::string before = existed_before ? old_contents : "<missing>";
  bool completed = false;
  for (uint64_t n = 0; !completed; ++n) {
    ASSERT_LT(n, 100u) << "WriteFileAtomically never completed";
    for (uint64_t round = 0; round < 16; ++round) {
      SCOPED_TRACE("crash before operation " + std::to_string(n) + ", round " +
                   std::to_string(round));
      SimEnv env;
      ASSERT_TRUE(env.CreateDir("/d").ok());
      ASSERT_TRUE(env.SyncDir("/").ok());
      if (existed_before) {
        ASSERT_TRUE(WriteFileAtomically(&env, "/d/f", old_contents).ok());
      }
      FaultRule cut;
      cut.skip = n;
      cut.power_off = true;
      env.AddFaultRule(cut);
      Status s = WriteFileAtomically(&env, "/d/f", new_contents);
      bool crashed = env.powered_off();
      if (!crashed) {
        ASSERT_TRUE(s.ok()) << s.ToString();
        completed = true;
      }
      env.PowerOff();
      env.Restart(seed + n * 100 + round);
      std::string got = Read(&env, "/d/f");
      if (s.ok()) {
        EXPECT_EQ(got, new_contents) << "acknowledged, so durable";
      } else {
        EXPECT_TRUE(got == before || got == new_contents) << "got " << got.size() << " bytes";
      }
      auto names = env.ListDir("/d");
      ASSERT_TRUE(names.ok());
      for (const std::string& name : *names) EXPECT_EQ(name, "f") << "a temporary survived";
    }
  }
}

TEST(WriteFileAtomically, PowerLossAtEveryStepReplacingAFile) { CrashAtEveryStep(true); }

TEST(WriteFileAtomically, PowerLossAtEveryStepCreatingAFile) { CrashAtEveryStep(false); }

TEST(WriteFileAtomically, FailedSyncLeavesOldContentsAndNoTemporary) {
  SimEnv env;
  ASSERT_TRUE(WriteFileAtomically(&env, "/f", "old").ok());
  FaultRule rule;
  rule.ops = kSimSync;
  rule.error = EIO;
  env.AddFaultRule(rule);
  Status s = WriteFileAtomically(&env, "/f", "new");
  EXPECT_EQ(ErrnoFor(s), EIO);
  EXPECT_EQ(Read(&env, "/f"), "old");
  auto names = env.ListDir("/");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"f"});
}

TEST(WriteFileAtomically, WorksOnPosix) {
  char tmpl[] = "/tmp/archil_atomic_test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  ASSERT_TRUE(WriteFileAtomically(PosixEnv(), dir + "/f", "one").ok());
  ASSERT_TRUE(WriteFileAtomically(PosixEnv(), dir + "/f", "two!").ok());
  EXPECT_EQ(Read(PosixEnv(), dir + "/f"), "two!");
  EXPECT_EQ(PosixEnv()->ListDir(dir)->size(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace archil::io
