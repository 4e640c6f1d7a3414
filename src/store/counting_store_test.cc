#include "store/counting_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store/dir_store.h"

namespace archil::store {
namespace {

uint64_t Ended(const CountingStore& s, StoreCall c, StoreOutcome o) {
  return s.counts(c).ended[static_cast<size_t>(o)].load();
}

// Each kind of call is counted once, by how it ended (a missing object and a refused condition
// are not errors), with the bytes that went each way; the calls reach the store as they were.
TEST(CountingStore, CountsEachCallByKindAndHowItEnded) {
  const std::string root = ::testing::TempDir() + "/counting-" + std::to_string(getpid());
  std::filesystem::remove_all(root);
  Result<std::unique_ptr<DirStore>> dir = DirStore::Open(root + "/objects");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  CountingStore s(std::move(*dir));

  ASSERT_TRUE(s.Put("a/1", "hello", {}).ok());
  EXPECT_EQ(s.Put("a/1", "again", {Condition::kIfAbsent, ""}).status().code(),
            Status::Code::kAlreadyExists);
  EXPECT_EQ(*s.Get("a/1", 0, kToEnd), "hello");
  EXPECT_EQ(s.Get("a/missing", 0, kToEnd).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(s.Head("a/1")->size, 5u);
  EXPECT_EQ(s.List("a/", "", 10)->objects.size(), 1u);
  EXPECT_TRUE(s.Delete("a/1").ok());
  EXPECT_EQ(s.Put("../escape", "x", {}).status().code(), Status::Code::kInvalidArgument);

  EXPECT_EQ(Ended(s, StoreCall::kPut, StoreOutcome::kOk), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kPut, StoreOutcome::kRefused), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kPut, StoreOutcome::kError), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kGet, StoreOutcome::kOk), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kGet, StoreOutcome::kNotFound), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kHead, StoreOutcome::kOk), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kList, StoreOutcome::kOk), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kDelete, StoreOutcome::kOk), 1u);
  EXPECT_EQ(Ended(s, StoreCall::kPutFile, StoreOutcome::kOk), 0u);
  EXPECT_EQ(s.counts(StoreCall::kPut).bytes_sent.load(), 5u) << "only what was stored";
  EXPECT_EQ(s.counts(StoreCall::kGet).bytes_received.load(), 5u);
  EXPECT_EQ(std::string(StoreCallName(StoreCall::kPutFile)), "put_file");
  EXPECT_EQ(std::string(StoreOutcomeName(StoreOutcome::kNotFound)), "not_found");
  EXPECT_TRUE(s.EnforcesConditions());
  EXPECT_NE(s.Describe().find("dir://"), std::string::npos);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace archil::store
