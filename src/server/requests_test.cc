// Requests executed on a session over an engine on the power-loss simulator: answers, errno
// mapping, and exactly-once retries across a lost reply and a server restart.
#include "server/requests.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/crc32c.h"
#include "engine/engine_fixture.h"
#include "server/session_registry.h"

namespace archil::server {
namespace {

using engine::DiskNo;
using proto::WireStatus;

class RequestsTest : public engine::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    ASSERT_TRUE(engine_->CreateDisk(DiskNo(7), {}).ok());
    registry_ = std::make_unique<SessionRegistry>(engine_.get());
    SessionIdentity id;
    id.disk = DiskNo(7);
    id.root = posix::kRootIno;
    id.token_id = "00000000000000aa";
    Result<std::shared_ptr<Session>> s = registry_->Create(id, 8);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = *s;
  }
  // The server restarts (power loss, then a new engine and registry); the session is found again.
  void Restart() {
    const engine::SessionIdBytes id = session_->identity().id;
    session_.reset();
    registry_.reset();
    engine_.reset();
    env_.SimulatePowerLoss(11);
    Reopen();
    registry_ = std::make_unique<SessionRegistry>(engine_.get());
    Result<std::shared_ptr<Session>> s = registry_->Find(DiskNo(7), id);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = *s;
  }
  Response Run(uint16_t type, const proto::Message& m, std::string_view payload = {}) {
    return Execute(*session_, type, m, payload);
  }
  static v1::Mut* Slot(v1::Mut* mut, uint32_t slot, uint64_t seq) {
    mut->set_slot(slot);
    mut->set_seq(seq);
    return mut;
  }
  template <typename M>
  static M Parse(const Response& r) {
    M m;
    EXPECT_TRUE(m.ParseFromString(r.body));
    return m;
  }
  uint64_t LookupIno(std::string_view name) {
    v1::Lookup l;
    l.set_parent(1);
    l.set_name(std::string(name));
    auto r = Parse<v1::LookupReply>(Run(proto::kTypeLookup, l));
    return r.found() ? r.attr().ino() : 0;
  }

  std::unique_ptr<SessionRegistry> registry_;
  std::shared_ptr<Session> session_;
};

TEST_F(RequestsTest, ARetryIsAnsweredFromTheCacheNotAppliedTwice) {
  v1::Mkdir m;
  Slot(m.mutable_mut(), 0, 1);
  m.set_parent(1);
  m.set_name("d");
  m.set_mode(0750);
  Response first = Run(proto::kTypeMkdir, m);
  ASSERT_EQ(first.status, WireStatus::kOk);
  EXPECT_FALSE(first.replayed);
  EXPECT_EQ(Parse<v1::MkdirReply>(first).attr().mode(), S_IFDIR | 0750u);
  Response again = Run(proto::kTypeMkdir, m);  // the reply was lost; the client retries
  EXPECT_EQ(again.status, WireStatus::kOk);    // not EEXIST
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.body, first.body);

  Slot(m.mutable_mut(), 0, 2);  // a new request on the slot really runs again
  EXPECT_EQ(Run(proto::kTypeMkdir, m).status, WireStatus::kExists);
  Slot(m.mutable_mut(), 0, 1);
  EXPECT_EQ(Run(proto::kTypeMkdir, m).status, WireStatus::kSeqMisordered);
  Slot(m.mutable_mut(), 8, 1);
  EXPECT_EQ(Run(proto::kTypeMkdir, m).status, WireStatus::kSlotInvalid);
}

TEST_F(RequestsTest, RetriesAfterARestartGetTheOriginalAnswers) {
  v1::Create c;
  Slot(c.mutable_mut(), 1, 1);
  c.set_parent(1);
  c.set_name("f");
  c.set_mode(S_IFREG | 0644);
  c.set_open_flags(O_CREAT | O_EXCL);
  Response created = Run(proto::kTypeCreate, c);
  ASSERT_EQ(created.status, WireStatus::kOk);
  const uint64_t ino = Parse<v1::CreateReply>(created).attr().ino();

  v1::Write w;
  Slot(w.mutable_mut(), 2, 1);
  w.set_ino(ino);
  w.set_offset(0);
  const std::string data(4096, 'x');
  w.set_crc32c(Crc32c(data));
  Response written = Run(proto::kTypeWrite, w, data);
  ASSERT_EQ(written.status, WireStatus::kOk);
  EXPECT_EQ(Parse<v1::WriteReply>(written).attr().size(), 4096u);

  v1::Rename r;
  Slot(r.mutable_mut(), 3, 1);
  r.set_parent(1);
  r.set_name("f");
  r.set_new_parent(1);
  r.set_new_name("g");
  ASSERT_EQ(Run(proto::kTypeRename, r).status, WireStatus::kOk);

  Restart();  // every reply above was lost with the connection; the client replays them all
  Response c2 = Run(proto::kTypeCreate, c);
  EXPECT_EQ(c2.status, WireStatus::kOk);  // not EEXIST, and the same inode
  EXPECT_TRUE(c2.replayed);
  EXPECT_EQ(c2.body, created.body);
  Response w2 = Run(proto::kTypeWrite, w, data);
  EXPECT_TRUE(w2.replayed);
  EXPECT_EQ(w2.body, written.body);
  Response r2 = Run(proto::kTypeRename, r);
  EXPECT_EQ(r2.status, WireStatus::kOk);  // not ENOENT
  EXPECT_TRUE(r2.replayed);
  EXPECT_EQ(LookupIno("g"), ino);
  EXPECT_EQ(LookupIno("f"), 0u);

  // The restored slots take new requests with the next seqs.
  Slot(r.mutable_mut(), 3, 2);
  r.set_name("g");
  r.set_new_name("h");
  EXPECT_EQ(Run(proto::kTypeRename, r).status, WireStatus::kOk);
  EXPECT_EQ(LookupIno("h"), ino);
}

