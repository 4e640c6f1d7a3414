#include "engine/commit/commit_queue.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "base/coding.h"
#include "io/rocksdb_fs.h"
#include "io/sim_env.h"

namespace archil::engine {
namespace {

class CommitQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("archil-commitq-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir_.string(), &db).ok());
    db_.reset(db);
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  uint64_t Counter(Txn& txn) {
    Result<std::string> v = txn.Get(db_->DefaultColumnFamily(), "counter");
    return v.ok() ? DecodeFixed64LE(v->data()) : 0;
  }
  std::string Stored(const std::string& key) {
    std::string v;
    return db_->Get(rocksdb::ReadOptions(), key, &v).ok() ? v : "<absent>";
  }

  std::filesystem::path dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

// Read-modify-write from many threads: each increment sees every earlier one, in its group or
// before it, so none is lost; and concurrent callers share WAL writes.
TEST_F(CommitQueueTest, SerializesMutationsAndGroupsTheirWrites) {
  CommitQueue q(db_.get());
  constexpr int kThreads = 8, kEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        Status s = q.Commit([&](Txn& txn) {
          std::string v;
          PutFixed64LE(&v, Counter(txn) + 1);
          txn.Put(db_->DefaultColumnFamily(), "counter", v);
          return Status::Ok();
        });
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(DecodeFixed64LE(Stored("counter").data()), uint64_t{kThreads * kEach});
  CommitStats st = q.stats();
  EXPECT_EQ(st.ops, uint64_t{kThreads * kEach});
  EXPECT_LT(st.groups, st.ops) << "no two concurrent mutations ever shared a write";
  EXPECT_LE(st.syncs, st.groups) << "a group was synced twice";
  EXPECT_GT(st.syncs, uint64_t{0});
}

TEST_F(CommitQueueTest, AFailedPrepareIsRolledBackAlone) {
  CommitQueue q(db_.get());
  auto* cf = db_->DefaultColumnFamily();
  ASSERT_TRUE(q.Commit([&](Txn& txn) {
                 txn.Put(cf, "a", "1");
                 return Status::Ok();
               }).ok());
  Status failed = q.Commit([&](Txn& txn) {
    txn.Put(cf, "b", "2");
    txn.Delete(cf, "a");
    return Status::Errno(ENOSPC, "no room");
  });
  EXPECT_EQ(ErrnoFor(failed), ENOSPC);
  EXPECT_EQ(Stored("a"), "1");
  EXPECT_EQ(Stored("b"), "<absent>");
  Result<int> r = q.CommitWith<int>([&](Txn& txn) -> Result<int> {
    Result<std::string> b = txn.Get(cf, "b");
    EXPECT_EQ(b.status().code(), Status::Code::kNotFound);
    txn.Put(cf, "c", "3");
    return 42;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(Stored("c"), "3");
}

// What a failed prepare changed in memory goes back with its writes: its OnAbort hooks run,
// newest first, whether the prepare itself or the finisher failed; a prepare that succeeds keeps
// its change.
TEST_F(CommitQueueTest, AFailedPrepareUndoesWhatItChangedInMemory) {
  auto* cf = db_->DefaultColumnFamily();
  bool finisher_fails = false;
  CommitQueueOptions o;
  o.finish = [&](Txn&) -> Status {
    return finisher_fails ? Status::Errno(EIO, "log record") : Status::Ok();
  };
  CommitQueue q(db_.get(), o);
  int cursor = 1;
  std::vector<int> undone;
  auto bump = [&](Txn& txn, int to) {
    const int was = cursor;
    cursor = to;
    txn.OnAbort([&, was] {
      undone.push_back(was);
      cursor = was;
    });
  };
  Status failed = q.Commit([&](Txn& txn) {
    txn.Put(cf, "x", "1");
    bump(txn, 2);
    bump(txn, 3);
    return Status::Errno(ENOSPC, "no room");
  });
  EXPECT_EQ(ErrnoFor(failed), ENOSPC);
  EXPECT_EQ(cursor, 1);
  EXPECT_EQ(undone, (std::vector<int>{2, 1}));
  finisher_fails = true;
  undone.clear();
  failed = q.Commit([&](Txn& txn) {
    bump(txn, 4);
    txn.Put(cf, "y", "1");
    return Status::Ok();
  });
  EXPECT_EQ(ErrnoFor(failed), EIO);
  EXPECT_EQ(cursor, 1);
  EXPECT_EQ(undone, (std::vector<int>{1}));
  EXPECT_EQ(Stored("y"), "<absent>");
  finisher_fails = false;
  undone.clear();
  ASSERT_TRUE(q.Commit([&](Txn& txn) {
                 bump(txn, 5);
                 txn.Put(cf, "z", "1");
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(cursor, 5);
  EXPECT_TRUE(undone.empty());
}

// The finisher sees the prepare's writes in order, adds its own (not recorded) to the same
// batch, and its failure rolls the whole mutation back.
TEST_F(CommitQueueTest, TheFinisherSeesThePreparesWritesAndCanFailTheMutation) {
  auto* cf = db_->DefaultColumnFamily();
  std::vector<std::string> seen;
  CommitQueueOptions o;
  o.finish = [&](Txn& txn) -> Status {
    seen.clear();
    for (const Txn::Mutation& m : txn.mutations()) {
      EXPECT_EQ(m.cf, cf);
      seen.push_back(std::to_string(static_cast<int>(m.kind)) + m.key + "=" + m.value);
    }
    if (Result<std::string> v = txn.Get(cf, "fail"); v.ok()) return Status::Internal("refused");
    txn.Put(cf, "log", std::to_string(seen.size()));
    return Status::Ok();
  };
  CommitQueue q(db_.get(), o);
  ASSERT_TRUE(q.Commit([&](Txn& txn) {
                 txn.Put(cf, "a", "1");
                 txn.Delete(cf, "b");
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"0a=1", "1b="}));
  EXPECT_EQ(Stored("log"), "2");
  Status failed = q.Commit([&](Txn& txn) {
    txn.Put(cf, "c", "3");
    txn.Put(cf, "fail", "x");
    return Status::Ok();
  });
  EXPECT_EQ(failed.code(), Status::Code::kInternal);
  EXPECT_EQ(Stored("c"), "<absent>");
  EXPECT_EQ(Stored("fail"), "<absent>");
  EXPECT_EQ(Stored("log"), "2");
}

// AtEnd hooks run once per key after the prepare, on what it left, before the finisher (which
// records their writes as the prepare's); one that fails fails the mutation, and none of its
// writes remain; a prepare that fails runs none.
TEST_F(CommitQueueTest, AtEndRunsOncePerKeyAfterThePrepareAsPartOfIt) {
  auto* cf = db_->DefaultColumnFamily();
  std::vector<std::string> recorded;
  CommitQueueOptions o;
  o.recorded_cf_ids = 1;  // the default column family, id 0
  o.finish = [&](Txn& txn) -> Status {
    recorded.clear();
    for (const Txn::Mutation& m : txn.mutations()) recorded.push_back(m.key + "=" + m.value);
    return Status::Ok();
  };
  CommitQueue q(db_.get(), o);
  int runs = 0;
  auto count = [&](Txn& txn) -> Status {
    ++runs;
    // What every step of the prepare left, not what the first one saw.
    txn.Put(cf, "sum", std::to_string(Counter(txn)));
    return Status::Ok();
  };
  ASSERT_TRUE(q.Commit([&](Txn& txn) {
                 for (uint64_t i = 1; i <= 3; ++i) {
                   std::string v;
                   PutFixed64LE(&v, i);
                   txn.Put(cf, "counter", v);
                   txn.AtEnd("sum", count);
                 }
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(Stored("sum"), "3");
  ASSERT_EQ(recorded.size(), 4u) << "the hook's write is recorded with the prepare's";
  EXPECT_EQ(recorded.back(), "sum=3");

  Status failed = q.Commit([&](Txn& txn) {
    txn.Put(cf, "d", "4");
    txn.AtEnd("fail", [&](Txn& t) -> Status {
      t.Put(cf, "e", "5");
      return Status::Internal("refused at the end");
    });
    return Status::Ok();
  });
  EXPECT_EQ(failed.code(), Status::Code::kInternal);
  EXPECT_EQ(Stored("d"), "<absent>");
  EXPECT_EQ(Stored("e"), "<absent>");
  EXPECT_EQ(q.Commit([&](Txn& txn) {
               txn.AtEnd("sum", count);
               return Status::Internal("the prepare fails");
             }).code(),
            Status::Code::kInternal);
  EXPECT_EQ(runs, 1);
}

// Within one group, a later prepare sees an earlier one's writes, also through an iterator; hooks
// registered with OnApply and OnDurable run only for mutations that committed.
TEST_F(CommitQueueTest, LaterMutationsSeeEarlierOnesAndHooksRunOnCommit) {
  CommitQueue q(db_.get());
  auto* cf = db_->DefaultColumnFamily();
  std::atomic<int> hooks{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::string key = "k" + std::to_string(t) + "-" + std::to_string(i);
        ASSERT_TRUE(q.Commit([&](Txn& txn) {
                       txn.Put(cf, key, "v");
                       auto it = txn.NewIterator(cf);
                       it->Seek(key);
                       EXPECT_TRUE(it->Valid() && it->key().ToString() == key);
                       txn.OnApply([&] { hooks++; });
                       txn.OnDurable([&] { hooks += 1'000'000; });
                       return Status::Ok();
                     }).ok());
        Status refused = q.Commit([&](Txn& txn) {
          txn.OnApply([&] { hooks += 1000; });
          txn.OnDurable([&] { hooks += 1000; });
          return Status::InvalidArgument("never");
        });
        EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(hooks.load(), 200 * 1'000'001);
}

// on_queued runs once the mutation has its place: a Commit begun from it, even before the first
// mutation's prepare has run, runs after it and sees its write (how the disk server orders one
// file's writes without waiting for each sync).
TEST_F(CommitQueueTest, ACommitBegunFromOnQueuedRunsAfterIt) {
  CommitQueue q(db_.get());
  auto* cf = db_->DefaultColumnFamily();
  std::atomic<bool> first_prepared{false}, second_queued{false};
  std::string seen;
  std::thread second;
  Status first = q.Commit(
      [&](Txn& txn) {
        first_prepared = true;
        txn.Put(cf, "a", "1");
        return Status::Ok();
      },
      [&] {
        EXPECT_FALSE(first_prepared) << "on_queued ran after the prepare";
        second = std::thread([&] {
          Status s = q.Commit(
              [&](Txn& txn) {
                Result<std::string> v = txn.Get(cf, "a");
                seen = v.ok() ? *v : "<absent>";
                return Status::Ok();
              },
              [&] { second_queued = true; });
          EXPECT_TRUE(s.ok()) << s.ToString();
        });
        // The second is queued before the first has even prepared.
        while (!second_queued) std::this_thread::yield();
      });
  ASSERT_TRUE(first.ok()) << first.ToString();
  second.join();
  EXPECT_EQ(seen, "1");
}

// SyncBeforeWrite hooks run after the group's prepares and before its Write, once per key for the
// whole group; a failed one fails the group, runs its OnAbort hooks, writes nothing, and leaves
// the queue working.
TEST_F(CommitQueueTest, SyncBeforeWriteRunsOncePerKeyBeforeTheGroupIsWritten) {
  CommitQueue q(db_.get());
  auto* cf = db_->DefaultColumnFamily();
  std::atomic<int> queued{0}, seg_syncs{0};
  std::atomic<bool> leading{false};
  // The first commit leads alone and holds the lead until the next two are queued: they then
  // make one group.
  std::thread lead([&] {
    ASSERT_TRUE(q.Commit([&](Txn& txn) {
                   leading = true;
                   while (queued < 2) std::this_thread::yield();
                   txn.Put(cf, "c0", "v");
                   return Status::Ok();
                 }).ok());
  });
  while (!leading) std::this_thread::yield();
  auto member = [&](const std::string& key) {
    Status s = q.Commit(
        [&, key](Txn& txn) {
          txn.Put(cf, key, "v");
          txn.SyncBeforeWrite("seg", [&] {
            seg_syncs++;
            EXPECT_EQ(Stored("c1"), "<absent>") << "the group was written before its sync";
            EXPECT_EQ(Stored("c2"), "<absent>") << "the group was written before its sync";
            return Status::Ok();
          });
          return Status::Ok();
        },
        [&] { queued++; });
    EXPECT_TRUE(s.ok()) << s.ToString();
  };
  std::thread m1(member, "c1"), m2(member, "c2");
  lead.join();
  m1.join();
  m2.join();
  EXPECT_EQ(seg_syncs.load(), 1);
  EXPECT_EQ(q.stats().groups, 2u);
  EXPECT_EQ(Stored("c1"), "v");
  EXPECT_EQ(Stored("c2"), "v");

  bool aborted = false;
  Status failed = q.Commit([&](Txn& txn) {
    txn.Put(cf, "lost", "v");
    txn.OnAbort([&] { aborted = true; });
    txn.SyncBeforeWrite("seg", [] { return Status::Errno(EIO, "fdatasync"); });
    return Status::Ok();
  });
  EXPECT_EQ(ErrnoFor(failed), EIO) << failed.ToString();
  EXPECT_TRUE(aborted);
  EXPECT_EQ(Stored("lost"), "<absent>");
  EXPECT_TRUE(q.health().ok()) << q.health().ToString();
  ASSERT_TRUE(q.Commit([&](Txn& txn) {
                 txn.Put(cf, "after", "v");
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(Stored("after"), "v");
}

// The queue over RocksDB over the power-loss simulator.
class CommitQueueOnSim : public ::testing::Test {
 protected:
  CommitQueueOnSim() {
    io::RocksEnvOptions reo;
    reo.max_sleep_micros = 0;
    rocks_env_ = io::NewRocksEnv(&sim_, reo);
    EXPECT_TRUE(sim_.CreateDir("/db").ok());
    EXPECT_TRUE(sim_.SyncDir("/").ok());
    Open();
  }
  void Open() {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.env = rocks_env_.get();
    o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(o, "/db", &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
  }
  // Power off, close what is left, power on (unsynced data dropped), reopen.
  void Crash() {
    sim_.PowerOff();
    db_->Close();
    db_.reset();
    sim_.Restart(1);
    Open();
  }
  std::string Stored(const std::string& key) {
    std::string v;
    return db_->Get(rocksdb::ReadOptions(), key, &v).ok() ? v : "<absent>";
  }
  // Makes the next WAL operation of kind `op` (io::kSimSync, io::kSimWrite) fail once with EIO.
  void FailNextWal(uint32_t op) {
    io::FaultRule rule;
    rule.ops = op;
    rule.path_contains = ".log";
    rule.times = 1;
    sim_.AddFaultRule(rule);
  }
  Status PutKey(CommitQueue& q, const std::string& key) {
    return q.Commit([&](Txn& txn) {
      txn.Put(db_->DefaultColumnFamily(), key, "v");
      return Status::Ok();
    });
  }

  io::SimEnv sim_;
  std::unique_ptr<rocksdb::Env> rocks_env_;
  std::unique_ptr<rocksdb::DB> db_;
};

// OnDurable runs only once the WAL sync covering the group has finished: cutting the power in the
// hook loses nothing of the group. Every mutation acknowledged before it survives too.
TEST_F(CommitQueueOnSim, OnDurableRunsAfterTheSync) {
  {
    CommitQueue q(db_.get());
    ASSERT_TRUE(PutKey(q, "before").ok());
    Status s = q.Commit([&](Txn& txn) {
      txn.Put(db_->DefaultColumnFamily(), "k", "v");
      txn.OnDurable([&] { sim_.PowerOff(); });
      return Status::Ok();
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  Crash();
  EXPECT_EQ(Stored("before"), "v");
  EXPECT_EQ(Stored("k"), "v");
}

// Concurrent callers, pipelined groups: every acknowledged mutation survives a power cut taken
// while others are in flight; ten rounds, each cut after a different number of acknowledgments.
TEST_F(CommitQueueOnSim, EveryAcknowledgedMutationSurvivesAPowerCut) {
  std::vector<std::string> acked;
  for (int round = 0; round < 10; ++round) {
    const int cut_after = 20 + 61 * round;
    Mutex acked_mu;
    int done = 0;
    {
      CommitQueue q(db_.get());
      std::vector<std::thread> threads;
      for (int t = 0; t < 6; ++t) {
        threads.emplace_back([&, t] {
          for (int i = 0;; ++i) {
            std::string key =
                std::to_string(round) + "/" + std::to_string(t) + "-" + std::to_string(i);
            if (!PutKey(q, key).ok()) return;
            MutexLock lock(&acked_mu);
            acked.push_back(key);
            if (++done == cut_after) sim_.PowerOff();
          }
        });
      }
      for (auto& th : threads) th.join();
    }
    ASSERT_GE(done, cut_after);
    Crash();
    for (const std::string& k : acked) ASSERT_EQ(Stored(k), "v") << "round " << round << ": " << k;
  }
}

// CommitUnsynced returns without a sync: alone, its writes are lost at a power cut; the next
// durable commit makes every earlier one durable with it, in one sync.
TEST_F(CommitQueueOnSim, UnsyncedCommitsRideTheNextSync) {
  {
    CommitQueue q(db_.get());
    ASSERT_TRUE(q.CommitUnsynced([&](Txn& txn) {
                   txn.Put(db_->DefaultColumnFamily(), "lost", "v");
                   return Status::Ok();
                 }).ok());
    EXPECT_EQ(q.stats().syncs, 0u);
  }
  Crash();
  EXPECT_EQ(Stored("lost"), "<absent>") << "an unsynced commit was synced";
  {
    CommitQueue q(db_.get());
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(q.CommitUnsynced([&, i](Txn& txn) {
                     txn.Put(db_->DefaultColumnFamily(), "u" + std::to_string(i), "v");
                     return Status::Ok();
                   }).ok());
    }
    EXPECT_EQ(q.stats().syncs, 0u);
    ASSERT_TRUE(PutKey(q, "durable").ok());
    EXPECT_EQ(q.stats().syncs, 1u);
    EXPECT_EQ(q.stats().groups, 51u);
  }
  Crash();
  EXPECT_EQ(Stored("durable"), "v");
  for (int i = 0; i < 50; ++i) EXPECT_EQ(Stored("u" + std::to_string(i)), "v") << i;
}

// Unsynced and durable callers mixed in the same groups: every durable one survives a cut.
// Commit with `sync` false answers before the sync; Sync() then makes every such commit durable
// in one WAL sync, and a Sync with nothing new to cover issues none.
TEST_F(CommitQueueOnSim, SyncMakesEveryUnsyncedCommitDurable) {
  {
    CommitQueue q(db_.get());
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(q.Commit(
                       [&, i](Txn& txn) {
                         txn.Put(db_->DefaultColumnFamily(), "u" + std::to_string(i), "v");
                         return Status::Ok();
                       },
                       {}, /*sync=*/false)
                      .ok());
    }
    EXPECT_EQ(q.stats().syncs, 0u);
    ASSERT_TRUE(q.Sync().ok());
    EXPECT_EQ(q.stats().syncs, 1u);
    ASSERT_TRUE(q.Sync().ok());
    EXPECT_EQ(q.stats().syncs, 1u) << "a sync with nothing to cover";
    ASSERT_TRUE(q.Commit(
                     [&](Txn& txn) {
                       txn.Put(db_->DefaultColumnFamily(), "after", "v");
                       return Status::Ok();
                     },
                     {}, /*sync=*/false)
                    .ok());
  }
  Crash();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Stored("u" + std::to_string(i)), "v") << i;
  EXPECT_EQ(Stored("after"), "<absent>") << "committed after the last sync, without one";
}

TEST_F(CommitQueueOnSim, UnsyncedAndDurableCallersShareGroups) {
  std::vector<std::string> durable;
  Mutex mu;
  {
    CommitQueue q(db_.get());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i) {
          std::string key = std::to_string(t) + "-" + std::to_string(i);
          if (t % 2 == 0) {
            if (!q.CommitUnsynced([&](Txn& txn) {
                    txn.Put(db_->DefaultColumnFamily(), key, "v");
                    return Status::Ok();
                  }).ok()) {
              return;
            }
          } else {
            if (!PutKey(q, key).ok()) return;
            MutexLock lock(&mu);
            durable.push_back(key);
            if (durable.size() == 150) sim_.PowerOff();
          }
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  Crash();
  ASSERT_GE(durable.size(), 150u);
  for (const std::string& k : durable) EXPECT_EQ(Stored(k), "v") << k;
}

// A failed WAL sync fails the group that waited on it, and every later Commit: what the sync
// covered may or may not be durable, so nothing more is acknowledged until the engine reopens.
TEST_F(CommitQueueOnSim, AFailedSyncBreaksTheQueue) {
  CommitQueue q(db_.get());
  ASSERT_TRUE(PutKey(q, "a").ok());
  FailNextWal(io::kSimSync);
  Status failed = PutKey(q, "b");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(ErrnoFor(failed), EIO) << failed.ToString();
  Status later = PutKey(q, "c");
  EXPECT_FALSE(later.ok());
  EXPECT_NE(later.ToString().find("reopen"), std::string::npos) << later.ToString();
}

// A failed write to the WAL breaks the queue too: RocksDB's log writer must not be used again.
TEST_F(CommitQueueOnSim, AFailedWriteBreaksTheQueue) {
  CommitQueue q(db_.get());
  ASSERT_TRUE(PutKey(q, "a").ok());
  FailNextWal(io::kSimWrite);
  bool aborted = false;
  Status failed = q.Commit([&](Txn& txn) {
    txn.Put(db_->DefaultColumnFamily(), "b", "v");
    txn.OnAbort([&] { aborted = true; });
    return Status::Ok();
  });
  EXPECT_EQ(ErrnoFor(failed), EIO) << failed.ToString();
  EXPECT_TRUE(aborted);
  EXPECT_FALSE(q.health().ok());
  Status later = PutKey(q, "c");
  EXPECT_NE(later.ToString().find("reopen"), std::string::npos) << later.ToString();
  EXPECT_EQ(Stored("a"), "v");
}

// A raw batch (here a range delete) is written in its turn, durably, and later prepares see it.
TEST_F(CommitQueueOnSim, ARawBatchIsAGroupOfItsOwn) {
  {
    CommitQueue q(db_.get());
    for (const char* k : {"a1", "a2", "b1"}) ASSERT_TRUE(PutKey(q, k).ok());
    rocksdb::WriteBatch b;
    ASSERT_TRUE(b.DeleteRange(db_->DefaultColumnFamily(), "a", "b").ok());
    ASSERT_TRUE(q.CommitBatch(std::move(b)).ok());
    ASSERT_TRUE(q.Commit([&](Txn& txn) {
                   EXPECT_EQ(txn.Get(db_->DefaultColumnFamily(), "a1").status().code(),
                             Status::Code::kNotFound);
                   EXPECT_TRUE(txn.Get(db_->DefaultColumnFamily(), "b1").ok());
                   return Status::Ok();
                 }).ok());
    EXPECT_EQ(q.stats().groups, 4u);
  }
  Crash();
  EXPECT_EQ(Stored("a1"), "<absent>");
  EXPECT_EQ(Stored("a2"), "<absent>");
  EXPECT_EQ(Stored("b1"), "v");
}

}  // namespace
}  // namespace archil::engine
