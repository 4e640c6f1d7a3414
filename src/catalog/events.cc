#include "catalog/events.h"

#include <algorithm>

namespace archil {

void CatalogEvents::Subscribe(CatalogListener* listener) {
  MutexLock lock(&mu_);
  listeners_.push_back(listener);
}

void CatalogEvents::Unsubscribe(CatalogListener* listener) {
  MutexLock lock(&mu_);
  listeners_.erase(std::remove(listeners_.begin(), listeners_.end(), listener), listeners_.end());
}

std::vector<CatalogListener*> CatalogEvents::Snapshot() {
  MutexLock lock(&mu_);
  return listeners_;
}

// Delivered outside the lock, so a listener may (un)subscribe from its callback.
void CatalogEvents::OnDiskCreated(const Disk& disk) {
  for (CatalogListener* l : Snapshot()) l->OnDiskCreated(disk);
}

void CatalogEvents::OnDiskDeleted(const DiskId& disk) {
  for (CatalogListener* l : Snapshot()) l->OnDiskDeleted(disk);
}

void CatalogEvents::OnTokenRevoked(const DiskId& disk, std::string_view token_id) {
  for (CatalogListener* l : Snapshot()) l->OnTokenRevoked(disk, token_id);
}

void CatalogEvents::OnAllowedIpsChanged(const DiskId& disk, const std::vector<IpRange>& allowed) {
  for (CatalogListener* l : Snapshot()) l->OnAllowedIpsChanged(disk, allowed);
}

}  // namespace archil
