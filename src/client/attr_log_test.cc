#include "client/attr_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace archil::client {
namespace {

using posix::Attr;
using posix::Ino;
using posix::SetAttrRequest;
using posix::Timespec;
using posix::TimeUpdate;

Attr FileAttr(uint64_t ino) {
  Attr a;
  a.ino = Ino(ino);
  a.mode = S_IFREG | 0644;
  a.nlink = 1;
  a.uid = 1000;
  a.gid = 1000;
  a.size = 10;
  a.mtime = a.ctime = Timespec{100, 0};
  return a;
}

// `ino`'s attributes learned from the answer to a mutation alone in flight.
void Learn(AttrLog* log, const Attr& a) {
  AttrLog::Ticket t = log->Begin();
  log->End(std::move(t), true, a);
}

SetAttrRequest Chmod(uint32_t mode) {
  SetAttrRequest r;
  r.mode = mode;
  return r;
}

TEST(AttrLog, ASetattrOfAnUnknownInodeGoesToTheServer) {
  AttrLog log;
  EXPECT_FALSE(log.Answer(Ino(5), Chmod(0600), Timespec{200, 0}, 1).has_value());
  EXPECT_FALSE(log.Get(Ino(5)).has_value());
  EXPECT_EQ(log.stats().answered, 0u);
}

TEST(AttrLog, AnInodeLearnedFromALoneMutationIsAnsweredWithTheChangeAndTheClientsTime) {
  AttrLog log;
  Learn(&log, FileAttr(5));
  ASSERT_TRUE(log.Get(Ino(5)).has_value());
  std::optional<Attr> a = log.Answer(Ino(5), Chmod(04755), Timespec{200, 7}, 1);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->mode, S_IFREG | 04755);
  EXPECT_EQ(a->ctime, (Timespec{200, 7}));
  EXPECT_EQ(a->mtime, (Timespec{100, 0}));  // unchanged
  EXPECT_EQ(a->size, 10u);
  EXPECT_EQ(log.Get(Ino(5)), a);
  AttrLog::Stats s = log.stats();
  EXPECT_EQ(s.answered, 1u);
  EXPECT_EQ(s.pending, 1u);
  EXPECT_EQ(s.oldest_pending_ns, 1);
}

TEST(AttrLog, NothingIsAnsweredWhileAMutationIsInFlight) {
  AttrLog log;
  Learn(&log, FileAttr(5));
  AttrLog::Ticket other = log.Begin();  // forgets what answers said: it may change inode 5
  EXPECT_FALSE(log.Get(Ino(5)).has_value());
  EXPECT_FALSE(log.Answer(Ino(5), Chmod(0600), Timespec{200, 0}, 1).has_value());
  log.End(std::move(other), true, FileAttr(5));
  EXPECT_TRUE(log.Answer(Ino(5), Chmod(0600), Timespec{200, 0}, 1).has_value());
}

TEST(AttrLog, AnAnswerToAMutationThatWasNotAloneIsNotLearned) {
  AttrLog log;
  // Another mutation in flight when it began, answered first.
  AttrLog::Ticket a = log.Begin();
  AttrLog::Ticket b = log.Begin();
  log.End(std::move(a), true, std::nullopt);
  log.End(std::move(b), true, FileAttr(5));
  EXPECT_FALSE(log.Get(Ino(5)).has_value());
  // Another one began while it was in flight, and ended before it.
  AttrLog::Ticket c = log.Begin();
  AttrLog::Ticket d = log.Begin();
  log.End(std::move(d), true, std::nullopt);
  log.End(std::move(c), true, FileAttr(6));
  EXPECT_FALSE(log.Get(Ino(6)).has_value());
  // Alone.
  Learn(&log, FileAttr(7));
  EXPECT_TRUE(log.Get(Ino(7)).has_value());
}

TEST(AttrLog, TheNextMutationCarriesOnePutPerInodeWithTheLastValueOfEachField) {
  AttrLog log;
  Learn(&log, FileAttr(5));
  ASSERT_TRUE(log.Answer(Ino(5), Chmod(0600), Timespec{200, 0}, 1));
  SetAttrRequest chown;
  chown.uid = 0;
  chown.gid = 0;
  ASSERT_TRUE(log.Answer(Ino(5), chown, Timespec{201, 0}, 2));
  ASSERT_TRUE(log.Answer(Ino(5), Chmod(0640), Timespec{202, 0}, 3));
  SetAttrRequest times;
  times.atime = TimeUpdate::At(Timespec{50, 1});
  times.mtime = TimeUpdate::Now();
  ASSERT_TRUE(log.Answer(Ino(5), times, Timespec{203, 0}, 4));
  EXPECT_EQ(log.stats().oldest_pending_ns, 1);

  AttrLog::Ticket carrier = log.Begin();
  ASSERT_EQ(carrier.puts.attrs.size(), 1u);
  const posix::AttrPut& p = carrier.puts.attrs[0];
  EXPECT_EQ(p.ino, Ino(5));
  EXPECT_EQ(p.mode, 0640u);
  EXPECT_EQ(p.uid, 0u);
  EXPECT_EQ(p.gid, 0u);
  EXPECT_EQ(p.atime, (Timespec{50, 1}));
  EXPECT_EQ(p.mtime, (Timespec{203, 0}));
  EXPECT_EQ(p.ctime, (Timespec{203, 0}));
  EXPECT_EQ(log.stats().pending, 0u);
  EXPECT_EQ(log.stats().carried, 1u);
  // Until its answer, what the server will hold is still what this client shows.
  ASSERT_TRUE(log.Get(Ino(5)).has_value());
  EXPECT_EQ(log.Get(Ino(5))->mode, S_IFREG | 0640);
  Attr from_server = FileAttr(5);
  log.Overlay(&from_server);
  EXPECT_EQ(from_server.uid, 0u);
  log.End(std::move(carrier), true, std::nullopt);
  EXPECT_FALSE(log.Get(Ino(5)).has_value());  // the server's answers are the truth again
  Attr after = FileAttr(5);
  log.Overlay(&after);
  EXPECT_EQ(after, FileAttr(5));
  EXPECT_EQ(log.stats().lost, 0u);
}

