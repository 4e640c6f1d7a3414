// ReadAhead over the reference model: in-order READs are answered from chunks read in the
// background, random ones go to the disk, the end of a file stops it, a failed background read
// leaves the READ its own answer, memory stays bounded, and (through MountCore) no chunk read
// before a write, truncate or fallocate answers a READ after it.
#include "fs/read_ahead.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "fs/mount_core.h"
#include "posix/model_fs.h"

namespace archil::fs {
namespace {

constexpr size_t kChunk = 64 << 10;

// The model, counting reads by offset; reads can be held at a gate, and made to fail.
class GatedReadFs : public posix::ModelFs {
 public:
  GatedReadFs() : posix::ModelFs(&SystemClock::Instance(), 0755) {}

  // Reads the model first, then waits at the gate: what a held read returns is what the file
  // held when it was read.
  Result<std::string> Read(Ino ino, uint64_t offset, size_t length) override {
    Result<std::string> r = posix::ModelFs::Read(ino, offset, length);
    MutexLock lock(&mu_);
    ++reads_;
    offsets_.push_back(offset);
    ++waiting_;
    arrived_.SignalAll();
    while (closed_) open_.Wait(&mu_);
    --waiting_;
    if (fail_) return Status::Errno(EIO, "injected");
    return r;
  }

  int reads() {
    MutexLock lock(&mu_);
    return reads_;
  }
  bool ReadAt(uint64_t offset) {
    MutexLock lock(&mu_);
    for (uint64_t o : offsets_) {
      if (o == offset) return true;
    }
    return false;
  }
  void CloseGate() {
    MutexLock lock(&mu_);
    closed_ = true;
  }
  void OpenGate() {
    MutexLock lock(&mu_);
    closed_ = false;
    open_.SignalAll();
  }
  // Waits until `n` reads wait at the closed gate.
  void AwaitWaiting(int n) {
    MutexLock lock(&mu_);
    while (waiting_ < n) arrived_.Wait(&mu_);
  }
  void Fail(bool f) {
    MutexLock lock(&mu_);
    fail_ = f;
  }

 private:
  Mutex mu_;
  CondVar open_{&mu_};
  CondVar arrived_{&mu_};
  int reads_ ARCHIL_GUARDED_BY(mu_) = 0;
  int waiting_ ARCHIL_GUARDED_BY(mu_) = 0;
  bool closed_ ARCHIL_GUARDED_BY(mu_) = false;
  bool fail_ ARCHIL_GUARDED_BY(mu_) = false;
  std::vector<uint64_t> offsets_ ARCHIL_GUARDED_BY(mu_);
};

std::string Pattern(size_t n, char salt) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 4096 + salt) & 0xff);
  return s;
}

class ReadAheadTest : public ::testing::Test {
 protected:
  Ino MakeFile(const std::string& name, const std::string& data) {
    Result<posix::Attr> a = fs_.Mknod(posix::kRootIno, name, S_IFREG | 0644, 0, {});
    EXPECT_TRUE(a.ok());
    EXPECT_TRUE(fs_.Write(a.value().ino, 0, data).ok());
    return a.value().ino;
  }
  // Waits until `n` background reads have completed or failed.
  static void AwaitChunks(ReadAhead* ra, uint64_t n) {
    for (int i = 0; i < 5000; ++i) {
      ReadAheadStats s = ra->stats();
      if (s.chunks_read + s.chunks_failed >= n) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "background reads did not complete";
  }
  GatedReadFs fs_;
};

TEST_F(ReadAheadTest, InOrderReadsAreAnsweredFromChunksReadAhead) {
  const std::string data = Pattern(16 * kChunk + 100, 1);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 4 * kChunk, .chunk = kChunk});
  std::string got;
  for (uint64_t off = 0; off < data.size(); off += kChunk) {
    Result<std::string> r = ra.Read(f, off, kChunk);
    ASSERT_TRUE(r.ok()) << r.status().message();
    got += r.value();
  }
  EXPECT_EQ(got, data);  // the last READ is short: the file ends in it
  ReadAheadStats s = ra.stats();
  // The first two READs go to the disk (the second shows the order); every later one is a hit.
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.hits, 15u);
  EXPECT_GE(s.chunks_read, 15u);
  // The short chunk stopped it: nothing was asked for past the last window started before.
  for (uint64_t c = 20; c < 24; ++c) EXPECT_FALSE(fs_.ReadAt(c * kChunk)) << c;
}

