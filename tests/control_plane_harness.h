// A control plane running in this process on a real socket (port 0), over a real SQLite catalog in
// a temporary directory: the stack `archil server` runs, minus signal handling.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "base/clock.h"
#include "catalog/sqlite_catalog.h"
#include "control/api_router.h"
#include "control/http_server.h"
#include "control/service.h"

namespace archil::testing {

class ControlPlaneHarness {
 public:
  explicit ControlPlaneHarness(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() /
           ("archil-" + name + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ControlPlaneHarness() {
    Stop();
    std::filesystem::remove_all(dir_);
  }

  // Starts (or restarts) on the same directory. REQUIRES: stopped.
  void Start(HttpServerOptions http = {}) {
    auto catalog = SqliteCatalog::Open((dir_ / "catalog.db").string());
    if (!catalog.ok()) throw std::runtime_error(catalog.status().ToString());
    catalog_ = std::move(catalog).value();
    service_ = std::make_unique<ControlService>(catalog_.get(), &SystemClock::Instance(), "test");
    auto issued = service_->BootstrapAdminKey([this](const std::string& token) {
      admin_key_ = token;
      return Status::Ok();
    });
    if (!issued.ok()) throw std::runtime_error(issued.status().ToString());
    router_ = std::make_unique<ApiRouter>(service_.get());
    router_->SetMountAddress("127.0.0.1:8421");
    http.port = 0;
    auto server = HttpServer::Bind(http, router_.get());
    if (!server.ok()) throw std::runtime_error(server.status().ToString());
    http_ = std::move(server).value();
    serve_ = std::thread([this] { (void)http_->Serve(); });
    // Serve() may not have entered its accept loop yet; connections queue in the backlog.
  }

  void Stop() {
    if (!http_) return;
    http_->Stop();
    serve_.join();
    http_.reset();
    router_.reset();
    service_.reset();
    catalog_.reset();
  }

  int port() const { return http_->port(); }
  const std::string& admin_key() const { return admin_key_; }
  const std::filesystem::path& dir() const { return dir_; }
  ControlService* service() { return service_.get(); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<SqliteCatalog> catalog_;
  std::unique_ptr<ControlService> service_;
  std::unique_ptr<ApiRouter> router_;
  std::unique_ptr<HttpServer> http_;
  std::thread serve_;
  std::string admin_key_;
};

}  // namespace archil::testing