TEST(AttrLog, AMutationWaitsWhileACarrierIsInFlight) {
  AttrLog log;
  Learn(&log, FileAttr(5));
  ASSERT_TRUE(log.Answer(Ino(5), Chmod(0600), Timespec{200, 0}, 1));
  AttrLog::Ticket carrier = log.Begin();
  ASSERT_EQ(carrier.puts.attrs.size(), 1u);
  std::atomic<bool> began{false};
  std::thread later([&] {
    AttrLog::Ticket t = log.Begin();
    began = true;
    EXPECT_TRUE(t.puts.empty());
    log.End(std::move(t), true, std::nullopt);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(began.load()) << "a mutation was sent before the puts ahead of it were applied";
  log.End(std::move(carrier), true, std::nullopt);
  later.join();
  EXPECT_TRUE(began.load());
}

TEST(AttrLog, PutsTheServerDidNotApplyAreCountedLost) {
  AttrLog log;
  Learn(&log, FileAttr(5));
  Learn(&log, FileAttr(6));  // forgets 5: a mutation began
  ASSERT_TRUE(log.Answer(Ino(6), Chmod(0600), Timespec{200, 0}, 1));
  AttrLog::Ticket carrier = log.Begin();
  log.End(std::move(carrier), false, std::nullopt);
  EXPECT_EQ(log.stats().lost, 1u);
  EXPECT_FALSE(log.Get(Ino(6)).has_value());
}

TEST(AttrLog, ASizeChangeIsNeverAnswered) {
  AttrLog log;
  Learn(&log, FileAttr(5));
  SetAttrRequest trunc;
  trunc.size = 0;
  EXPECT_FALSE(log.Answer(Ino(5), trunc, Timespec{200, 0}, 1).has_value());
}

TEST(AttrLog, AnotherChangeOfAPendingInodeChangesItsPut) {
  AttrLog log;
  Learn(&log, FileAttr(5));
  ASSERT_TRUE(log.Answer(Ino(5), Chmod(0600), Timespec{200, 0}, 1));
  ASSERT_TRUE(log.Answer(Ino(5), Chmod(0640), Timespec{201, 0}, 2));
  AttrLog::Stats s = log.stats();
  EXPECT_EQ(s.pending, 1u);
  EXPECT_EQ(s.oldest_pending_ns, 1);
  EXPECT_EQ(s.answered, 2u);
}

// A new, empty file (a create's answer).
Attr NewFile(uint64_t ino) {
  Attr a = FileAttr(ino);
  a.size = 0;
  a.blocks = 0;
  return a;
}

// Appends to a file whose attributes are known are answered here: the size, blocks and times after
// them; their data rides in the next carrier, as one write, ahead of the put of the times.
TEST(AttrLog, AppendsToAKnownFileAreAnsweredAndCarriedAsOneWrite) {
  AttrLog log;
  Learn(&log, NewFile(5));
  std::optional<Attr> a =
      log.AnswerWrite(Ino(5), 0, std::string(1000, 'a'), 64 << 10, Timespec{300, 0}, 1);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->size, 1000u);
  EXPECT_EQ(a->blocks, 8u);
  EXPECT_EQ(a->mtime, (Timespec{300, 0}));
  EXPECT_EQ(a->ctime, (Timespec{300, 0}));
  a = log.AnswerWrite(Ino(5), 1000, std::string(4000, 'b'), 64 << 10, Timespec{301, 0}, 2);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->size, 5000u);
  EXPECT_EQ(a->blocks, 16u);
  EXPECT_TRUE(log.Unsent(Ino(5)));
  EXPECT_EQ(log.stats().pending_bytes, 5000u);
  EXPECT_EQ(log.stats().answered_writes, 2u);
  EXPECT_EQ(log.Get(Ino(5))->size, 5000u);

  AttrLog::Ticket carrier = log.Begin();
  ASSERT_EQ(carrier.puts.writes.size(), 1u);
  EXPECT_EQ(carrier.puts.writes[0],
            (posix::WritePut{Ino(5), 0, std::string(1000, 'a') + std::string(4000, 'b')}));
  ASSERT_EQ(carrier.puts.attrs.size(), 1u);
  EXPECT_EQ(carrier.puts.attrs[0].mtime, (Timespec{301, 0}));
  EXPECT_EQ(carrier.puts.attrs[0].ctime, (Timespec{301, 0}));
  EXPECT_FALSE(carrier.puts.attrs[0].mode.has_value());
  EXPECT_FALSE(log.Unsent(Ino(5))) << "carried: a read may go to the server after the carrier";
  EXPECT_EQ(log.stats().pending_bytes, 0u);
  log.End(std::move(carrier), true, std::nullopt);
}

