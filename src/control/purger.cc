#include "control/purger.h"

#include <chrono>

#include "base/log.h"
#include "base/thread_name.h"

namespace archil {

DiskPurger::DiskPurger(Catalog* catalog, DiskDataStore* data, std::chrono::milliseconds retry_delay)
    : catalog_(catalog), data_(data), retry_delay_(retry_delay) {}

DiskPurger::~DiskPurger() { Stop(); }

void DiskPurger::Start() {
  thread_ = std::thread([this] {
    NameThisThread("disk-purger");
    Loop();
  });
}

void DiskPurger::Wake() {
  MutexLock lock(&mu_);
  wake_ = true;
  cv_.Signal();
}

void DiskPurger::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    cv_.Signal();
  }
  if (thread_.joinable()) thread_.join();
}

Status DiskPurger::PurgeOnce() {
  ARCHIL_ASSIGN_OR_RETURN(std::vector<DiskId> ids, catalog_->DisksToPurge());
  for (const DiskId& id : ids) {
    Status s = data_->PurgeDiskData(id);
    if (s.code() == Status::Code::kFailedPrecondition) {
      // Branches made from it meanwhile read through its data: its row and tokens stay.
      ARCHIL_RETURN_IF_ERROR(catalog_->KeepDiskForBranches(id));
      ARCHIL_LOG(kInfo) << "disk " << id << " deleted; kept for its branches";
      continue;
    }
    ARCHIL_RETURN_IF_ERROR(s.WithContext("purge data of " + id.str()));
    ARCHIL_RETURN_IF_ERROR(catalog_->PurgeDisk(id));
    ARCHIL_LOG(kInfo) << "purged disk " << id;
  }
  return Status::Ok();
}

void DiskPurger::Loop() {
  for (;;) {
    Status s = PurgeOnce();
    if (!s.ok()) ARCHIL_LOG(kWarn) << "disk purge failed, will retry: " << s.ToString();
    MutexLock lock(&mu_);
    if (!stop_ && !wake_) {
      cv_.WaitFor(&mu_,
                  s.ok() ? std::chrono::milliseconds(std::chrono::seconds(60)) : retry_delay_);
    }
    // Coalesce a burst of deletes into one pass, and keep the purge's commits off the path of
    // the requests that follow a delete.
    if (!stop_ && wake_) cv_.WaitFor(&mu_, std::chrono::milliseconds(500));
    wake_ = false;
    if (stop_) return;
  }
}

}  // namespace archil
