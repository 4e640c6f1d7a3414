// The engine under a real kill -9, on a real directory (io::PosixEnv()).
//
// Each round: a child process (this binary, run with --child) opens an Engine on a fresh directory
// with sync=true, creates a disk and runs a seeded sequence of creates, writes (<= 64 KiB: intents;
// larger: synced in their segment first), renames and unlinks in its root. After each call returns
// OK it writes the operation's number and description to a pipe; the parent reads them, and sends
// SIGKILL at a random moment. The parent then opens the engine itself (replaying intents, as after
// any crash) and checks the tree against a model of the acknowledged operations: every file with
// its contents byte for byte, no file an acknowledged unlink or rename removed, nothing else. The
// one operation in flight at the kill may or may not have happened; both outcomes are accepted.
//
// Child and parent generate the same operations from the round's seed (the operations depend only
// on the seed and on the model of the ones before). The base seed is printed (base/test_seed.h);
// round r runs seed + r, and a failure names its seed: ARCHIL_TEST_SEED=S ARCHIL_KILL_ROUNDS=1
// replays it (the kill moment is seeded too, but where it lands depends on timing).
// ARCHIL_KILL_ROUNDS sets how many rounds run (default 100), ARCHIL_KILL_DIR where (default
// /var/tmp; each round's directory is removed when it passes).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/test_seed.h"
#include "engine/engine.h"
#include "io/posix_env.h"

extern char** environ;

namespace archil::engine {
namespace {

using posix::kRootIno;
using Files = std::map<std::string, std::string>;  // name in the root -> contents

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

constexpr size_t kMaxFiles = 12;

struct Op {
  enum Kind { kCreate, kWrite, kRename, kUnlink } kind = kCreate;
  std::string name, to;  // to: rename target
  uint64_t offset = 0;
  std::string data;

  std::string Describe() const {
    switch (kind) {
      case kCreate:
        return "create " + name;
      case kWrite:
        return "write " + name + " @" + std::to_string(offset) + " +" + std::to_string(data.size());
      case kRename:
        return "rename " + name + " " + to;
      case kUnlink:
        return "unlink " + name;
    }
    return "?";
  }
};

// The i-th operation of a round, given the files as the operations before it left them.
Op NextOp(uint64_t seed, uint64_t i, const Files& files) {
  std::mt19937_64 rng(seed * 1000003 + i);
  auto pick = [&]() {
    auto it = files.begin();
    std::advance(it, rng() % files.size());
    return it->first;
  };
  Op op;
  const uint64_t r = rng() % 100;
  if (files.empty() || (r < 15 && files.size() < kMaxFiles)) {
    op.kind = Op::kCreate;
    do op.name = "f" + std::to_string(rng() % 32);
    while (files.count(op.name));
  } else if (r < 80) {
    op.kind = Op::kWrite;
    op.name = pick();
    op.offset = rng() % (512 * 1024);
    // Two thirds intents (up to 64 KiB), a third large writes (synced in their segment).
    size_t n = rng() % 3 ? 1 + rng() % kIntentMaxBytes : kIntentMaxBytes + 1 + rng() % (256 * 1024);
    op.data.resize(n);
    for (char& c : op.data) c = static_cast<char>(rng());
  } else if (r < 90) {
    op.kind = Op::kRename;
    op.name = pick();
    do op.to = "f" + std::to_string(rng() % 32);
    while (op.to == op.name);
  } else {
    op.kind = Op::kUnlink;
    op.name = pick();
  }
  return op;
}

void ApplyToModel(const Op& op, Files* files) {
  switch (op.kind) {
    case Op::kCreate:
      (*files)[op.name];
      break;
    case Op::kWrite: {
      std::string& f = (*files)[op.name];
      if (f.size() < op.offset + op.data.size()) f.resize(op.offset + op.data.size(), '\0');
      f.replace(op.offset, op.data.size(), op.data);
      break;
    }
    case Op::kRename: {
      std::string contents = std::move((*files)[op.name]);
      files->erase(op.name);
      (*files)[op.to] = std::move(contents);
      break;
    }
    case Op::kUnlink:
      files->erase(op.name);
      break;
  }
}

EngineOptions Options(const std::string& dir) {
  EngineOptions o;
  o.env = io::PosixEnv();
  o.dir = dir;
  o.clock = &SystemClock::Instance();
  o.sync = true;
  o.segment_blocks = 256;  // 1 MiB segments: large writes seal them often
  o.intent_sync_ms = 50;   // the syncer truncates intents while the load runs
  o.block_cache_mb = 8;
  return o;
}

Status ApplyToEngine(posix::FileSystem* fs, const Op& op) {
  switch (op.kind) {
    case Op::kCreate:
      return fs->Mknod(kRootIno, op.name, S_IFREG | 0644, 0, {}).status();
    case Op::kWrite: {
      ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, fs->Lookup(kRootIno, op.name));
      return fs->Write(a.ino, op.offset, op.data).status();
    }
    case Op::kRename:
      return fs->Rename(kRootIno, op.name, kRootIno, op.to, 0);
    case Op::kUnlink:
      return fs->Unlink(kRootIno, op.name);
  }
  return Status::Errno(EINVAL, "bad op");
}

void WriteAll(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::_Exit(3);
    done += n;
  }
}