// What is not answered: a write that does not append, to a file with holes, past the bound, of an
// unknown inode, or while a mutation is in flight; and a write drops set-user-ID as the engine
// does.
TEST(AttrLog, OnlyAppendsToADenseKnownFileWithinTheBoundAreAnswered) {
  AttrLog log;
  const std::string d(100, 'x');
  EXPECT_FALSE(log.AnswerWrite(Ino(5), 0, d, 1000, Timespec{300, 0}, 1)) << "unknown";
  Attr sparse = NewFile(5);
  sparse.size = 8192;
  sparse.blocks = 8;  // one of its two blocks is a hole
  Learn(&log, sparse);
  EXPECT_FALSE(log.AnswerWrite(Ino(5), 8192, d, 1000, Timespec{300, 0}, 1)) << "holes";
  Attr setuid = NewFile(6);
  setuid.mode = S_IFREG | 06755;
  Learn(&log, setuid);
  EXPECT_FALSE(log.AnswerWrite(Ino(6), 50, d, 1000, Timespec{300, 0}, 1)) << "not at its end";
  std::optional<Attr> a = log.AnswerWrite(Ino(6), 0, d, 1000, Timespec{300, 0}, 1);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->mode, S_IFREG | 0755) << "set-user-ID and (group-executable) set-group-ID dropped";
  EXPECT_FALSE(log.AnswerWrite(Ino(6), 100, std::string(901, 'y'), 1000, Timespec{301, 0}, 2))
      << "over the bound";
  AttrLog::Ticket t = log.Begin();
  ASSERT_EQ(t.puts.attrs.size(), 1u);
  EXPECT_EQ(t.puts.attrs[0].mode, 0755u);
  log.End(std::move(t), true, std::nullopt);
  Learn(&log, NewFile(7));
  AttrLog::Ticket in_flight = log.Begin();
  EXPECT_FALSE(log.AnswerWrite(Ino(7), 0, d, 1000, Timespec{302, 0}, 3)) << "a mutation in flight";
  log.End(std::move(in_flight), true, std::nullopt);
}

// A lone PUT_ATTRS that applied leaves its inodes known (they are what the server holds): a file
// written and fsynced in turn keeps being answered here. Any other carrier, or one that failed,
// forgets them.
TEST(AttrLog, ALonePutAttrsThatAppliedKeepsItsInodesKnown) {
  AttrLog log;
  Learn(&log, NewFile(5));
  ASSERT_TRUE(log.AnswerWrite(Ino(5), 0, "abc", 1000, Timespec{300, 0}, 1));
  AttrLog::Ticket sync = log.Begin();
  log.End(std::move(sync), true, std::nullopt, /*only_puts=*/true);
  ASSERT_TRUE(log.Get(Ino(5)).has_value());
  EXPECT_EQ(log.Get(Ino(5))->size, 3u);
  EXPECT_EQ(log.stats().pending, 0u);
  ASSERT_TRUE(log.AnswerWrite(Ino(5), 3, "def", 1000, Timespec{301, 0}, 2));
  AttrLog::Ticket carrier = log.Begin();
  ASSERT_EQ(carrier.puts.writes.size(), 1u);
  EXPECT_EQ(carrier.puts.writes[0], (posix::WritePut{Ino(5), 3, "def"}));
  log.End(std::move(carrier), true, std::nullopt, /*only_puts=*/false);
  EXPECT_FALSE(log.Get(Ino(5)).has_value()) << "another request may have changed it";

  Learn(&log, NewFile(6));
  ASSERT_TRUE(log.AnswerWrite(Ino(6), 0, "x", 1000, Timespec{302, 0}, 3));
  AttrLog::Ticket failed = log.Begin();
  log.End(std::move(failed), false, std::nullopt, /*only_puts=*/true);
  EXPECT_FALSE(log.Get(Ino(6)).has_value()) << "not applied: not what the server holds";
}

posix::CreatePut CreateOf(uint64_t ino, uint64_t parent, Timespec time) {
  return posix::CreatePut{
      Ino(parent), "f" + std::to_string(ino), Ino(ino), S_IFREG | 0644, 0, 1000, 100, time};
}

Attr CreatedAttr(uint64_t ino, Timespec time) {
  Attr a = NewFile(ino);
  a.uid = 1000;
  a.gid = 100;
  a.atime = a.mtime = a.ctime = a.btime = time;
  return a;
}