TEST_F(ReadAheadTest, NothingIsReadPastTheEndOfAFileOfAKnownSize) {
  const std::string data = Pattern(2 * kChunk + 100, 15);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 4 * kChunk, .chunk = kChunk});
  ra.Sized(f, data.size());
  ASSERT_TRUE(ra.Read(f, 0, kChunk).ok());
  ASSERT_TRUE(ra.Read(f, kChunk, kChunk).ok());  // in order: reads ahead up to the end only
  AwaitChunks(&ra, 1);
  Result<std::string> last = ra.Read(f, 2 * kChunk, kChunk);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last.value(), data.substr(2 * kChunk));
  EXPECT_EQ(fs_.reads(), 3);  // two READs, one chunk: none past the end
  EXPECT_EQ(ra.stats().hits, 1u);
  // A file whose reader reaches its known end reads nothing ahead.
  Ino g = MakeFile("g", data.substr(0, kChunk + 10));
  ra.Sized(g, kChunk + 10);
  ASSERT_TRUE(ra.Read(g, 0, kChunk).ok());
  ASSERT_TRUE(ra.Read(g, kChunk, kChunk).ok());
  EXPECT_EQ(fs_.reads(), 5);
}

TEST_F(ReadAheadTest, RandomReadsStartNothing) {
  const std::string data = Pattern(64 * kChunk, 2);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 4 * kChunk, .chunk = kChunk});
  const uint64_t offsets[] = {40, 3, 17, 60, 9, 33, 1, 50};
  for (uint64_t c : offsets) {
    Result<std::string> r = ra.Read(f, c * kChunk, 4096);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), data.substr(c * kChunk, 4096));
  }
  EXPECT_EQ(fs_.reads(), 8);  // one each, nothing more
  EXPECT_EQ(ra.stats().hits, 0u);
}

TEST_F(ReadAheadTest, AWindowOfZeroReadsOnlyWhatIsAsked) {
  const std::string data = Pattern(8 * kChunk, 3);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 0, .chunk = kChunk});
  for (uint64_t off = 0; off < data.size(); off += kChunk)
    ASSERT_TRUE(ra.Read(f, off, kChunk).ok());
  EXPECT_EQ(fs_.reads(), 8);
}

TEST_F(ReadAheadTest, ReadsThatStraddleChunksAreAssembled) {
  const std::string data = Pattern(12 * kChunk, 4);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 6 * kChunk, .chunk = kChunk});
  // 1.5 chunks per READ: every later READ spans two chunks.
  const size_t step = kChunk + kChunk / 2;
  for (uint64_t off = 0; off < data.size(); off += step) {
    Result<std::string> r = ra.Read(f, off, step);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.value(), data.substr(off, step)) << "at " << off;
  }
  EXPECT_GT(ra.stats().hits, 4u);
}

TEST_F(ReadAheadTest, AFailedBackgroundReadLeavesTheReadItsOwnAnswer) {
  const std::string data = Pattern(8 * kChunk, 5);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 2 * kChunk, .chunk = kChunk});
  ASSERT_TRUE(ra.Read(f, 0, kChunk).ok());
  fs_.Fail(true);
  Result<std::string> r = ra.Read(f, kChunk, kChunk);  // starts chunks 2 and 3, which fail
  EXPECT_FALSE(r.ok());
  AwaitChunks(&ra, 2);
  EXPECT_EQ(ra.stats().chunks_failed, 2u);
  fs_.Fail(false);
  // Chunk 2 failed in the background; the READ asks again and gets the data.
  const int before = fs_.reads();
  Result<std::string> again = ra.Read(f, 2 * kChunk, kChunk);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again.value(), data.substr(2 * kChunk, kChunk));
  EXPECT_TRUE(fs_.ReadAt(2 * kChunk));
  EXPECT_GE(fs_.reads(), before + 1);
  EXPECT_EQ(ra.stats().hits, 0u);
}

