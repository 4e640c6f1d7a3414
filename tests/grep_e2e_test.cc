// POST /api/disks/{id}/grep end to end: files written through a real FUSE mount of a real
// `archil server`, searched over HTTP as a user of the API would; a checkpoint searched as it was;
// the bounds and the refusals (bad bodies, patterns that do not compile, unknown disks,
// directories and checkpoints, a pattern that would backtrack forever elsewhere).
//
// Skipped (not failed) without root or /dev/fuse, unless ARCHIL_REQUIRE_FUSE=1 (CI sets it).
#include <fcntl.h>
#include <unistd.h>

#include "mount_harness.h"

namespace archil::testing {
namespace {

class GrepApiTest : public MountTest {
 protected:
  HttpResponse Grep(const std::string& disk, const json& body) {
    return Api("POST", "/api/disks/" + disk + "/grep", body.dump());
  }
  // The envelope's data of a 200, or null.
  json Data(const HttpResponse& r) {
    json j = json::parse(r.body, nullptr, false);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 && j.is_object() ? j["data"] : json();
  }
  void ExpectRefused(const HttpResponse& r, int status, const std::string& says) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(r.body.find(says), std::string::npos) << r.body;
  }
};

TEST_F(GrepApiTest, FindsWhatWasWrittenThroughTheMountByFileAndLine) {
  StartServer();
  std::string disk = CreateDisk("g1");
  ASSERT_EQ(Mount("g1").exit_code, 0);
  fs::create_directories(mnt_ + "/src/deep");
  std::ofstream(mnt_ + "/src/a.c") << "int main() {\n  return needle;\n}\n";
  std::ofstream(mnt_ + "/src/deep/b.c") << "// needle\n";
  std::ofstream(mnt_ + "/top.txt") << "no match here\nNEEDLE shouting\n";
  SyncMount();

  json d = Data(Grep(disk, {{"pattern", "needle"}, {"recursive", true}}));
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["stoppedReason"], "completed");
  EXPECT_EQ(d["filesScanned"], 3);
  EXPECT_TRUE(d["durationMs"].is_number_unsigned());
  ASSERT_EQ(d["matches"].size(), 2u) << d.dump();
  EXPECT_EQ(d["matches"][0],
            json({{"file", "/src/a.c"}, {"line", 2}, {"text", "  return needle;"}}));
  EXPECT_EQ(d["matches"][1], json({{"file", "/src/deep/b.c"}, {"line", 1}, {"text", "// needle"}}));

  // Not recursive: only the directory's own files. (?i): RE2's flags work.
  d = Data(Grep(disk, {{"pattern", "(?i)^needle"}, {"directory", "/"}}));
  ASSERT_EQ(d["matches"].size(), 1u) << d.dump();
  EXPECT_EQ(d["matches"][0]["file"], "/top.txt");
  EXPECT_EQ(d["filesScanned"], 1);

  // maxResults bounds the matches and says so.
  for (int i = 0; i < 20; ++i) std::ofstream(mnt_ + "/many" + std::to_string(i)) << "hit\nhit\n";
  SyncMount();
  d = Data(Grep(disk, {{"pattern", "hit"}, {"maxResults", 5}}));
  EXPECT_EQ(d["stoppedReason"], "max_results");
  EXPECT_EQ(d["matches"].size(), 5u);
}

TEST_F(GrepApiTest, ACheckpointIsSearchedAsItWas) {
  StartServer();
  std::string disk = CreateDisk("g2");
  ASSERT_EQ(Mount("g2").exit_code, 0);
  std::ofstream(mnt_ + "/notes") << "old text\n";
  Ran c = Archil({"checkpoints", "create", mnt_, "cp1"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::ofstream(mnt_ + "/notes") << "new text\n";
  SyncMount();
  json head = Data(Grep(disk, {{"pattern", "text"}}));
  ASSERT_EQ(head["matches"].size(), 1u);
  EXPECT_EQ(head["matches"][0]["text"], "new text");
  json then = Data(Grep(disk, {{"pattern", "text"}, {"checkpoint", "cp1"}}));
  ASSERT_EQ(then["matches"].size(), 1u);
  EXPECT_EQ(then["matches"][0]["text"], "old text");
  ExpectRefused(Grep(disk, {{"pattern", "text"}, {"checkpoint", "nope"}}), 404, "nope");
}

TEST_F(GrepApiTest, BadRequestsAreRefusedClearlyAndBacktrackingIsNotAThreat) {
  StartServer();
  std::string disk = CreateDisk("g3");
  ASSERT_EQ(Mount("g3").exit_code, 0);
  std::ofstream(mnt_ + "/file") << "x\n";
  std::ofstream(mnt_ + "/as") << std::string(4 << 20, 'a') << "\n";
  SyncMount();
  ExpectRefused(Grep(disk, json::object()), 400, "pattern");
  ExpectRefused(Grep(disk, {{"pattern", "x"}, {"bogus", 1}}), 400, "bogus");
  ExpectRefused(Grep(disk, {{"pattern", "a("}}), 400, "does not compile");
  ExpectRefused(Grep(disk, {{"pattern", "(a)\\1"}}), 400, "does not compile");
  ExpectRefused(Grep(disk, {{"pattern", "x"}, {"maxResults", 0}}), 400, "maxResults");
  ExpectRefused(Grep(disk, {{"pattern", "x"}, {"concurrency", 99}}), 400, "concurrency");
  ExpectRefused(Grep(disk, {{"pattern", "x"}, {"directory", "/missing"}}), 404, "/missing");
  ExpectRefused(Grep(disk, {{"pattern", "x"}, {"directory", "/file"}}), 400, "not a directory");
  ExpectRefused(Grep(disk, {{"pattern", "x"}, {"directory", "/../etc"}}), 400, "'..'");
  ExpectRefused(Grep("dsk-00000000000000ff", {{"pattern", "x"}}), 404, "dsk-00000000000000ff");
  ExpectRefused(Grep("not-an-id", {{"pattern", "x"}}), 400, "invalid disk id");
  ExpectRefused(Api("POST", "/api/disks/" + disk + "/grep", "{\"pattern\": "), 400, "JSON");
  ExpectRefused(Api("GET", "/api/disks/" + disk + "/grep", ""), 405, "POST");
  // What makes a backtracking engine run for ever is linear here.
  json d = Data(Grep(disk, {{"pattern", "(a*)*b"}, {"maxDurationSeconds", 20}}));
  EXPECT_EQ(d["stoppedReason"], "completed");
  EXPECT_TRUE(d["matches"].empty());
}

}  // namespace
}  // namespace archil::testing