// A create answered here makes its inode known at once: its writes and changes are answered too,
// and the next mutation carries the create before them, sorted by number (the server takes a
// range's numbers in increasing order). Until that carrier is answered, a read of the inode or of
// its directory must send it first.
TEST(AttrLog, ACreateAnsweredHereIsKnownAndCarriedBeforeItsWrites) {
  AttrLog log;
  const Timespec t{400, 1};
  ASSERT_TRUE(log.AnswerCreate(CreateOf(21, 3, t), CreatedAttr(21, t), 1));
  ASSERT_TRUE(log.AnswerCreate(CreateOf(20, 3, t), CreatedAttr(20, t), 1));
  EXPECT_FALSE(log.AnswerCreate(CreateOf(20, 3, t), CreatedAttr(20, t), 1)) << "a number twice";
  EXPECT_EQ(log.Get(Ino(20))->btime, t);
  ASSERT_TRUE(log.AnswerWrite(Ino(20), 0, "data", 1000, Timespec{401, 0}, 2));
  ASSERT_TRUE(log.Answer(Ino(21), Chmod(0600), Timespec{402, 0}, 3));
  EXPECT_TRUE(log.Unsent(Ino(20)));
  EXPECT_TRUE(log.UnsentIn(Ino(3)));
  EXPECT_FALSE(log.UnsentIn(Ino(4)));
  EXPECT_EQ(log.stats().pending_creates, 2u);
  EXPECT_EQ(log.stats().answered_creates, 2u);

  AttrLog::Ticket carrier = log.Begin();
  ASSERT_EQ(carrier.puts.creates.size(), 2u);
  EXPECT_EQ(carrier.puts.creates[0].ino, Ino(20));
  EXPECT_EQ(carrier.puts.creates[1].ino, Ino(21));
  EXPECT_EQ(carrier.puts.creates[0], CreateOf(20, 3, t));
  ASSERT_EQ(carrier.puts.writes.size(), 1u);
  EXPECT_EQ(carrier.puts.attrs.size(), 2u);
  EXPECT_EQ(log.stats().pending_creates, 0u);
  EXPECT_TRUE(log.Unsent(Ino(20))) << "carried, not yet answered";
  EXPECT_TRUE(log.UnsentIn(Ino(3)));
  log.End(std::move(carrier), true, std::nullopt, /*only_puts=*/true);
  EXPECT_FALSE(log.Unsent(Ino(20)));
  EXPECT_FALSE(log.UnsentIn(Ino(3)));
  EXPECT_EQ(log.Get(Ino(21))->mode, S_IFREG | 0600) << "a lone PUT_ATTRS keeps them known";
  log.AwaitCarrier();  // none in flight: returns at once
}

// A directory's attributes are DirAttrs' (creates answered here in it change them there): an
// answer that carried a directory's is not kept, so a GETATTR never falls back on a value older
// than a create in it.
TEST(AttrLog, ADirectoryIsNeverKnownHere) {
  AttrLog log;
  Attr dir = FileAttr(7);
  dir.mode = S_IFDIR | 0755;
  dir.nlink = 2;
  Learn(&log, dir);
  EXPECT_FALSE(log.Get(Ino(7)).has_value());
  EXPECT_FALSE(log.Answer(Ino(7), Chmod(0700), Timespec{200, 0}, 1).has_value());
}