TEST_F(ReadAheadTest, ChunksStayWithinTheMemoryBound) {
  const std::string a = Pattern(32 * kChunk, 6);
  const std::string b = Pattern(32 * kChunk, 7);
  Ino fa = MakeFile("a", a);
  Ino fb = MakeFile("b", b);
  ReadAhead ra(&fs_,
               ReadAheadOptions{.window = 8 * kChunk, .chunk = kChunk, .max_bytes = 5 * kChunk});
  ASSERT_TRUE(ra.Read(fa, 0, kChunk).ok());
  fs_.CloseGate();  // nothing completes: every chunk started stays in flight
  std::thread reader([&] {
    (void)ra.Read(fa, kChunk, kChunk);  // starts 5 chunks of the 8 it would: the bound
  });
  fs_.AwaitWaiting(1);  // the READ's own read: its chunks were started before it
  EXPECT_EQ(ra.stats().bytes_cached, 5 * kChunk);
  fs_.OpenGate();
  reader.join();
  ASSERT_TRUE(ra.Read(fb, 0, kChunk).ok());
  ASSERT_TRUE(ra.Read(fb, kChunk, kChunk).ok());  // in order, but the bound is reached
  EXPECT_EQ(ra.stats().bytes_cached, 5 * kChunk);
  AwaitChunks(&ra, 5);
  EXPECT_EQ(fs_.reads(), 2 + 5 + 2);  // a's two READs and five chunks; b's two READs, no chunk
}

TEST_F(ReadAheadTest, ChunksAReaderSkipsAreDropped) {
  const std::string data = Pattern(64 * kChunk, 12);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_,
               ReadAheadOptions{.window = 4 * kChunk, .chunk = kChunk, .max_bytes = 64 * kChunk});
  // Every other chunk, each READ still in order: the chunks between them are never read.
  for (uint64_t c = 0; c < 48; c += 2) {
    Result<std::string> r = ra.Read(f, c * kChunk, kChunk);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), data.substr(c * kChunk, kChunk)) << c;
    // What is kept: the window ahead, and the chunks just behind the reader.
    EXPECT_LE(ra.stats().bytes_cached, 8 * kChunk) << "after chunk " << c;
  }
  EXPECT_GT(ra.stats().hits, 10u);
}

TEST_F(ReadAheadTest, AFilePrefetchedAnswersItsReadsAndGoesAtItsEnd) {
  const std::string data = Pattern(10000, 13);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 4 * kChunk, .chunk = kChunk});
  ra.Prefetch(f, data.size());
  ra.Prefetch(f, data.size());  // held already: nothing more
  AwaitChunks(&ra, 1);
  EXPECT_EQ(fs_.reads(), 1);
  // The kernel's READs: a page, then the rest of the file's pages.
  Result<std::string> head = ra.Read(f, 0, 4096);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head.value(), data.substr(0, 4096));
  EXPECT_GT(ra.stats().bytes_cached, 0u);
  Result<std::string> rest = ra.Read(f, 4096, 8192);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest.value(), data.substr(4096));
  EXPECT_EQ(fs_.reads(), 1);  // both from the one background read, nothing past the file's end
  ReadAheadStats s = ra.stats();
  EXPECT_EQ(s.files_ahead, 1u);
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.bytes_cached, 0u);  // the READ reached the file's end: dropped
}

TEST_F(ReadAheadTest, AReadAwayFromAPrefetchedFilesStartGoesToTheDisk) {
  const std::string data = Pattern(3 * kChunk, 14);
  Ino f = MakeFile("f", data);
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 4 * kChunk, .chunk = kChunk});
  ra.Prefetch(f, 1000);  // the size the listing gave; the file is bigger now
  AwaitChunks(&ra, 1);
  Result<std::string> far = ra.Read(f, 2 * kChunk, 4096);
  ASSERT_TRUE(far.ok());
  EXPECT_EQ(far.value(), data.substr(2 * kChunk, 4096));
  EXPECT_EQ(ra.stats().hits, 0u);
  EXPECT_EQ(ra.stats().bytes_cached, 0u);
}

TEST_F(ReadAheadTest, FilesPrefetchedAndNeverReadAreBounded) {
  const size_t n = ReadAhead::kMaxPrefetched + 8;
  std::vector<Ino> files;
  for (size_t i = 0; i < n; ++i) files.push_back(MakeFile("f" + std::to_string(i), "x"));
  ReadAhead ra(&fs_, ReadAheadOptions{.window = 4 * kChunk, .chunk = kChunk});
  for (size_t i = 0; i < n; ++i) {
    ra.Prefetch(files[i], 1);
    AwaitChunks(&ra, i + 1);  // each one read before the next: the drops below are of read ones
  }
  ReadAheadStats s = ra.stats();
  EXPECT_EQ(s.files_ahead, n);
  EXPECT_EQ(s.chunks_dropped, 8u);  // the oldest unread ones
  EXPECT_EQ(s.bytes_cached, ReadAhead::kMaxPrefetched * 8192);
  // The newest is still answered from memory; the oldest goes to the disk.
  const int before = fs_.reads();
  ASSERT_TRUE(ra.Read(files.back(), 0, 4096).ok());
  EXPECT_EQ(fs_.reads(), before);
  ASSERT_TRUE(ra.Read(files.front(), 0, 4096).ok());
  EXPECT_EQ(fs_.reads(), before + 1);
}

