#include "server/session_registry.h"

#include "base/log.h"
#include "base/random.h"

namespace archil::server {

namespace {

engine::SessionRecord RecordOf(const SessionIdentity& id, uint32_t slots) {
  engine::SessionRecord r;
  r.slots = static_cast<uint16_t>(slots);
  r.lease_ms = id.lease_ms;
  r.client_id = id.client_id;
  r.root_ino = engine::Ino(id.root.value());
  r.holder_id = id.holder_id;
  r.hostname = id.hostname;
  r.mount_path = id.mount_path;
  r.token_id = id.token_id;
  return r;
}

}  // namespace

std::shared_ptr<Session> SessionRegistry::Make(SessionIdentity identity, uint32_t slots,
                                               engine::DiskFs* fs,
                                               std::shared_ptr<engine::DiskFs> view) {
  return std::make_shared<Session>(std::move(identity), slots, engine_, fs, std::move(view));
}

Result<std::shared_ptr<Session>> SessionRegistry::Create(SessionIdentity identity, uint32_t slots,
                                                         std::shared_ptr<engine::DiskFs> view) {
  ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(identity.id.data(), identity.id.size()));
  ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(identity.holder_id.data(), identity.holder_id.size()));
  std::shared_ptr<Session> s;
  if (view) {
    engine::DiskFs* fs = view.get();
    s = Make(std::move(identity), slots, fs, std::move(view));
  } else {
    ARCHIL_ASSIGN_OR_RETURN(engine::DiskFs * fs, engine_->Disk(identity.disk));
    ARCHIL_RETURN_IF_ERROR(
        engine_->PutSession(identity.disk, identity.id, RecordOf(identity, slots)));
    s = Make(std::move(identity), slots, fs);
  }
  MutexLock lock(&mu_);
  sessions_[s->identity().id] = s;
  return s;
}

Status SessionRegistry::LoadDisk(engine::DiskNo disk) {
  if (loaded_.count(disk.value())) return Status::Ok();
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskFs * fs, engine_->Disk(disk));
  ARCHIL_ASSIGN_OR_RETURN(std::vector<engine::StoredSession> stored, engine_->Sessions(disk));
  for (engine::StoredSession& st : stored) {
    if (sessions_.count(st.id)) continue;
    const engine::SessionRecord& r = st.record;
    SessionIdentity id{
        st.id,      r.holder_id, r.token_id,   disk,        posix::Ino(r.root_ino.value()),
        r.lease_ms, r.hostname,  r.mount_path, r.client_id, ""};
    std::shared_ptr<Session> s = Make(std::move(id), r.slots, fs);
    for (auto& [slot, rec] : st.slots) {
      s->slots().Restore(slot, rec.seq,
                         CachedReply{static_cast<proto::WireStatus>(rec.status), rec.body});
    }
    sessions_[st.id] = std::move(s);
  }
  loaded_.insert(disk.value());
  if (!stored.empty()) {
    ARCHIL_LOG(kInfo) << "server: disk " << disk.value() << ": " << stored.size()
                      << " sessions restored";
  }
  return Status::Ok();
}

size_t SessionRegistry::LoadAll() {
  MutexLock lock(&mu_);
  for (engine::DiskNo disk : engine_->ListDisks()) {
    if (Status s = LoadDisk(disk); !s.ok()) {
      ARCHIL_LOG(kWarn) << "server: disk " << disk.value()
                        << ": stored sessions not loaded yet: " << s.ToString();
    }
  }
  return sessions_.size();
}

Result<std::shared_ptr<Session>> SessionRegistry::Find(engine::DiskNo disk,
                                                       const engine::SessionIdBytes& id) {
  MutexLock lock(&mu_);
  ARCHIL_RETURN_IF_ERROR(LoadDisk(disk));
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return Status::NotFound("no such session");
  if (it->second->identity().disk != disk) {
    return Status::PermissionDenied("the session is not of this token's disk");
  }
  return it->second;
}

