#include "control/purger.h"

#include <chrono>
#include <filesystem>
#include <system_error>

#include "base/log.h"

namespace archil {

DiskPurger::DiskPurger(Catalog* catalog, std::string disks_dir)
    : catalog_(catalog), disks_dir_(std::move(disks_dir)) {}

DiskPurger::~DiskPurger() { Stop(); }

void DiskPurger::Start() {
  thread_ = std::thread([this] { Loop(); });
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
  ARCHIL_ASSIGN_OR_RETURN(std::vector<std::string> ids, catalog_->DisksToPurge());
  for (const std::string& id : ids) {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(disks_dir_) / id, ec);
    if (ec) return Status::IoError("remove data of " + id + ": " + ec.message());
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
    if (!stop_ && !wake_) cv_.WaitFor(&mu_, std::chrono::seconds(s.ok() ? 60 : 5));
    // Coalesce a burst of deletes into one pass, and keep the purge's commits off the path of
    // the requests that follow a delete.
    if (!stop_ && wake_) cv_.WaitFor(&mu_, std::chrono::milliseconds(500));
    wake_ = false;
    if (stop_) return;
  }
}

}  // namespace archil
