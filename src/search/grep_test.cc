#include "search/grep.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <set>

#include "posix/model_fs.h"

namespace archil::search {
namespace {

using posix::Ino;
using posix::kRootIno;

// The reference model, with reads and listings that can fail or advance a fake clock.
class TestFs : public posix::ModelFs {
 public:
  explicit TestFs(FakeClock* clock) : ModelFs(clock), clock_(clock) {}

  Result<std::string> Read(Ino ino, uint64_t offset, size_t length) override {
    if (failing_reads_.count(ino.value())) return Status::Errno(EIO, "injected");
    if (read_advances_us_ > 0) clock_->Advance(read_advances_us_);
    ++reads_;
    return ModelFs::Read(ino, offset, length);
  }
  Result<posix::DirPage> ReadDir(Ino dir, uint64_t after, size_t max) override {
    if (failing_lists_.count(dir.value())) return Status::Errno(EIO, "injected");
    return ModelFs::ReadDir(dir, after, max);
  }

  Ino Dir(Ino parent, const std::string& name) { return Mkdir(parent, name, 0755, {}).value().ino; }
  Ino File(Ino parent, const std::string& name, const std::string& data) {
    Ino ino = Mknod(parent, name, S_IFREG | 0644, 0, {}).value().ino;
    if (!data.empty()) {
      EXPECT_TRUE(Write(ino, 0, data).ok());
    }
    return ino;
  }

  std::set<uint64_t> failing_reads_, failing_lists_;
  int64_t read_advances_us_ = 0;
  std::atomic<int> reads_{0};  // the searchers read in parallel

 private:
  FakeClock* clock_;
};

class GrepTest : public ::testing::Test {
 protected:
  GrepResult Run(GrepRequest r) {
    Result<GrepResult> out = Grep(&fs_, r, &clock_);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : GrepResult{};
  }
  GrepRequest Req(std::string pattern, std::string dir = "/", bool recursive = true) {
    GrepRequest r;
    r.pattern = std::move(pattern);
    r.directory = std::move(dir);
    r.recursive = recursive;
    return r;
  }

  FakeClock clock_;
  TestFs fs_{&clock_};
};

TEST_F(GrepTest, FindsMatchingLinesByFileThenLineWithOneBasedNumbers) {
  Ino src = fs_.Dir(kRootIno, "src");
  fs_.File(src, "b.txt", "nothing\nneedle here\nand needle needle again\n");
  fs_.File(src, "a.txt", "needle at the start\nno\n");
  fs_.File(kRootIno, "top.txt", "no match\n");
  GrepResult r = Run(Req("needle"));
  EXPECT_EQ(r.stopped, StopReason::kCompleted);
  EXPECT_EQ(r.files_scanned, 3u);
  ASSERT_EQ(r.matches.size(), 3u);  // a line with two matches is reported once
  EXPECT_EQ(r.matches[0], (GrepMatch{"/src/a.txt", 1, "needle at the start"}));
  EXPECT_EQ(r.matches[1], (GrepMatch{"/src/b.txt", 2, "needle here"}));
  EXPECT_EQ(r.matches[2], (GrepMatch{"/src/b.txt", 3, "and needle needle again"}));
}

TEST_F(GrepTest, WithoutRecursiveOnlyTheDirectorysOwnFilesAreSearched) {
  Ino src = fs_.Dir(kRootIno, "src");
  Ino deep = fs_.Dir(src, "deep");
  fs_.File(src, "a", "x\n");
  fs_.File(deep, "b", "x\n");
  GrepResult flat = Run(Req("x", "/src", false));
  ASSERT_EQ(flat.matches.size(), 1u);
  EXPECT_EQ(flat.matches[0].file, "/src/a");
  EXPECT_EQ(flat.files_scanned, 1u);
  GrepResult all = Run(Req("x", "src/", true));  // the path's slashes are optional
  ASSERT_EQ(all.matches.size(), 2u);
  EXPECT_EQ(all.matches[1].file, "/src/deep/b");
}

TEST_F(GrepTest, LinesAreTheUnitAnchorsAreLineEndsAndNoMatchSpansANewline) {
  fs_.File(kRootIno, "f", "alpha\nbeta a\nb gamma\nBETA\n");
  EXPECT_EQ(Run(Req("^beta")).matches.size(), 1u);
  EXPECT_EQ(Run(Req("a$")).matches.size(), 3u);      // alpha, beta a, b gamma
  EXPECT_TRUE(Run(Req(R"(a\sb)")).matches.empty());  // "beta a" NL "b gamma"
  EXPECT_TRUE(Run(Req("(?s)a.b")).matches.empty());
  EXPECT_EQ(Run(Req("(?i)^beta$")).matches.size(), 1u);
  GrepResult last = Run(Req("^BETA$"));
  ASSERT_EQ(last.matches.size(), 1u);
  EXPECT_EQ(last.matches[0].line, 4u);
}

TEST_F(GrepTest, AFileWithoutAFinalNewlineHasItsLastLineSearched) {
  fs_.File(kRootIno, "f", "one\ntwo\nthree needle");
  GrepResult r = Run(Req("needle"));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0], (GrepMatch{"/f", 3, "three needle"}));
}