// The child: runs operations until killed, acknowledging each on stdout after it returned OK.
int ChildMain(const std::string& dir, uint64_t seed) {
  auto opened = Engine::Open(Options(dir));
  if (!opened.ok()) {
    std::fprintf(stderr, "child: open: %s\n", opened.status().ToString().c_str());
    return 2;
  }
  std::unique_ptr<Engine> engine = std::move(opened).value();
  if (Status s = engine->CreateDisk(DiskNo(1), {}); !s.ok()) {
    std::fprintf(stderr, "child: create disk: %s\n", s.ToString().c_str());
    return 2;
  }
  posix::FileSystem* fs = *engine->Disk(DiskNo(1));
  WriteAll(1, "ready\n");
  Files files;
  for (uint64_t i = 0;; ++i) {
    Op op = NextOp(seed, i, files);
    if (Status s = ApplyToEngine(fs, op); !s.ok()) {
      std::fprintf(stderr, "child: op %llu %s: %s\n", static_cast<unsigned long long>(i),
                   op.Describe().c_str(), s.ToString().c_str());
      return 2;
    }
    WriteAll(1, std::to_string(i) + " " + op.Describe() + "\n");
    ApplyToModel(op, &files);
  }
}

// Reads the engine's root: name -> contents.
Result<Files> ReadTree(posix::FileSystem* fs) {
  Files out;
  for (uint64_t cookie = 0;;) {
    ARCHIL_ASSIGN_OR_RETURN(posix::DirPage page, fs->ReadDir(kRootIno, cookie, 256));
    for (const posix::DirEntry& e : page.entries) {
      ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, fs->GetAttr(e.ino));
      ARCHIL_ASSIGN_OR_RETURN(std::string data, fs->Read(e.ino, 0, a.size));
      out[e.name] = std::move(data);
    }
    if (page.eof || page.entries.empty()) break;
    cookie = page.entries.back().cookie;
  }
  return out;
}

// "" if equal, else the first difference.
std::string Diff(const Files& want, const Files& got) {
  for (const auto& [name, data] : want) {
    auto it = got.find(name);
    if (it == got.end()) return name + " is missing";
    if (it->second.size() != data.size()) {
      return name + " has " + std::to_string(it->second.size()) + " bytes, want " +
             std::to_string(data.size());
    }
    if (it->second != data) {
      size_t at = 0;
      while (it->second[at] == data[at]) ++at;
      return name + " differs at byte " + std::to_string(at);
    }
  }
  for (const auto& [name, data] : got) {
    if (!want.count(name)) return name + " exists but should not";
  }
  return "";
}

struct RoundResult {
  uint64_t acked = 0;
  std::string failure;  // empty: nothing lost
};

