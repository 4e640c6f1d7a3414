#include "dataplane/engine_search.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "io/sim_env.h"

namespace archil {
namespace {

using engine::DiskNo;
using posix::kRootIno;

class EngineSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::EngineOptions o;
    o.env = &env_;
    o.dir = "/data";
    o.clock = &clock_;
    o.intent_sync_ms = 0;
    o.rocks_max_sleep_micros = 0;
    o.block_cache_mb = 8;
    Result<std::unique_ptr<engine::Engine>> e = engine::Engine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    ASSERT_TRUE(engine_->CreateDisk(DiskNo(7), {}).ok());
    fs_ = *engine_->Disk(DiskNo(7));
  }
  void File(std::string_view name, std::string_view data) {
    Result<posix::Attr> a = fs_->Mknod(kRootIno, name, S_IFREG | 0644, 0, {});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(fs_->Write(a->ino, 0, data).ok());
  }
  GrepQuery Query(std::string pattern) {
    GrepQuery q;
    q.pattern = std::move(pattern);
    q.recursive = true;
    return q;
  }

  io::SimEnv env_;
  FakeClock clock_;
  std::unique_ptr<engine::Engine> engine_;
  posix::FileSystem* fs_ = nullptr;
  const DiskId disk_ = engine::DiskIdFromNo(DiskNo(7));
};

TEST_F(EngineSearchTest, SearchesTheHeadAsItIsAndACheckpointAsItWas) {
  EngineSearch search(engine_.get(), &clock_);
  File("a.txt", "one needle\ntwo\n");
  ASSERT_TRUE(engine_->Checkpoint(DiskNo(7), "before").ok());
  File("b.txt", "needle again\n");
  Result<GrepAnswer> head = search.Grep(disk_, Query("needle"));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->stopped_reason, "completed");
  EXPECT_EQ(head->files_scanned, 2u);
  ASSERT_EQ(head->matches.size(), 2u);
  EXPECT_EQ(head->matches[0].file, "/a.txt");
  EXPECT_EQ(head->matches[0].line, 1u);
  EXPECT_EQ(head->matches[0].text, "one needle");
  EXPECT_EQ(head->matches[1].file, "/b.txt");

  GrepQuery q = Query("needle");
  q.checkpoint = "before";
  Result<GrepAnswer> then = search.Grep(disk_, q);
  ASSERT_TRUE(then.ok()) << then.status().ToString();
  ASSERT_EQ(then->matches.size(), 1u);
  EXPECT_EQ(then->matches[0].file, "/a.txt");
}

TEST_F(EngineSearchTest, UnknownCheckpointsDirectoriesAndBadPatternsAreRefusedWithWhy) {
  EngineSearch search(engine_.get(), &clock_);
  File("a.txt", "x\n");
  GrepQuery q = Query("x");
  q.checkpoint = "nope";
  Status s = search.Grep(disk_, q).status();
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("no checkpoint 'nope'"), std::string::npos) << s.ToString();
  q = Query("x");
  q.directory = "/missing";
  s = search.Grep(disk_, q).status();
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("no directory '/missing'"), std::string::npos) << s.ToString();
  q.directory = "/a.txt";
  s = search.Grep(disk_, q).status();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("not a directory"), std::string::npos) << s.ToString();
  s = search.Grep(disk_, Query("a(")).status();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(search.Grep(engine::DiskIdFromNo(DiskNo(8)), Query("x")).status().code(),
            Status::Code::kNotFound);
}

}  // namespace
}  // namespace archil
