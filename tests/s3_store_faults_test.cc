// S3Store under the strict fake's faults: what is retried, what is not, how long it waits, and
// that nothing half-done is left behind (aborted multipart uploads, no object from a failed
// upload).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "s3_fake/s3_fake.h"
#include "store/s3_store.h"

namespace archil::testing {
namespace {

using std::chrono::milliseconds;
using store::Condition;

class S3Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    auto f = S3Fake::Start({});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    fake_ = std::move(*f);
    config_.endpoint = fake_->endpoint();
    config_.bucket = "archil";
    config_.credentials = {"archil-test", "archil-test-secret", ""};
    config_.retry.base = milliseconds(5);
    config_.retry.cap = milliseconds(50);
    config_.retry.max_attempts = 5;
    config_.transport.stall_timeout = milliseconds(1000);
    config_.abandoned_settle = milliseconds(50);
    config_.multipart_threshold = 6ull << 20;
    config_.part_size = 5ull << 20;
  }
  std::unique_ptr<store::S3Store> Open() {
    auto s = store::S3Store::Open(config_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  std::unique_ptr<S3Fake> fake_;
  store::S3Config config_;
};

TEST_F(S3Faults, ThrottlingAndServerErrorsAreRetried) {
  auto s = Open();
  ASSERT_TRUE(s);
  fake_->FailNext(2, 503, "SlowDown");
  const uint64_t before = s->retries();
  ASSERT_TRUE(s->Put("a", "x", {}).ok());
  EXPECT_EQ(s->retries() - before, 2u);
  fake_->FailNext(1, 500, "InternalError");
  EXPECT_EQ(*s->Get("a"), "x");
  EXPECT_EQ(s->retries() - before, 3u);
}

TEST_F(S3Faults, ErrorsPastThePolicyAreUnavailableAndApplyNothing) {
  auto s = Open();
  ASSERT_TRUE(s);
  fake_->FailNext(10, 503, "SlowDown");
  Status st = s->Put("b", "x", {}).status();
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("SlowDown"), std::string::npos) << st.message();
  EXPECT_FALSE(fake_->Object("archil", "b").has_value());
}

TEST_F(S3Faults, ClientErrorsAreNotRetried) {
  config_.credentials.secret_access_key = "wrong";
  config_.probe = false;
  auto s = Open();
  ASSERT_TRUE(s);
  const uint64_t requests = fake_->counters().requests;
  EXPECT_EQ(s->Put("c", "x", {}).status().code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(fake_->counters().requests - requests, 1u);
  EXPECT_EQ(fake_->counters().bad_signatures, 1u);
}

TEST_F(S3Faults, ATornReplyIsRetried) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->Put("d", std::string(100000, 'd'), {}).ok());
  fake_->TearNext(1);
  Result<std::string> got = s->Get("d");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, std::string(100000, 'd'));
  EXPECT_GE(s->retries(), 1u);
}

// A conditional write whose reply is lost is retried; the retry is refused because the first
// attempt landed. The store sees that the object is its own (the ETag it produces) and succeeds;
// a different object under the key is still AlreadyExists.
TEST_F(S3Faults, AConditionalWriteWhoseReplyWasLostSucceedsOnItsRetry) {
  auto s = Open();
  ASSERT_TRUE(s);
  const auto before = fake_->counters();
  fake_->TearNext(1);
  Result<std::string> put = s->Put("lost", "mine", {Condition::kIfAbsent, ""});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(fake_->counters().precondition_failed - before.precondition_failed, 1u);  // the retry
  EXPECT_EQ(s->Put("lost", "other", {Condition::kIfAbsent, ""}).status().code(),
            Status::Code::kAlreadyExists);

  // A multipart completion whose reply is torn: its retry finds no upload (NoSuchUpload).
  const std::string path = ::testing::TempDir() + "/s3lost-" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << std::string(12ull << 20, 'm');
  fake_->TearNext(1, 4);  // after the create and the three parts
  Result<store::ObjectStore::FileUpload> up = s->PutFile("big", path, 12ull << 20);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  // Twice at least: a completion that takes over the stall timeout (a busy or sanitized run) is
  // sent again.
  EXPECT_GE(fake_->counters().completes - before.completes, 2u);
  EXPECT_EQ(fake_->Object("archil", "big")->size(), 12ull << 20);
  Result<store::ObjectInfo> head = s->Head("big");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, up->etag);
  std::filesystem::remove(path);
}

// s3rver writes an object in place: an attempt the client abandoned (its reply lost, or a
// timeout while the store was stopped) that the store reads later, cut short, truncates the
// object its successful retry wrote. The write is checked after a settle and written again.
TEST_F(S3Faults, AnAbandonedAttemptThatLandsLateIsFoundAndWrittenOver) {
  config_.abandoned_settle = milliseconds(1500);
  auto s = Open();
  ASSERT_TRUE(s);
  fake_->SetEnforceConditions(false);
  const std::string data(5000, 'g');
  const auto before = fake_->counters();
  fake_->TearNext(1);  // the first attempt lands, its reply is lost: the retry writes again
  Result<std::string> put = Status::Internal("not run");
  std::thread writer([&] { put = s->Put("ghost", data, {}); });
  // Once the retry has landed, the abandoned attempt "lands late", cut short.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fake_->counters().puts - before.puts < 2 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  fake_->PutDirect("archil", "ghost", "");
  writer.join();
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(fake_->Object("archil", "ghost"), data);
  EXPECT_EQ(fake_->counters().puts - before.puts, 3u);  // the two attempts, then the rewrite
  // One check: the rewrite abandoned no attempt, so nothing can land after it.
  EXPECT_EQ(fake_->counters().heads - before.heads, 1u);

  // Without a late arrival, a retried write is checked once and not written again.
  const auto quiet = fake_->counters();
  fake_->TearNext(1);
  ASSERT_TRUE(s->Put("kept", data, {}).ok());
  EXPECT_EQ(fake_->counters().puts - quiet.puts, 2u);
  EXPECT_EQ(fake_->counters().heads - quiet.heads, 1u);
  // A write with no abandoned attempt is not checked at all.
  const auto plain = fake_->counters();
  ASSERT_TRUE(s->Put("plain", data, {}).ok());
  EXPECT_EQ(fake_->counters().heads - plain.heads, 0u);
}