// Through MountCore: a chunk in flight while this mount writes, truncates or punches the range
// never answers a READ after the change.
class ReadAheadCoherenceTest : public ReadAheadTest {
 protected:
  // Waits until `n` background reads have completed: they hold the file as it was.
  void AwaitRead(uint64_t n) {
    for (int i = 0; i < 5000 && core_.stats().read_ahead.chunks_read < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(core_.stats().read_ahead.chunks_read, n);
  }
  // A file of `data` whose first two chunks were READ in order: chunks 2..5 are read ahead.
  NodeId ReadAheadOf(const std::string& data) {
    const NodeId n = core_.NodeOf(MakeFile("f", data));
    EXPECT_TRUE(core_.Read(n, 0, kChunk).ok());
    EXPECT_TRUE(core_.Read(n, kChunk, kChunk).ok());
    AwaitRead(4);
    return n;
  }
  MountCore core_{&fs_, posix::kRootIno, MountOptions{.read_ahead_bytes = 4 * kChunk}};
};

TEST_F(ReadAheadCoherenceTest, AReadAfterAWriteSeesTheWrite) {
  const std::string data = Pattern(16 * kChunk, 8);
  Ino f = MakeFile("f", data);
  const NodeId n = core_.NodeOf(f);
  ASSERT_TRUE(core_.Read(n, 0, kChunk).ok());
  // Hold the background reads the next READ starts, so they return after the write.
  fs_.CloseGate();
  std::thread second([&] { (void)core_.Read(n, kChunk, kChunk); });
  fs_.AwaitWaiting(2);  // the READ itself and at least one chunk
  fs_.OpenGate();
  second.join();
  const std::string patch(kChunk, 'w');
  ASSERT_TRUE(core_.Write(n, 3 * kChunk, patch).ok());
  Result<std::string> r = core_.Read(n, 2 * kChunk, 2 * kChunk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), data.substr(2 * kChunk, kChunk) + patch);
}

TEST_F(ReadAheadCoherenceTest, AChunkReadBeforeAWriteNeverAnswersAfterIt) {
  const std::string data = Pattern(16 * kChunk, 9);
  const NodeId n = ReadAheadOf(data);
  fs_.CloseGate();
  ASSERT_TRUE(core_.Read(n, 2 * kChunk, kChunk).ok());  // from chunk 2; starts chunk 6
  fs_.AwaitWaiting(1);  // chunk 6 has read the file as it is before the write, and is held
  const std::string patch(4 * kChunk, 'z');
  ASSERT_TRUE(core_.Write(n, 3 * kChunk, patch).ok());
  fs_.OpenGate();
  AwaitRead(5);
  std::string got;
  for (uint64_t off = 3 * kChunk; off < 7 * kChunk; off += kChunk) {
    Result<std::string> r = core_.Read(n, off, kChunk);
    ASSERT_TRUE(r.ok());
    got += r.value();
  }
  EXPECT_EQ(got, patch);  // not chunks 3..6 as read before the write
}

TEST_F(ReadAheadCoherenceTest, ATruncateEndsTheFileForReadsAfterIt) {
  const std::string data = Pattern(16 * kChunk, 10);
  const NodeId n = ReadAheadOf(data);
  posix::SetAttrRequest cut;
  cut.size = 2 * kChunk + 10;
  ASSERT_TRUE(core_.SetAttr(n, cut).ok());
  Result<std::string> r = core_.Read(n, 2 * kChunk, kChunk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), data.substr(2 * kChunk, 10));
}

// Small files in a directory, listed with their attributes and read one after another.
class ListingReadAheadTest : public ReadAheadCoherenceTest {
 protected:
  // `n` files of `size` bytes in a new directory, listed by the core; returns their node ids.
  std::vector<NodeId> ListedFiles(int n, size_t size) {
    Result<posix::Attr> d = fs_.Mkdir(posix::kRootIno, "d", 0755, {});
    EXPECT_TRUE(d.ok());
    std::vector<NodeId> nodes;
    for (int i = 0; i < n; ++i) {
      Result<posix::Attr> a = fs_.Mknod(d->ino, "f" + std::to_string(i), S_IFREG | 0644, 0, {});
      EXPECT_TRUE(a.ok());
      EXPECT_TRUE(fs_.Write(a->ino, 0, Pattern(size, static_cast<char>(i))).ok());
    }
    bool eof = false;
    uint64_t offset = 0;
    while (!eof) {
      Result<std::vector<DirItem>> page =
          core_.ReadDir(core_.NodeOf(d->ino), offset, 7, &eof, true);
      EXPECT_TRUE(page.ok());
      if (!page.ok() || page->empty()) break;
      for (const DirItem& item : *page) {
        if (item.attr) nodes.push_back(item.attr->node);
      }
      offset = page->back().offset;
    }
    return nodes;
  }
};