TEST_F(RequestsTest, ReadsWritesAndDirectories) {
  v1::Create c;
  Slot(c.mutable_mut(), 0, 1);
  c.set_parent(1);
  c.set_name("f");
  c.set_mode(S_IFREG | 0600);
  const uint64_t ino = Parse<v1::CreateReply>(Run(proto::kTypeCreate, c)).attr().ino();
  v1::Write w;
  Slot(w.mutable_mut(), 0, 2);
  w.set_ino(ino);
  w.set_offset(10);
  ASSERT_EQ(Run(proto::kTypeWrite, w, "hello").status, WireStatus::kOk);

  v1::Read rd;
  rd.set_ino(ino);
  rd.set_offset(8);
  rd.set_length(100);
  Response got = Run(proto::kTypeRead, rd);
  ASSERT_EQ(got.status, WireStatus::kOk);
  EXPECT_EQ(got.payload, std::string(2, '\0') + "hello");
  auto reply = Parse<v1::ReadReply>(got);
  EXPECT_EQ(reply.crc32c(), Crc32c(got.payload));
  EXPECT_TRUE(reply.eof());
  EXPECT_EQ(reply.size(), 15u);
  rd.set_offset(0);
  rd.set_length(15);  // exactly to the end: not known to be the end
  EXPECT_FALSE(Parse<v1::ReadReply>(Run(proto::kTypeRead, rd)).eof());

  // Create without O_EXCL of an existing file opens it, and O_TRUNC truncates it (once).
  Slot(c.mutable_mut(), 0, 3);
  c.set_open_flags(O_CREAT | O_TRUNC);
  Response opened = Run(proto::kTypeCreate, c);
  ASSERT_EQ(opened.status, WireStatus::kOk);
  EXPECT_FALSE(Parse<v1::CreateReply>(opened).created());
  EXPECT_EQ(Parse<v1::CreateReply>(opened).attr().size(), 0u);

  v1::ReadDir rdir;
  rdir.set_dir(1);
  rdir.set_max_entries(10);
  rdir.set_plus(true);
  auto page = Parse<v1::ReadDirReply>(Run(proto::kTypeReadDir, rdir));
  ASSERT_EQ(page.entries_size(), 1);
  EXPECT_EQ(page.entries(0).name(), "f");
  EXPECT_EQ(page.entries(0).type(), 8u);  // DT_REG
  EXPECT_EQ(page.entries(0).attr().ino(), ino);
  EXPECT_TRUE(page.eof());

  // Engine errors arrive as the one status of their errno.
  v1::Mkdir m;
  Slot(m.mutable_mut(), 1, 1);
  m.set_parent(ino);
  m.set_name("x");
  EXPECT_EQ(Run(proto::kTypeMkdir, m).status, WireStatus::kNotDir);
  rd.set_ino(1);
  EXPECT_EQ(Run(proto::kTypeRead, rd).status, WireStatus::kIsDir);

  v1::GetAttr g;
  g.set_ino(999999);
  EXPECT_EQ(Run(proto::kTypeGetAttr, g).status, WireStatus::kNotFound);
}

TEST_F(RequestsTest, EndingASessionDeletesItsRecordsAndClosesItsConnections) {
  std::vector<std::string> told;
  auto closer = [&](const Session::Ending& why) {
    told.push_back(why.reason + (why.final ? " (final)" : ""));
  };
  session_->Attach(closer);
  EXPECT_EQ(registry_->EndToken("00000000000000aa"), 1u);
  EXPECT_EQ(told, std::vector<std::string>{"token revoked (final)"});
  EXPECT_TRUE(session_->closed());
  EXPECT_EQ(registry_->size(), 0u);
  EXPECT_TRUE(engine_->Sessions(DiskNo(7))->empty());
  session_->Attach(closer);  // a connection binding late is closed at once, told the same
  EXPECT_EQ(told.size(), 2u);
  EXPECT_EQ(told.back(), "token revoked (final)");
}

}  // namespace
}  // namespace archil::server