TEST_F(GrepTest, ALineAcrossTwoReadsIsFoundWithItsNumber) {
  std::string data;
  uint64_t lines = 0;
  while (data.size() < kReadBytes - 10) {
    data += "filler line of text\n";
    ++lines;
  }
  data += "the needle crosses the read boundary of one MiB\nafter\n";
  fs_.File(kRootIno, "big", data);
  GrepResult r = Run(Req("needle crosses"));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].line, lines + 1);
  EXPECT_GE(fs_.reads_.load(), 2);
}

TEST_F(GrepTest, LineNumbersHoldAcrossManyReads) {
  std::string data;
  std::vector<uint64_t> want;
  for (uint64_t line = 1; data.size() < 3 * kReadBytes + 100; ++line) {
    if (line % 7919 == 1) {
      data += "needle " + std::to_string(line) + "\n";
      want.push_back(line);
    } else {
      data += "line " + std::to_string(line) + " of filler, filler, filler\n";
    }
  }
  fs_.File(kRootIno, "big", data);
  GrepResult r = Run(Req("^needle"));
  ASSERT_EQ(r.matches.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.matches[i].line, want[i]);
    EXPECT_EQ(r.matches[i].text, "needle " + std::to_string(want[i]));
  }
}

TEST_F(GrepTest, AnOverlongLineIsSearchedInPiecesAndLaterLinesKeepTheirNumbers) {
  std::string data = "first\n" + std::string(kMaxLineBytes + kReadBytes / 2, 'x') + "tail\n" +
                     "needle on line three\n";
  fs_.File(kRootIno, "long", data);
  GrepResult r = Run(Req("needle|tail"));
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_EQ(r.matches[0].line, 2u);  // the piece holding "tail"
  EXPECT_EQ(r.matches[0].text.size(), kMaxTextBytes);
  EXPECT_EQ(r.matches[1], (GrepMatch{"/long", 3, "needle on line three"}));
}

TEST_F(GrepTest, BinaryFilesAreCountedButNotSearched) {
  fs_.File(kRootIno, "bin", std::string("needle\0needle\n", 14));
  fs_.File(kRootIno, "text", "needle\n");
  GrepResult r = Run(Req("needle"));
  EXPECT_EQ(r.files_scanned, 2u);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].file, "/text");
}

TEST_F(GrepTest, SymlinksAndOtherNodesAreNotFollowed) {
  Ino d = fs_.Dir(kRootIno, "d");
  fs_.File(d, "real", "needle\n");
  ASSERT_TRUE(fs_.Symlink(kRootIno, "link", "d", {}).ok());
  ASSERT_TRUE(fs_.Symlink(kRootIno, "flink", "d/real", {}).ok());
  GrepResult r = Run(Req("needle"));
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].file, "/d/real");
}

TEST_F(GrepTest, MaxResultsStopsTheSearchWithExactlyThatMany) {
  for (int i = 0; i < 50; ++i) fs_.File(kRootIno, "f" + std::to_string(i), "hit\nhit\nhit\n");
  GrepRequest req = Req("hit");
  req.max_results = 7;
  req.concurrency = 3;
  GrepResult r = Run(req);
  EXPECT_EQ(r.stopped, StopReason::kMaxResults);
  EXPECT_EQ(r.matches.size(), 7u);
  EXPECT_LT(r.files_scanned, 50u);
}

