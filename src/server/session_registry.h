// SessionRegistry: every session of the disk server, by id (docs/protocol.md §5.2, §7).
//
// A new session's record is written without a sync (it rides the next durable commit; no fsync
// on the mount path). After a restart, every disk's stored sessions and their reply-cache slots
// are loaded before the server listens (LoadAll), so a client that binds again finds its session,
// and its retries are answered from the cache; a disk that could not be loaded then is loaded at
// the first request that names it.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "engine/served_disks.h"
#include "server/session.h"

namespace archil::server {

class SessionRegistry {
 public:
  explicit SessionRegistry(engine::ServedDisks* engine) : engine_(engine) {}

  // Creates a session with fresh random ids (identity.id and holder_id are replaced) on the
  // disk's head; or, with `view` (the engine's view of identity.checkpoint), on that read-only
  // view, not stored. NotFound if the disk is not in the engine.
  Result<std::shared_ptr<Session>> Create(SessionIdentity identity, uint32_t slots,
                                          std::shared_ptr<engine::DiskFs> view = nullptr)
      ARCHIL_EXCLUDES(mu_);
  // The session `id` of `disk`, loading the disk's stored sessions first if this run has not;
  // NotFound if there is none, PermissionDenied if `id` is a session of another disk.
  Result<std::shared_ptr<Session>> Find(engine::DiskNo disk, const engine::SessionIdBytes& id)
      ARCHIL_EXCLUDES(mu_);
  // The live session of `disk` whose client has this id (same-host reclaim), or nullptr.
  std::shared_ptr<Session> FindByClient(engine::DiskNo disk, const engine::Id16& client_id)
      ARCHIL_EXCLUDES(mu_);
  // The live sessions of `disk` that belong to a mount (a client id) other than `client_id`:
  // the holders an exclusive mount must displace (docs/protocol.md §10.2).
  std::vector<std::shared_ptr<Session>> OtherMounts(engine::DiskNo disk,
                                                    const engine::Id16& client_id)
      ARCHIL_EXCLUDES(mu_);
  // Ends a session: its connections close (told `why`), its open-file holds go, its records
  // are deleted.
  Status End(const std::shared_ptr<Session>& session, const Session::Ending& why)
      ARCHIL_EXCLUDES(mu_);
  // Ends every session of `disk` (deleted), or opened by token `token_id` (revoked). Returns
  // how many ended.
  size_t EndDisk(engine::DiskNo disk) ARCHIL_EXCLUDES(mu_);
  // Ends the sessions that view checkpoint `checkpoint` of `disk` (it is being deleted).
  size_t EndCheckpoint(engine::DiskNo disk, std::string_view checkpoint) ARCHIL_EXCLUDES(mu_);
  size_t EndToken(std::string_view token_id) ARCHIL_EXCLUDES(mu_);
  // Every live session.
  std::vector<std::shared_ptr<Session>> All() const ARCHIL_EXCLUDES(mu_);
  // Closes the connections of every session (server shutdown: not final, the clients bind again
  // after a restart); records stay for the next run.
  void CloseAll() ARCHIL_EXCLUDES(mu_);
  size_t size() const ARCHIL_EXCLUDES(mu_);
  // Loads the stored sessions of every disk of the engine. Returns how many sessions there are.
  // A disk that fails to load is logged and left to load at its first request.
  size_t LoadAll() ARCHIL_EXCLUDES(mu_);

 private:
  Status LoadDisk(engine::DiskNo disk) ARCHIL_REQUIRES(mu_);
  std::shared_ptr<Session> Make(SessionIdentity identity, uint32_t slots, engine::DiskFs* fs,
                                std::shared_ptr<engine::DiskFs> view = nullptr);

  engine::ServedDisks* const engine_;
  mutable Mutex mu_;
  std::map<engine::SessionIdBytes, std::shared_ptr<Session>> sessions_ ARCHIL_GUARDED_BY(mu_);
  std::set<uint64_t> loaded_ ARCHIL_GUARDED_BY(mu_);  // disks whose stored sessions are in
};

}  // namespace archil::server