std::shared_ptr<Session> SessionRegistry::FindByClient(engine::DiskNo disk,
                                                       const engine::Id16& client_id) {
  MutexLock lock(&mu_);
  if (!LoadDisk(disk).ok()) return nullptr;
  for (const auto& [id, s] : sessions_) {
    if (s->identity().disk == disk && s->identity().client_id == client_id) return s;
  }
  return nullptr;
}

std::vector<std::shared_ptr<Session>> SessionRegistry::OtherMounts(engine::DiskNo disk,
                                                                   const engine::Id16& client_id) {
  std::vector<std::shared_ptr<Session>> out;
  MutexLock lock(&mu_);
  if (!LoadDisk(disk).ok()) return out;
  for (const auto& [id, s] : sessions_) {
    const engine::Id16& other = s->identity().client_id;
    if (s->identity().disk == disk && other != engine::Id16{} && other != client_id &&
        s->identity().checkpoint.empty()) {
      out.push_back(s);
    }
  }
  return out;
}

Status SessionRegistry::End(const std::shared_ptr<Session>& session, const Session::Ending& why) {
  {
    MutexLock lock(&mu_);
    auto it = sessions_.find(session->identity().id);
    if (it == sessions_.end() || it->second != session) return Status::Ok();  // already ended
    sessions_.erase(it);
  }
  session->Close(why);
  const SessionIdentity& id = session->identity();
  if (!id.checkpoint.empty()) return Status::Ok();  // a read-only view: nothing stored or held
  if (engine_->Disk(id.disk).ok()) {
    Status dropped = session->fs().DropHolder(session->holder());
    if (!dropped.ok()) {
      ARCHIL_LOG(kWarn) << "server: dropping the open files of an ended session: "
                        << dropped.ToString();
    }
  }
  return engine_->DeleteSession(id.disk, id.id);
}

size_t SessionRegistry::EndCheckpoint(engine::DiskNo disk, std::string_view checkpoint) {
  std::vector<std::shared_ptr<Session>> ending;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, s] : sessions_) {
      if (s->identity().disk == disk && s->identity().checkpoint == checkpoint) {
        ending.push_back(s);
      }
    }
  }
  for (const std::shared_ptr<Session>& s : ending) (void)End(s, {"checkpoint deleted", true});
  return ending.size();
}

size_t SessionRegistry::EndDisk(engine::DiskNo disk) {
  std::vector<std::shared_ptr<Session>> ending;
  {
    MutexLock lock(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->identity().disk == disk) {
        ending.push_back(it->second);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
    loaded_.erase(disk.value());
  }
  // The disk is gone with its records; only the connections are left to close.
  for (const auto& s : ending) s->Close({"disk deleted", true});
  return ending.size();
}

size_t SessionRegistry::EndToken(std::string_view token_id) {
  std::vector<std::shared_ptr<Session>> ending;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, s] : sessions_) {
      if (s->identity().token_id == token_id) ending.push_back(s);
    }
  }
  size_t n = 0;
  for (const auto& s : ending) {
    Status st = End(s, {"token revoked", true});
    if (!st.ok())
      ARCHIL_LOG(kWarn) << "server: ending a revoked token's session: " << st.ToString();
    ++n;
  }
  return n;
}

std::vector<std::shared_ptr<Session>> SessionRegistry::All() const {
  MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Session>> all;
  all.reserve(sessions_.size());
  for (const auto& [id, s] : sessions_) all.push_back(s);
  return all;
}

void SessionRegistry::CloseAll() {
  std::vector<std::shared_ptr<Session>> all;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, s] : sessions_) all.push_back(s);
  }
  for (const auto& s : all) s->Close({"shutting down", false});
}

size_t SessionRegistry::size() const {
  MutexLock lock(&mu_);
  return sessions_.size();
}

}  // namespace archil::server