// A directory created here rides like a file's create, in the order of the numbers (the
// directory before what is created in it), without an attribute put; until its carrier is
// answered, a read of it or in it sends it first, and a carrier refused counts it lost.
TEST(AttrLog, ADirectoryCreatedHereIsCarriedBeforeWhatIsCreatedInIt) {
  AttrLog log;
  const Timespec t{400, 1};
  posix::CreatePut mkdir = CreateOf(30, 3, t);
  mkdir.mode = S_IFDIR | 0755;
  Attr dir = CreatedAttr(30, t);
  dir.mode = mkdir.mode;
  dir.nlink = 2;
  ASSERT_TRUE(log.AnswerCreate(mkdir, dir, 1));
  ASSERT_TRUE(log.AnswerCreate(CreateOf(31, 30, t), CreatedAttr(31, t), 1));
  EXPECT_FALSE(log.Get(Ino(30)).has_value()) << "DirAttrs keeps a directory's attributes";
  EXPECT_FALSE(log.Answer(Ino(30), Chmod(0700), t, 1).has_value());
  EXPECT_TRUE(log.Get(Ino(31)).has_value());
  EXPECT_TRUE(log.Unsent(Ino(30)));
  EXPECT_TRUE(log.UnsentIn(Ino(3)));
  EXPECT_TRUE(log.UnsentIn(Ino(30)));
  EXPECT_EQ(log.stats().pending, 2u) << "a flush has something to send";

  AttrLog::Ticket carrier = log.Begin();
  ASSERT_EQ(carrier.puts.creates.size(), 2u);
  EXPECT_EQ(carrier.puts.creates[0], mkdir);
  EXPECT_EQ(carrier.puts.creates[1].parent, Ino(30));
  ASSERT_EQ(carrier.puts.attrs.size(), 1u) << "the file's put only";
  EXPECT_EQ(carrier.puts.attrs[0].ino, Ino(31));
  EXPECT_TRUE(log.Unsent(Ino(30))) << "carried, not yet answered";
  log.End(std::move(carrier), false, std::nullopt, /*only_puts=*/true);
  EXPECT_FALSE(log.Unsent(Ino(30)));
  EXPECT_EQ(log.stats().lost, 2u) << "the directory and the file";
  EXPECT_EQ(log.stats().carried, 2u);
}

// Creates are bounded by what one request may carry, and not answered while a mutation is in
// flight; written data is bounded in files and bytes across every file that waits.
TEST(AttrLog, WhatWaitsFitsInOneRequest) {
  AttrLog log;
  const Timespec t{400, 1};
  {
    AttrLog::Ticket in_flight = log.Begin();
    EXPECT_FALSE(log.AnswerCreate(CreateOf(10, 3, t), CreatedAttr(10, t), 1));
    log.End(std::move(in_flight), true, std::nullopt);
  }
  for (uint64_t i = 0; i < AttrLog::kMaxCreates; ++i) {
    ASSERT_TRUE(log.AnswerCreate(CreateOf(100 + i, 3, t), CreatedAttr(100 + i, t), 1)) << i;
  }
  EXPECT_FALSE(log.AnswerCreate(CreateOf(99, 3, t), CreatedAttr(99, t), 1));
  for (uint64_t i = 0; i < AttrLog::kMaxWrites; ++i) {
    ASSERT_TRUE(log.AnswerWrite(Ino(100 + i), 0, "x", 1000, t, 2)) << i;
  }
  EXPECT_FALSE(log.AnswerWrite(Ino(100 + AttrLog::kMaxWrites), 0, "x", 1000, t, 2))
      << "one file's data more than a request carries";
  EXPECT_TRUE(log.AnswerWrite(Ino(100), 1, "y", 1000, t, 2)) << "more data of a file that has some";
  AttrLog::Ticket carrier = log.Begin();
  EXPECT_EQ(carrier.puts.creates.size(), AttrLog::kMaxCreates);
  EXPECT_EQ(carrier.puts.writes.size(), AttrLog::kMaxWrites);
  log.End(std::move(carrier), false, std::nullopt);
  EXPECT_EQ(log.stats().lost, AttrLog::kMaxCreates) << "one put per created inode, counted lost";
  EXPECT_FALSE(log.Get(Ino(100))) << "not applied: the server does not hold it";

  AttrLog bytes;
  for (uint64_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(bytes.AnswerCreate(CreateOf(10 + i, 3, t), CreatedAttr(10 + i, t), 1));
    ASSERT_TRUE(bytes.AnswerWrite(Ino(10 + i), 0, std::string(64 << 10, 'a'), 64 << 10, t, 2));
  }
  ASSERT_TRUE(bytes.AnswerCreate(CreateOf(12, 3, t), CreatedAttr(12, t), 1));
  EXPECT_FALSE(bytes.AnswerWrite(Ino(12), 0, "z", 64 << 10, t, 2)) << "128 KiB wait already";
}