TEST_F(S3Faults, AHungStoreTimesOutThenRecovers) {
  auto s = Open();
  ASSERT_TRUE(s);
  config_.retry.max_attempts = 2;
  auto hung = store::S3Store::Open([&] {
    store::S3Config c = config_;
    c.probe = false;
    return c;
  }());
  ASSERT_TRUE(hung.ok());
  fake_->SetHang(true);
  const auto t0 = std::chrono::steady_clock::now();
  Status st = (*hung)->Get("e").status();
  const auto took = std::chrono::steady_clock::now() - t0;
  fake_->SetHang(false);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_GE(took, milliseconds(900));
  EXPECT_LT(took, std::chrono::seconds(20));
  EXPECT_TRUE(s->Put("e", "after", {}).ok());
}

TEST_F(S3Faults, AnOutageEndsAndRequestsResume) {
  auto s = Open();
  ASSERT_TRUE(s);
  fake_->SetUnreachable(true);
  EXPECT_EQ(s->Put("f", "x", {}).status().code(), Status::Code::kUnavailable);
  // Retries that outlast the outage succeed without the caller's help.
  config_.retry.max_attempts = 50;
  config_.retry.deadline = std::chrono::seconds(10);
  config_.probe = false;
  auto patient = store::S3Store::Open(config_);
  ASSERT_TRUE(patient.ok());
  std::thread heal([&] {
    std::this_thread::sleep_for(milliseconds(300));
    fake_->SetUnreachable(false);
  });
  Status st = (*patient)->Put("f", "y", {}).status();
  heal.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(fake_->Object("archil", "f"), std::optional<std::string>("y"));
}

TEST_F(S3Faults, AVanishedBucketIsNotFoundForEveryCall) {
  auto s = Open();
  ASSERT_TRUE(s);
  fake_->RemoveBucket("archil");
  EXPECT_EQ(s->Put("g", "x", {}).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(s->Delete("g").code(), Status::Code::kNotFound);
  EXPECT_EQ(s->List("", "", 10).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store::S3Store::Open(config_).status().code(), Status::Code::kNotFound);
}

TEST_F(S3Faults, AFailedMultipartUploadIsAbortedAndLeavesNoObject) {
  auto s = Open();
  ASSERT_TRUE(s);
  const std::string path = ::testing::TempDir() + "/s3faults-" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << std::string(12ull << 20, 's');
  fake_->FailNext(100, 500, "InternalError");  // every attempt fails, the create's included
  EXPECT_EQ(s->PutFile("h", path, 12ull << 20).status().code(), Status::Code::kUnavailable);
  fake_->FailNext(0, 500, "InternalError");
  EXPECT_FALSE(fake_->Object("archil", "h").has_value());
  // Now with a store that works: the upload is in three parts and the object is whole.
  const auto before = fake_->counters();
  Result<store::ObjectStore::FileUpload> up = s->PutFile("h", path, 12ull << 20);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  const auto after = fake_->counters();
  EXPECT_EQ(after.multipart_creates - before.multipart_creates, 1u);
  EXPECT_EQ(after.parts - before.parts, 3u);
  EXPECT_GE(after.completes - before.completes, 1u);  // more if one outlasts the stall timeout
  EXPECT_EQ(fake_->Object("archil", "h")->size(), 12ull << 20);
  // A second upload of the key is refused at completion and aborted.
  EXPECT_EQ(s->PutFile("h", path, 12ull << 20).status().code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(fake_->counters().aborts - after.aborts, 1u);
  std::filesystem::remove(path);
}

TEST_F(S3Faults, AStoreThatIgnoresConditionsIsFoundByTheProbe) {
  fake_->SetEnforceConditions(false);
  auto s = Open();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->EnforcesConditions());
  fake_->SetEnforceConditions(true);
  auto strict = Open();
  ASSERT_TRUE(strict);
  EXPECT_TRUE(strict->EnforcesConditions());
  // The probe cleans up after itself.
  EXPECT_TRUE(fake_->Keys("archil").empty());
}

TEST_F(S3Faults, FirstByteLatencyIsPaidOncePerRequest) {
  auto s = Open();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->Put("i", std::string(4096, 'i'), {}).ok());
  fake_->SetFirstByteLatency(std::chrono::milliseconds(30));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s->Get("i", 0, 4096)->size(), 4096u);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, milliseconds(30));
  EXPECT_LT(took, milliseconds(1000));
}

}  // namespace
}  // namespace archil::testing
