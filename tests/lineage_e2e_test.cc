// Checkpoints and branches end to end: the CLI and the API over a real `archil server`, read and
// written through real FUSE mounts. What a checkpoint holds (every write that returned before
// the command, buffered ones included), isolation between a disk and its branches both ways,
// checkpoints that read back the same after restarts and deletes, Idempotency-Key retries, a
// deleted root kept for its branches, bad names, and a server killed during checkpoints and
// branches (each is then either complete or absent).
//
// Skipped (not failed) without root or /dev/fuse, unless ARCHIL_REQUIRE_FUSE=1 (CI sets it).
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstring>
#include <set>
#include <thread>

#include "api/mount_control.h"
#include "base/ids.h"
#include "http/http_client.h"
#include "mount_harness.h"

namespace archil::testing {
namespace {

class LineageTest : public MountTest {
 protected:
  std::string Mnt2() {
    std::string m = mnt_ + "2";
    fs::create_directories(m);
    return m;
  }
  // Makes a branch with the CLI; returns its disk id.
  std::string Branch(const std::string& disk, const std::string& name, const std::string& cp,
                     const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"-q", "branches",          "create", disk,
                                     name, "--from-checkpoint", cp};
    for (const auto& a : extra) args.push_back(a);
    Ran r = Archil(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string id = r.out.substr(0, r.out.find('\n'));
    EXPECT_TRUE(DiskId::IsValid(id)) << r.out;
    return id;
  }
  Ran Checkpoint(const std::string& mnt, const std::string& name) {
    return Archil({"checkpoints", "create", mnt, name});
  }
  json Json(const std::vector<std::string>& args) {
    std::vector<std::string> a = {"--json"};
    a.insert(a.end(), args.begin(), args.end());
    Ran r = Archil(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }
};

// A checkpoint holds every write that returned before the command, also those still only in
// the kernel's page cache; a branch of it sees exactly that, and writes on either side never
// show on the other.
TEST_F(LineageTest, CheckpointsHoldBufferedWritesAndBranchesAreIsolated) {
  StartServer();
  std::string disk = CreateDisk("iso");
  ASSERT_EQ(Mount("iso").exit_code, 0);
  {
    std::ofstream(mnt_ + "/a") << "before";  // buffered: no fsync
    fs::create_directories(mnt_ + "/dir");
    std::ofstream(mnt_ + "/dir/big") << std::string(5 << 20, 'b');
  }
  Ran c = Checkpoint(mnt_, "cp1");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  { std::ofstream(mnt_ + "/a") << "after"; }
  std::ofstream(mnt_ + "/late") << "late";

  std::string b1 = Branch(disk, "b1", "cp1");
  std::string b2 = Branch("iso", "b2", "cp1");  // by name too
  std::string m2 = Mnt2();
  ASSERT_EQ(Archil({"mount", "-q", b1, m2}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/a"), "before");
  EXPECT_EQ(Slurp(m2 + "/dir/big"), std::string(5 << 20, 'b'));
  EXPECT_FALSE(fs::exists(m2 + "/late"));
  { std::ofstream(m2 + "/a") << "branch"; }
  std::ofstream(m2 + "/only-b1") << "1";
  fs::remove(m2 + "/dir/big");
  ASSERT_EQ(Checkpoint(m2, "b1-cp").exit_code, 0);
  // The parent is untouched by its branch.
  EXPECT_EQ(Slurp(mnt_ + "/a"), "after");
  EXPECT_TRUE(fs::exists(mnt_ + "/dir/big"));
  EXPECT_FALSE(fs::exists(mnt_ + "/only-b1"));
  ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);
  // A sibling sees neither.
  ASSERT_EQ(Archil({"mount", "-q", b2, m2}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/a"), "before");
  EXPECT_FALSE(fs::exists(m2 + "/only-b1"));
  EXPECT_TRUE(fs::exists(m2 + "/dir/big"));
  ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);

  // Lists: the disk's checkpoints, a branch's by --branch, and the lineage's branches.
  json cps = Json({"checkpoints", "list", "iso"});
  ASSERT_TRUE(cps.is_array());
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].value("checkpoint_name", ""), "cp1");
  EXPECT_EQ(cps[0].value("status", ""), "committed");
  json bcps = Json({"checkpoints", "list", disk, "--branch", "b1"});
  ASSERT_EQ(bcps.size(), 1u);
  EXPECT_EQ(bcps[0].value("checkpoint_name", ""), "b1-cp");
  json brs = Json({"branches", "list", disk});
  ASSERT_EQ(brs.size(), 2u);
  EXPECT_EQ(brs[0].value("branch_name", ""), "b1");
  EXPECT_EQ(brs[0].value("filesystem_id", ""), b1);
  EXPECT_EQ(brs[0].value("from_checkpoint_name", ""), "cp1");
  json got = Json({"disks", "get", b1});
  EXPECT_EQ(got.value("branchName", ""), "b1");
  EXPECT_EQ(got.value("rootId", ""), disk);

  // A branch of a branch, from the branch's checkpoint.
  std::string b3 = Branch(disk, "b3", "b1-cp", {"--from-branch", "b1"});
  ASSERT_EQ(Archil({"mount", "-q", b3, m2}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/a"), "branch");
  EXPECT_FALSE(fs::exists(m2 + "/dir/big"));
  ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);
}

// Bad names, duplicates and unknown checkpoints get clear errors and change nothing.
TEST_F(LineageTest, BadRequestsAreRefusedClearly) {
  StartServer();
  std::string disk = CreateDisk("bad");
  ASSERT_EQ(Mount("bad").exit_code, 0);
  ASSERT_EQ(Checkpoint(mnt_, "cp").exit_code, 0);
  Ran dup = Checkpoint(mnt_, "cp");
  EXPECT_EQ(dup.exit_code, 5) << dup.err;
  EXPECT_NE(dup.err.find("exists"), std::string::npos) << dup.err;
  Ran bad = Checkpoint(mnt_, "no/slash");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  Ran notmnt = Checkpoint(dir_.string(), "x");
  EXPECT_NE(notmnt.exit_code, 0);
  EXPECT_NE(notmnt.err.find("not an archil mount"), std::string::npos) << notmnt.err;

  Branch(disk, "b", "cp");
  EXPECT_EQ(Archil({"branches", "create", disk, "b", "--from-checkpoint", "cp"}).exit_code, 5);
  EXPECT_EQ(Archil({"branches", "create", disk, "c", "--from-checkpoint", "nope"}).exit_code, 4);
  EXPECT_EQ(
      Archil({"branches", "create", disk, "c", "--from-checkpoint", "cp", "--from-branch", "nope"})
          .exit_code,
      4);
  const std::string base = "/api/disks/" + disk + "/branches";
  for (const char* body : {R"({"branch_name":"a b","from_checkpoint":"cp"})",
                           R"({"branch_name":"","from_checkpoint":"cp"})",
                           R"({"branch_name":"ok","from_checkpoint":"a/b"})",
                           R"({"branch_name":"ok"})", R"({"branch_name":"ok","x":1})", "[1]"}) {
    HttpResponse r = Api("POST", base, body);
    EXPECT_EQ(r.status, 400) << body << " " << r.body;
  }
  EXPECT_EQ(Api("POST", base, R"({"branch_name":"b","from_checkpoint":"cp"})").status, 409);
  EXPECT_EQ(Api("POST", base, R"({"branch_name":"n","from_checkpoint":"zz"})").status, 404);
  EXPECT_EQ(Api("GET", "/api/disks/dsk-0000000000000001/checkpoints", "").status, 404);
  EXPECT_EQ(Api("GET", base + "/nope", "").status, 404);
  EXPECT_EQ(Api("PUT", base, "").status, 405);
  EXPECT_EQ(Json({"branches", "list", disk}).size(), 1u);  // nothing half-made

  // Another disk's token opens neither this disk nor its branches.
  std::string branch = Json({"branches", "get", disk, "b"}).value("filesystem_id", "");
  CreateDisk("other");  // its token replaces this disk's in the environment
  std::string m2 = Mnt2();
  EXPECT_EQ(Archil({"mount", "-q", branch, m2}).exit_code, 4);
  EXPECT_EQ(Archil({"mount", "-q", disk, m2}).exit_code, 4);
}

// The same Idempotency-Key gets the first branch back (200, same disk), a new key a conflict.
TEST_F(LineageTest, IdempotencyKeysMakeRetriesSafe) {
  StartServer();
  std::string disk = CreateDisk("idem");
  ASSERT_EQ(Mount("idem").exit_code, 0);
  ASSERT_EQ(Checkpoint(mnt_, "cp").exit_code, 0);
  const std::string base = "/api/disks/" + disk + "/branches";
  const std::string body = R"({"branch_name":"b","from_checkpoint":"cp"})";
  HttpResponse first = Api("POST", base, body, {{"Idempotency-Key", "k-1"}});
  ASSERT_EQ(first.status, 201) << first.body;
  std::string id = json::parse(first.body)["data"].value("filesystem_id", "");
  // After a restart too (the key lives in the engine's branch record).
  StopServer();
  StartServer();
  HttpResponse again = Api("POST", base, body, {{"Idempotency-Key", "k-1"}});
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(again.body)["data"].value("filesystem_id", ""), id);
  EXPECT_EQ(Api("POST", base, body, {{"Idempotency-Key", "k-2"}}).status, 409);
  EXPECT_EQ(Api("POST", base, R"({"branch_name":"other","from_checkpoint":"cp"})",
                {{"Idempotency-Key", "k-1"}})
                .status,
            409);
  EXPECT_EQ(Api("POST", base, body, {{"Idempotency-Key", "bad key"}}).status, 400);
  EXPECT_EQ(Json({"branches", "list", disk}).size(), 1u);
}

// Checkpoints read back the same after restarts, after writes, after other checkpoints and the
// branches made from them are deleted; a deleted root with branches is hidden, its branches keep
// working with its token, and it goes with its last branch.
TEST_F(LineageTest, CheckpointsSurviveRestartsDeletesAndAHiddenRoot) {
  StartServer();
  std::string disk = CreateDisk("keep");
  ASSERT_EQ(Mount("keep").exit_code, 0);
  std::ofstream(mnt_ + "/f") << "one";
  ASSERT_EQ(Checkpoint(mnt_, "c1").exit_code, 0);
  { std::ofstream(mnt_ + "/f") << "two"; }
  ASSERT_EQ(Checkpoint(mnt_, "c2").exit_code, 0);
  { std::ofstream(mnt_ + "/f") << "three"; }
  std::string b2 = Branch(disk, "from-c2", "c2");
  std::string b1 = Branch(disk, "from-c1", "c1");
  ASSERT_EQ(Archil({"branches", "delete", disk, "from-c2"}).exit_code, 0);
  ASSERT_EQ(Archil({"checkpoints", "delete", disk, "c2"}).exit_code, 0);
  EXPECT_EQ(Archil({"checkpoints", "delete", disk, "c2"}).exit_code, 4);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  StopServer();
  StartServer();
  std::string m2 = Mnt2();
  ASSERT_EQ(Archil({"mount", "-q", b1, m2}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/f"), "one");
  ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);
  EXPECT_EQ(Json({"checkpoints", "list", disk}).size(), 1u);

  // Delete the root: hidden, not listed or mountable; its branch keeps working with its token.
  Ran del = Archil({"disks", "delete", disk});
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_NE(del.out.find("branches keep working"), std::string::npos) << del.out;
  EXPECT_TRUE(Json({"disks", "list"}).empty());
  EXPECT_EQ(Mount(disk).exit_code, 4);
  StopServer();
  StartServer();  // reconciliation keeps the lineage
  ASSERT_EQ(Archil({"mount", "-q", b1, m2}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/f"), "one");
  std::ofstream(m2 + "/g") << "on the branch";
  ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);
  // The name is free again for a new disk.
  CreateDisk("keep");
  // The last branch goes, and the hidden root with it: its token no longer opens anything.
  ASSERT_EQ(Archil({"disks", "delete", b1}).exit_code, 0);
  EXPECT_NE(Archil({"mount", "-q", b1, m2}).exit_code, 0);
}

// `archil mount --checkpoint NAME`: the checkpoint as it was, read-only (EROFS), beside a
// writable mount of the same disk; an unknown checkpoint is refused; deleting the checkpoint
// ends its mounts first.
TEST_F(LineageTest, ACheckpointMountsReadOnly) {
  StartServer();
  std::string disk = CreateDisk("ro");
  ASSERT_EQ(Mount("ro").exit_code, 0);
  fs::create_directories(mnt_ + "/d");
  std::ofstream(mnt_ + "/d/f") << "frozen";
  ASSERT_EQ(Checkpoint(mnt_, "cp").exit_code, 0);
  { std::ofstream(mnt_ + "/d/f") << "moved on"; }
  // A branch made from the checkpoint and deleted again leaves the checkpoint as it was.
  Branch(disk, "short-lived", "cp");
  ASSERT_EQ(Archil({"branches", "delete", disk, "short-lived"}).exit_code, 0);
  std::string m2 = Mnt2();
  Ran bad = Archil({"mount", "-q", disk, m2, "--checkpoint", "nope"});
  EXPECT_EQ(bad.exit_code, 4) << bad.err;
  EXPECT_NE(bad.err.find("nope"), std::string::npos) << bad.err;
  Ran m = Archil({"mount", "-q", disk, m2, "--checkpoint", "cp"});
  ASSERT_EQ(m.exit_code, 0) << m.err;  // not refused: the head is mounted, but this is a view
  EXPECT_EQ(Slurp(m2 + "/d/f"), "frozen");
  EXPECT_EQ(ErrnoOr0(open((m2 + "/d/g").c_str(), O_CREAT | O_WRONLY, 0644)), EROFS);
  EXPECT_EQ(ErrnoOr0(open((m2 + "/d/f").c_str(), O_WRONLY)), EROFS);
  EXPECT_EQ(ErrnoOr0(unlink((m2 + "/d/f").c_str())), EROFS);
  Ran st = Archil({"status", m2});
  EXPECT_NE(st.out.find(disk + "@cp"), std::string::npos) << st.out;
  // The writable mount goes on; the view does not change.
  { std::ofstream(mnt_ + "/d/f") << "again"; }
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/d/f"), "frozen");
  ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);

  // A delete of the checkpoint ends the mounts of it.
  ASSERT_EQ(Archil({"mount", "-q", disk, m2, "--checkpoint", "cp"}).exit_code, 0);
  ASSERT_EQ(Archil({"checkpoints", "delete", disk, "cp"}).exit_code, 0);
  std::string later = Slurp(m2 + "/d/f");  // the page cache may still have it; never new data
  EXPECT_TRUE(later.empty() || later == "frozen") << later;
  EXPECT_NE(ErrnoOr0(open((m2 + "/d/other").c_str(), O_RDONLY)), 0);
  EXPECT_EQ(Archil({"unmount", "-f", m2}).exit_code, 0);
  EXPECT_EQ(Archil({"mount", "-q", disk, m2, "--checkpoint", "cp"}).exit_code, 4);
}

// A checkpoint mount is a read-only view of a checkpoint: it takes no checkpoints (they would
// be of the live disk). The CLI refuses with EROFS (exit 3) and says why; so does the daemon to
// a client that talks to its control socket itself (and the server to a session of the view
// that sends CHECKPOINT_CREATE itself: disk_server_test). Mounts of the disk itself, read-only
// ones included, still take them.
TEST_F(LineageTest, ACheckpointMountTakesNoCheckpoints) {
  StartServer();
  std::string disk = CreateDisk("view");
  ASSERT_EQ(Mount("view").exit_code, 0);
  std::ofstream(mnt_ + "/f") << "one";
  ASSERT_EQ(Checkpoint(mnt_, "cp").exit_code, 0);
  std::string m2 = Mnt2();
  ASSERT_EQ(Archil({"mount", "-q", disk, m2, "--checkpoint", "cp"}).exit_code, 0);

  Ran refused = Checkpoint(m2, "from-view");
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_NE(refused.err.find("read-only view of checkpoint cp"), std::string::npos) << refused.err;

  // Past the CLI: one request on the daemon's control socket, as the CLI would send it.
  const std::string sock = MountControlPath((dir_ / "run").string(), NormalizeMountpoint(m2));
  Result<UnixAddress> addr = UnixAddress::For(sock);
  ASSERT_TRUE(addr.ok()) << addr.status().ToString();
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ASSERT_EQ(connect(fd, addr->addr(), addr->size()), 0) << std::strerror(errno);
  const std::string req = EncodeControlRequest({"checkpoint_create", "raw", ""});
  ASSERT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  std::string line;
  char buf[4096];
  for (ssize_t n; line.find('\n') == std::string::npos && (n = read(fd, buf, sizeof buf)) > 0;) {
    line.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  Result<ControlReply> reply = DecodeControlReply(line);
  ASSERT_TRUE(reply.ok()) << line;
  EXPECT_EQ(ErrnoFor(reply->status), EROFS) << line;
  EXPECT_NE(reply->status.message().find("checkpoint cp"), std::string::npos) << line;

  json cps = Json({"checkpoints", "list", disk});
  ASSERT_TRUE(cps.is_array());
  ASSERT_EQ(cps.size(), 1u) << cps.dump();
  EXPECT_EQ(cps[0].value("checkpoint_name", ""), "cp");
  ASSERT_EQ(Checkpoint(mnt_, "cp2").exit_code, 0);
  // A --read-only mount of the disk itself is no view: it takes them too.
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("view", {"--read-only"}).exit_code, 0);
  Ran ro = Checkpoint(mnt_, "cp3");
  EXPECT_EQ(ro.exit_code, 0) << ro.err;
  EXPECT_EQ(Json({"checkpoints", "list", disk}).size(), 3u);
}

// A deleted root kept for its branches still has its tokens, which open the branches: they are
// listed, added and revoked through a branch's id or the root's own, and a revoked one ends the
// mounts it opened (their requests fail with EIO) and mounts nothing more.
TEST_F(LineageTest, AHiddenRootsTokensCanBeRevoked) {
  StartServer();
  std::string disk = CreateDisk("rev");
  const std::string token = env_["ARCHIL_MOUNT_TOKEN"];
  json users = Json({"users", "list", disk});
  ASSERT_EQ(users.size(), 1u) << users.dump();
  const std::string first = users[0].value("identifier", "");
  ASSERT_EQ(Mount("rev").exit_code, 0);
  std::ofstream(mnt_ + "/f") << "one";
  ASSERT_EQ(Checkpoint(mnt_, "cp").exit_code, 0);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  std::string b = Branch(disk, "b", "cp");
  ASSERT_EQ(Archil({"disks", "delete", disk}).exit_code, 0);

  std::string m2 = Mnt2();
  ASSERT_EQ(Archil({"mount", "-q", b, m2}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/f"), "one");
  // Listed through the branch and through the hidden root.
  EXPECT_EQ(Json({"users", "list", b}).size(), 1u);
  EXPECT_EQ(Json({"users", "list", disk}).size(), 1u);
  // Added through either: a token that mounts the branch.
  const std::string second =
      Json({"users", "add", disk, "--nickname", "second"}).value("token", "");
  ASSERT_EQ(second.rfind("adt_", 0), 0u);
  json both = Json({"users", "list", b});
  ASSERT_EQ(both.size(), 2u) << both.dump();
  const std::string second_id = both[1].value("identifier", "");

  // Revoked through the branch: the branch's mount made with it ends.
  Ran removed = Archil({"users", "remove", b, first});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  const std::string victim = m2 + "/after-revoke";
  auto create_errno = [&] {  // in a child, so that a mount that waits cannot hang the test
    return RunAs(0, 0, [&] { return ErrnoOr0(open(victim.c_str(), O_CREAT | O_WRONLY, 0644)); });
  };
  EXPECT_EQ(create_errno(), EIO);
  EXPECT_EQ(Archil({"unmount", "-f", m2}).exit_code, 0);
  Ran again = Archil({"mount", "-q", b, m2});
  EXPECT_EQ(again.exit_code, 3) << again.err;
  EXPECT_EQ(Archil({"users", "remove", b, first}).exit_code, 4);

  // The other token mounts the branch, until it is revoked through the root's id.
  ASSERT_EQ(Archil({"mount", "-q", b, m2}, {{"ARCHIL_MOUNT_TOKEN", second}}).exit_code, 0);
  EXPECT_EQ(Slurp(m2 + "/f"), "one");
  ASSERT_EQ(Archil({"users", "remove", disk, second_id}).exit_code, 0);
  EXPECT_EQ(create_errno(), EIO);
  EXPECT_EQ(Archil({"unmount", "-f", m2}).exit_code, 0);
  EXPECT_TRUE(Json({"users", "list", b}).empty());
  EXPECT_EQ(Archil({"mount", "-q", b, m2}, {{"ARCHIL_MOUNT_TOKEN", second}}).exit_code, 3);
  EXPECT_EQ(Archil({"mount", "-q", b, m2}, {{"ARCHIL_MOUNT_TOKEN", token}}).exit_code, 3);
}

// Space: a branch that rewrites part of a file costs about what it rewrote, and deleting the
// branch gives that back (measured on the server's data directory, in allocated blocks).
TEST_F(LineageTest, ABranchCostsWhatItRewritesAndGivesItBack) {
  StartServer();
  std::string disk = CreateDisk("space");
  ASSERT_EQ(Mount("space").exit_code, 0);
  const std::string big(32 << 20, 'x');
  {
    int fd = open((mnt_ + "/big").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, big.data(), big.size()), static_cast<ssize_t>(big.size()));
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }
  ASSERT_EQ(Checkpoint(mnt_, "base").exit_code, 0);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  std::string b = Branch(disk, "rewrite", "base");
  auto used_mib = [&] {
    // syncfs of the data directory's file system only: a global sync() would wait on every
    // other mount of the machine, a stale one included.
    const int data_fd = open((dir_ / "data").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (data_fd >= 0) {
      syncfs(data_fd);
      close(data_fd);
    }
    uintmax_t blocks = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "data")) {
      struct stat st {};
      if (lstat(e.path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) blocks += st.st_blocks;
    }
    return static_cast<double>(blocks) * 512 / (1 << 20);
  };
  const double before = used_mib();
  ASSERT_EQ(Archil({"mount", "-q", b, mnt_}).exit_code, 0);
  {
    const std::string part(8 << 20, 'y');
    int fd = open((mnt_ + "/big").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, part.data(), part.size(), 4 << 20), static_cast<ssize_t>(part.size()));
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  const double after = used_mib();
  EXPECT_GT(after - before, 6.0) << before << " -> " << after;
  EXPECT_LT(after - before, 14.0) << before << " -> " << after;
  ASSERT_EQ(Archil({"branches", "delete", disk, "rewrite"}).exit_code, 0);
  double freed = used_mib();
  for (int i = 0; i < 100 && freed > before + 2.0; ++i) {  // the purge runs in the background
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    freed = used_mib();
  }
  EXPECT_LT(freed, before + 2.0) << before << " -> " << after << " -> " << freed;
  // The root still reads the file as the checkpoint had it.
  ASSERT_EQ(Mount("space").exit_code, 0);
  EXPECT_EQ(Slurp(mnt_ + "/big"), big);
}

// The server's file system full (a small tmpfs): a checkpoint and a branch either work whole
// or fail with a clear error and leave nothing half-made; the branch, if made, mounts and reads.
TEST_F(LineageTest, AFullServerDiskLeavesNothingHalfMade) {
  // The engine keeps 256 MiB free for deletes and its own flushes; see MountTest's full disk.
  ScopedTmpfs data((dir_ / "data").string(), "400m");
  ASSERT_TRUE(data.ok()) << std::strerror(data.error());
  StartServer();
  std::string disk = CreateDisk("full");
  ASSERT_EQ(Mount("full").exit_code, 0);
  std::ofstream(mnt_ + "/kept") << "kept";
  ASSERT_EQ(Checkpoint(mnt_, "before").exit_code, 0);
  {
    int fd = open((mnt_ + "/fill").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    std::vector<char> chunk(1 << 20, 'f');
    int i = 0, err = 0;
    for (; i < 400; ++i) {
      if (pwrite(fd, chunk.data(), chunk.size(), off_t{i} << 20) != ssize_t(chunk.size()) ||
          fsync(fd) != 0) {
        err = errno;
        break;
      }
    }
    close(fd);
    ASSERT_EQ(err, ENOSPC) << "after " << i << " MiB";
  }
  Ran cp = Checkpoint(mnt_, "when-full");
  Ran br = Archil({"-q", "branches", "create", disk, "when-full", "--from-checkpoint", "before"});
  std::set<std::string> cps;
  for (const json& c : Json({"checkpoints", "list", disk}))
    cps.insert(c.value("checkpoint_name", ""));
  EXPECT_EQ(cps.count("when-full") > 0, cp.exit_code == 0) << cp.err;
  if (cp.exit_code != 0) {
    EXPECT_NE(cp.err.find("space"), std::string::npos) << cp.err;
  }
  json brs = Json({"branches", "list", disk});
  EXPECT_EQ(brs.size(), br.exit_code == 0 ? 1u : 0u) << br.err;
  if (br.exit_code == 0) {
    std::string m2 = Mnt2();
    ASSERT_EQ(Archil({"mount", "-q", brs[0].value("filesystem_id", ""), m2}).exit_code, 0);
    EXPECT_EQ(Slurp(m2 + "/kept"), "kept");
    EXPECT_FALSE(fs::exists(m2 + "/fill"));
    ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);
  } else {
    EXPECT_NE(br.err.find("space"), std::string::npos) << br.err;
  }
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

// kill -9 during a run of checkpoints and branches: after the restart each one the CLI
// reported is there and reads back whole; none is half-made.
TEST_F(LineageTest, AKilledServerLeavesEachCheckpointAndBranchWholeOrAbsent) {
  // A fixed port, so the mount reconnects to the restarted server.
  const std::vector<std::string> listen = {"--mount-listen",
                                           "127.0.0.1:" + std::to_string(FreePort())};
  StartServer(listen);
  std::string disk = CreateDisk("crash");
  ASSERT_EQ(Mount("crash").exit_code, 0);
  std::vector<std::string> made_cps, made_branches;
  std::atomic<bool> stop{false};
  std::atomic<int> branches_made{0};
  std::atomic<bool> loop_done{false};
  // Killed mid-run, once two branches exist (an event, not a guessed time: a slow build makes
  // fewer in the same time), and started again: requests in flight then fail or wait for it.
  std::thread killer([&] {
    for (int waited = 0; branches_made < 2 && !loop_done && waited < 120000; waited += 5) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    KillServer();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    StartServer(listen);
    stop = true;
  });
  for (int i = 0; i < 200 && !stop; ++i) {
    std::string name = "c" + std::to_string(i);
    { std::ofstream(mnt_ + "/f" + std::to_string(i)) << name; }
    if (Checkpoint(mnt_, name).exit_code != 0) break;
    made_cps.push_back(name);
    if (Archil(
            {"-q", "branches", "create", disk, "b" + std::to_string(i), "--from-checkpoint", name})
            .exit_code != 0) {
      break;
    }
    made_branches.push_back("b" + std::to_string(i));
    ++branches_made;
  }
  loop_done = true;
  killer.join();
  Archil({"unmount", "-f", mnt_});
  ASSERT_GT(made_cps.size(), 0u);
  json cps = Json({"checkpoints", "list", disk});
  std::set<std::string> have;
  for (const json& c : cps) {
    EXPECT_EQ(c.value("status", ""), "committed");
    have.insert(c.value("checkpoint_name", ""));
  }
  for (const std::string& c : made_cps) EXPECT_TRUE(have.count(c)) << c;
  json brs = Json({"branches", "list", disk});
  std::set<std::string> branches;
  for (const json& b : brs) branches.insert(b.value("branch_name", ""));
  for (const std::string& b : made_branches) EXPECT_TRUE(branches.count(b)) << b;
  // The newest branch reads back whole: it holds every file written before its checkpoint.
  ASSERT_FALSE(brs.empty());
  const json& last = brs.back();
  const std::string cp = last.value("from_checkpoint_name", "");
  const int n = std::stoi(cp.substr(1));
  std::string m2 = Mnt2();
  ASSERT_EQ(Archil({"mount", "-q", last.value("filesystem_id", ""), m2}).exit_code, 0);
  for (int i = 0; i <= n; ++i) {
    EXPECT_EQ(Slurp(m2 + "/f" + std::to_string(i)), "c" + std::to_string(i)) << i;
  }
  EXPECT_FALSE(fs::exists(m2 + "/f" + std::to_string(n + 2)));
  ASSERT_EQ(Archil({"unmount", m2}).exit_code, 0);
}

}  // namespace
}  // namespace archil::testing