RoundResult RunRound(const std::string& dir, uint64_t seed) {
  RoundResult out;
  std::mt19937_64 rng(seed);
  const auto kill_after = std::chrono::microseconds(rng() % 300000);

  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {0, "pipe failed"};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string seed_arg = std::to_string(seed);
  std::vector<char*> argv = {self.data(), const_cast<char*>("--child"),
                             const_cast<char*>(dir.c_str()), seed_arg.data(), nullptr};
  pid_t pid;
  int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) return {0, "posix_spawn failed"};
  FILE* acks = ::fdopen(pipe_fds[0], "r");

  // Wait for "ready", then kill after the seeded delay (a thread, while this one reads acks).
  char line[512];
  if (!std::fgets(line, sizeof line, acks) || std::string(line) != "ready\n") {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    std::fclose(acks);
    return {0, "child did not get ready"};
  }
  std::thread killer([pid, kill_after] {
    std::this_thread::sleep_for(kill_after);
    ::kill(pid, SIGKILL);
  });
  Files acked;
  while (std::fgets(line, sizeof line, acks)) {
    Op op = NextOp(seed, out.acked, acked);
    std::string want = std::to_string(out.acked) + " " + op.Describe() + "\n";
    if (want != line) {
      out.failure = "ack " + std::string(line) + " does not match the generator's " + want;
      break;
    }
    ApplyToModel(op, &acked);
    ++out.acked;
  }
  killer.join();
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::fclose(acks);
  if (!out.failure.empty()) return out;
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    return {out.acked, "child ended by itself (status " + std::to_string(status) + ")"};
  }

  // Reopen as after a crash; the op in flight may or may not have happened.
  Files with_next = acked;
  ApplyToModel(NextOp(seed, out.acked, acked), &with_next);
  auto opened = Engine::Open(Options(dir));
  if (!opened.ok()) return {out.acked, "reopen: " + opened.status().ToString()};
  std::unique_ptr<Engine> engine = std::move(opened).value();
  auto disk = engine->Disk(DiskNo(1));
  if (!disk.ok()) return {out.acked, "disk 1: " + disk.status().ToString()};
  Result<Files> got = ReadTree(*disk);
  if (!got.ok()) return {out.acked, "reading the tree: " + got.status().ToString()};
  std::string d1 = Diff(acked, *got), d2 = Diff(with_next, *got);
  if (!d1.empty() && !d2.empty()) {
    out.failure = "after " + std::to_string(out.acked) + " acknowledged ops: " + d1 +
                  " (or, with the op in flight, " + d2 + ")";
  }
  return out;
}

TEST(EngineKillTest, AcknowledgedOperationsSurviveKill9) {
  const uint64_t base = TestSeed();
  const uint64_t rounds = EnvU64("ARCHIL_KILL_ROUNDS", 100);
  const char* root_env = std::getenv("ARCHIL_KILL_DIR");
  std::string root = root_env && *root_env ? root_env : "/var/tmp";
  std::string tmpl = root + "/engine_kill_test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << "mkdtemp in " << root;
  uint64_t lost = 0, acked = 0;
  for (uint64_t r = 0; r < rounds; ++r) {
    const uint64_t seed = base + r;
    const std::string dir = tmpl + "/" + std::to_string(seed);
    RoundResult res = RunRound(dir, seed);
    acked += res.acked;
    if (!res.failure.empty()) {
      ++lost;
      ADD_FAILURE() << "seed " << seed << " (replay: ARCHIL_TEST_SEED=" << seed
                    << " ARCHIL_KILL_ROUNDS=1; directory kept: " << dir << "): " << res.failure;
    } else {
      std::filesystem::remove_all(dir);
    }
  }
  if (lost == 0) std::filesystem::remove_all(tmpl);
  std::printf("%llu kills, %llu acknowledged ops, %llu lost\n",
              static_cast<unsigned long long>(rounds), static_cast<unsigned long long>(acked),
              static_cast<unsigned long long>(lost));
}

}  // namespace
}  // namespace archil::engine

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--child") {
    return archil::engine::ChildMain(argv[2], std::strtoull(argv[3], nullptr, 10));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