TEST_F(ListingReadAheadTest, FilesReadInTheirListingsOrderAreReadAheadOfTheReader) {
  const std::vector<NodeId> nodes = ListedFiles(30, 3000);
  ASSERT_EQ(nodes.size(), 30u);
  std::vector<std::string> expected;
  for (NodeId n : nodes) expected.push_back(fs_.Read(core_.InoOf(n), 0, 3000).value());
  const int before = fs_.reads();
  for (size_t i = 0; i < nodes.size(); ++i) {
    core_.Open(nodes[i]);
    Result<std::string> r = core_.Read(nodes[i], 0, 4096);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), expected[i]) << i;
    ASSERT_TRUE(core_.Release(nodes[i]).ok());
  }
  ReadAheadStats s = core_.stats().read_ahead;
  EXPECT_EQ(s.files_ahead, 29u);  // every file after the first, each once
  EXPECT_EQ(fs_.reads() - before, 30);
  // A READ that comes before its file's background read is done waits for it: a hit too.
  EXPECT_EQ(s.hits, 29u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.bytes_cached, 0u);
}

TEST_F(ListingReadAheadTest, AListedFileReadInTwoReadsReadsNothingPastItsEnd) {
  const std::vector<NodeId> nodes = ListedFiles(1, 2 * kChunk + 100);
  ASSERT_EQ(nodes.size(), 1u);
  core_.Open(nodes[0]);
  const int before = fs_.reads();
  ASSERT_TRUE(core_.Read(nodes[0], 0, kChunk).ok());
  // In order, and ends where the listing said the file ends: no chunk starts (one would be in
  // flight, and counted, right now).
  Result<std::string> rest = core_.Read(nodes[0], kChunk, kChunk + 4096);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->size(), kChunk + 100);
  EXPECT_EQ(core_.stats().read_ahead.bytes_cached, 0u);
  EXPECT_EQ(fs_.reads() - before, 2);
}

TEST_F(ListingReadAheadTest, FilesReadOutOfOrderReadNothingAhead) {
  const std::vector<NodeId> nodes = ListedFiles(12, 3000);
  ASSERT_EQ(nodes.size(), 12u);
  for (size_t i = nodes.size(); i-- > 0;) {
    core_.Open(nodes[i]);
    ASSERT_TRUE(core_.Read(nodes[i], 0, 4096).ok());
    ASSERT_TRUE(core_.Release(nodes[i]).ok());
  }
  EXPECT_EQ(core_.stats().read_ahead.files_ahead, 0u);
}

TEST_F(ListingReadAheadTest, AFileReadAheadBeforeAWriteIsReadAsWritten) {
  const std::vector<NodeId> nodes = ListedFiles(3, 3000);
  ASSERT_EQ(nodes.size(), 3u);
  fs_.CloseGate();
  std::thread first([&] { (void)core_.Read(nodes[0], 0, 4096); });
  fs_.AwaitWaiting(3);  // the READ and the read ahead of the two files after it, held
  const std::string patch(100, 'w');
  ASSERT_TRUE(core_.Write(nodes[1], 0, patch).ok());
  fs_.OpenGate();
  first.join();
  Result<std::string> r = core_.Read(nodes[1], 0, 4096);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().substr(0, 100), patch);
  EXPECT_EQ(r.value().size(), 3000u);
}

TEST_F(ReadAheadCoherenceTest, APunchedHoleReadsAsZeros) {
  const NodeId n = ReadAheadOf(Pattern(16 * kChunk, 11));
  ASSERT_TRUE(
      core_.Fallocate(n, posix::kFallocPunchHole | posix::kFallocKeepSize, 2 * kChunk, kChunk)
          .ok());
  Result<std::string> r = core_.Read(n, 2 * kChunk, kChunk);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), std::string(kChunk, '\0'));
}

}  // namespace
}  // namespace archil::fs