// An unlink answered here rides after everything else its carrier holds; until the carrier is
// answered, a lookup of its name and a listing of its directory send it first, and a create of
// the same name goes to the server (carrying it).
TEST(AttrLog, ARemoveAnsweredHereIsCarriedLastAndKeepsItsNameFromACreate) {
  AttrLog log;
  const Timespec t{500, 1};
  const posix::RemovePut gone{Ino(3), "f30", Ino(30), t};
  ASSERT_TRUE(log.AnswerRemove(gone, 5));
  EXPECT_EQ(log.stats().pending, 1u) << "sent by the next pass or sync like any put";
  EXPECT_EQ(log.stats().oldest_pending_ns, 5);
  EXPECT_EQ(log.stats().pending_removes, 1u);
  EXPECT_EQ(log.stats().answered_removes, 1u);
  EXPECT_TRUE(log.UnsentIn(Ino(3)));
  EXPECT_TRUE(log.UnsentIn(Ino(3), "f30"));
  EXPECT_FALSE(log.UnsentIn(Ino(3), "f31")) << "a lookup of another name needs nothing sent";
  EXPECT_FALSE(log.UnsentIn(Ino(4)));
  EXPECT_FALSE(log.AnswerCreate(CreateOf(30, 3, t), CreatedAttr(30, t), 6))
      << "a create of a name whose remove waits";
  ASSERT_TRUE(log.AnswerCreate(CreateOf(31, 3, t), CreatedAttr(31, t), 6));
  EXPECT_FALSE(log.AnswerRemove({Ino(3), "f31", Ino(31), t}, 7))
      << "never carried with the file's own create";

  AttrLog::Ticket carrier = log.Begin();
  ASSERT_EQ(carrier.puts.removes.size(), 1u);
  EXPECT_EQ(carrier.puts.removes[0], gone);
  EXPECT_EQ(carrier.puts.creates.size(), 1u);
  EXPECT_EQ(log.stats().pending, 0u);
  EXPECT_EQ(log.stats().pending_removes, 0u);
  EXPECT_TRUE(log.UnsentIn(Ino(3), "f30")) << "carried, not yet answered";
  EXPECT_FALSE(log.AnswerRemove({Ino(3), "g", Ino(40), t}, 7)) << "a mutation is in flight";
  log.End(std::move(carrier), true, std::nullopt, /*only_puts=*/true);
  EXPECT_FALSE(log.UnsentIn(Ino(3), "f30"));
  EXPECT_FALSE(log.UnsentIn(Ino(3)));
  EXPECT_EQ(log.stats().lost, 0u);
}

// Removes are bounded by what one request may carry, and counted lost with their carrier.
TEST(AttrLog, RemovesFitInOneRequestAndAreCountedLostWithTheirCarrier) {
  AttrLog log;
  const Timespec t{500, 1};
  for (uint64_t i = 0; i < AttrLog::kMaxRemoves; ++i) {
    ASSERT_TRUE(log.AnswerRemove({Ino(3), "f" + std::to_string(i), Ino(100 + i), t}, 1)) << i;
  }
  EXPECT_FALSE(log.AnswerRemove({Ino(3), "over", Ino(99), t}, 1));
  AttrLog::Ticket carrier = log.Begin();
  EXPECT_EQ(carrier.puts.removes.size(), AttrLog::kMaxRemoves);
  log.End(std::move(carrier), false, std::nullopt);
  EXPECT_EQ(log.stats().lost, AttrLog::kMaxRemoves);
  EXPECT_EQ(log.stats().carried, AttrLog::kMaxRemoves);
  EXPECT_TRUE(log.AnswerRemove({Ino(3), "over", Ino(99), t}, 2));
}

}  // namespace
}  // namespace archil::client
