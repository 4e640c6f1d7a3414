// Session: one mount's state on the disk server (docs/protocol.md §5.2, §7): who opened it, on
// which disk and root, its slots and reply cache, and the connections bound to it.
//
// The session id is a secret shared by the client and the server (128 random bits); everything
// another client may see names the session by its public holder_id. A session is bound to the
// token that created it: binding needs that token id again.
//
// Thread-safety: the identity fields are immutable; the rest is safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "engine/records/keys.h"
#include "engine/served_disks.h"
#include "server/slot_table.h"

namespace archil::server {

struct SessionIdentity {
  engine::SessionIdBytes id{};
  engine::Id8 holder_id{};
  std::string token_id;  // the token that created it; the only one that may bind it
  engine::DiskNo disk;
  posix::Ino root;
  uint32_t lease_ms = 15000;
  std::string hostname;
  std::string mount_path;
  engine::Id16 client_id{};
  // Non-empty: a read-only view of this checkpoint of `disk`. Such sessions are not stored (a
  // restart makes the client create a new one, which is safe: it changes nothing) and are not
  // mounts of the disk for the one-mount-per-disk rule.
  std::string checkpoint;
};

class Session {
 public:
  // `view` (may be null) owns `fs` for a checkpoint session.
  Session(SessionIdentity identity, uint32_t slots, engine::ServedDisks* engine, engine::DiskFs* fs,
          std::shared_ptr<engine::DiskFs> view = nullptr)
      : identity_(std::move(identity)),
        slots_(slots),
        engine_(engine),
        view_(std::move(view)),
        fs_(fs) {}

  const SessionIdentity& identity() const { return identity_; }
  SlotTable& slots() { return slots_; }
  engine::ServedDisks& engine() const { return *engine_; }
  engine::DiskFs& fs() const { return *fs_; }
  // The holder id the engine's open-file table knows this session by.
  posix::HolderId holder() const;

  // Why a session's connections close: said to the client in a GOODBYE push (protocol.md §11).
  struct Ending {
    std::string reason;  // "disk deleted", "token revoked", "shutting down", ...
    bool final = true;   // the session is gone: the client must not bind it again
  };
  // Connections register a way to close themselves; Close() runs them all (the session ended:
  // GOODBYE, disk deleted, token revoked, or replaced; or the server stops). Returns a key for
  // Detach. A connection binds one lane (protocol.md §6); one already bound to that lane is
  // replaced: told so (not final: its client may bind again) and closed.
  // `peer` is the connection's client address (what Peers reports).
  uint64_t Attach(std::function<void(const Ending&)> close, uint32_t lane = 0,
                  std::string peer = "") ARCHIL_EXCLUDES(mu_);
  void Detach(uint64_t key) ARCHIL_EXCLUDES(mu_);
  size_t connections() const ARCHIL_EXCLUDES(mu_);
  // The client addresses of the attached connections.
  std::vector<std::string> Peers() const ARCHIL_EXCLUDES(mu_);
  // Marks the session ended and closes every attached connection, telling each `why`; later
  // Attach calls close at once.
  void Close(const Ending& why) ARCHIL_EXCLUDES(mu_);
  bool closed() const ARCHIL_EXCLUDES(mu_);

 private:
  const SessionIdentity identity_;
  SlotTable slots_;
  engine::ServedDisks* const engine_;
  const std::shared_ptr<engine::DiskFs> view_;
  engine::DiskFs* const fs_;

  mutable Mutex mu_;
  bool closed_ ARCHIL_GUARDED_BY(mu_) = false;
  uint64_t next_key_ ARCHIL_GUARDED_BY(mu_) = 1;
  // An attached connection: how to close it, and its peer's address.
  struct Attached {
    std::function<void(const Ending&)> close;
    std::string peer;
  };
  std::map<uint64_t, Attached> attached_ ARCHIL_GUARDED_BY(mu_);  // attach key -> connection
  std::map<uint32_t, uint64_t> lanes_ ARCHIL_GUARDED_BY(mu_);     // lane -> attach key
  Ending ending_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::server