TEST_F(GrepTest, TheDeadlineStopsTheSearch) {
  for (int i = 0; i < 20; ++i) fs_.File(kRootIno, "f" + std::to_string(i), "hit\n");
  fs_.read_advances_us_ = 400'000;  // each read takes 0.4 s of the fake clock
  GrepRequest req = Req("hit");
  req.max_duration_ms = 1000;
  req.concurrency = 1;
  GrepResult r = Run(req);
  EXPECT_EQ(r.stopped, StopReason::kDeadline);
  EXPECT_LT(r.files_scanned, 20u);
  EXPECT_GE(r.duration_ms, 1000);
}

TEST_F(GrepTest, AnUnreadableFileMakesTheResultIncompleteAndTheRestIsSearched) {
  Ino bad = fs_.File(kRootIno, "bad", "hit\n");
  fs_.File(kRootIno, "good", "hit\n");
  fs_.failing_reads_.insert(bad.value());
  GrepResult r = Run(Req("hit"));
  EXPECT_EQ(r.stopped, StopReason::kIncomplete);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].file, "/good");
}

TEST_F(GrepTest, AnUnlistableSubdirectoryIsListFailedAndTheRestIsSearched) {
  Ino sub = fs_.Dir(kRootIno, "sub");
  fs_.File(sub, "hidden", "hit\n");
  fs_.File(kRootIno, "seen", "hit\n");
  fs_.failing_lists_.insert(sub.value());
  GrepResult r = Run(Req("hit"));
  EXPECT_EQ(r.stopped, StopReason::kListFailed);
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].file, "/seen");
}

TEST_F(GrepTest, APatternThatWouldBacktrackForeverIsLinear) {
  fs_.File(kRootIno, "as", std::string(1 << 20, 'a') + "\n");
  GrepRequest req = Req("(a*)*b");
  GrepResult r = Run(req);
  EXPECT_EQ(r.stopped, StopReason::kCompleted);
  EXPECT_TRUE(r.matches.empty());
}

TEST_F(GrepTest, BadRequestsAreRefusedWithWhy) {
  fs_.File(kRootIno, "file", "x\n");
  auto refused = [&](GrepRequest r) { return Grep(&fs_, r, &clock_).status(); };
  EXPECT_EQ(refused(Req("")).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(refused(Req(std::string(kMaxPatternBytes + 1, 'a'))).code(),
            Status::Code::kInvalidArgument);
  Status s = refused(Req("a("));
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("does not compile"), std::string::npos) << s.ToString();
  EXPECT_EQ(refused(Req(R"((a\1))")).code(), Status::Code::kInvalidArgument);  // no backrefs
  EXPECT_EQ(refused(Req("((((a{100}){100}){100}){100})")).code(),
            Status::Code::kInvalidArgument);  // a program too large
  GrepRequest r = Req("x");
  r.concurrency = 0;
  EXPECT_EQ(refused(r).code(), Status::Code::kInvalidArgument);
  r = Req("x");
  r.max_results = kMaxResults + 1;
  EXPECT_EQ(refused(r).code(), Status::Code::kInvalidArgument);
  r = Req("x");
  r.max_duration_ms = 0;
  EXPECT_EQ(refused(r).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(refused(Req("x", "/nope")).sys_errno(), ENOENT);
  EXPECT_EQ(refused(Req("x", "/file")).sys_errno(), ENOTDIR);
  EXPECT_EQ(refused(Req("x", "/..")).code(), Status::Code::kInvalidArgument);
}

TEST(StopReasonTest, NamesAreTheApis) {
  EXPECT_EQ(StopReasonName(StopReason::kCompleted), "completed");
  EXPECT_EQ(StopReasonName(StopReason::kIncomplete), "incomplete");
  EXPECT_EQ(StopReasonName(StopReason::kMaxResults), "max_results");
  EXPECT_EQ(StopReasonName(StopReason::kDeadline), "deadline");
  EXPECT_EQ(StopReasonName(StopReason::kListFailed), "list_failed");
}

}  // namespace
}  // namespace archil::search
