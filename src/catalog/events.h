// What the control plane tells the data path, as it happens.
//
// The disk server subscribes: a deleted disk, a revoked disk token or a narrowed list of allowed
// addresses must end the sessions it no longer allows (within a second), since authentication
// happens only when a session starts. Events are delivered after the catalog change is durable, on
// the thread that made it; a listener must not block (hand the work to its own thread) and must not
// call back into the catalog synchronously.
//
// Thread-safety: CatalogEvents is safe for concurrent Publish/Subscribe/Unsubscribe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/mutex.h"
#include "catalog/model.h"

namespace archil {

class CatalogListener {
 public:
  virtual ~CatalogListener() = default;
  // `disk` exists (a create committed, or an identical create was repeated). Through the API it
  // runs just after the reply is handed over (control/after_reply.h), so a listener's work (the
  // engine creates its tree, unsynced) is not in the create's latency; a mount that comes first
  // makes the tree itself, and a delete that comes first takes it away again.
  virtual void OnDiskCreated(const Disk& disk) {}
  // `disk` was marked deleting: it is gone from the API and its tokens no longer authenticate.
  virtual void OnDiskDeleted(const DiskId& disk) = 0;
  // The disk token `token_id` (its public identifier) of `disk` was removed.
  virtual void OnTokenRevoked(const DiskId& disk, std::string_view token_id) = 0;
  // The allowed client addresses of lineage root `disk` are now `allowed` (empty: any).
  virtual void OnAllowedIpsChanged(const DiskId& disk, const std::vector<IpRange>& allowed) {}
};

// Fans events out to every subscribed listener, in subscription order.
class CatalogEvents final : public CatalogListener {
 public:
  // REQUIRES: `listener` outlives its subscription (Unsubscribe before destroying it).
  void Subscribe(CatalogListener* listener) ARCHIL_EXCLUDES(mu_);
  void Unsubscribe(CatalogListener* listener) ARCHIL_EXCLUDES(mu_);

  void OnDiskCreated(const Disk& disk) override ARCHIL_EXCLUDES(mu_);
  void OnDiskDeleted(const DiskId& disk) override ARCHIL_EXCLUDES(mu_);
  void OnTokenRevoked(const DiskId& disk, std::string_view token_id) override ARCHIL_EXCLUDES(mu_);
  void OnAllowedIpsChanged(const DiskId& disk, const std::vector<IpRange>& allowed) override
      ARCHIL_EXCLUDES(mu_);

 private:
  std::vector<CatalogListener*> Snapshot() ARCHIL_EXCLUDES(mu_);

  Mutex mu_;
  std::vector<CatalogListener*> listeners_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil
