// A disk server over a real engine in a temporary directory, with a table of disk tokens, for
// the tests that drive the server through its client library. Restart() stops the server and
// the engine and starts both again on the same address (what a restart after kill -9 looks like
// to a client, minus the process).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "base/clock.h"
#include "engine/engine.h"
#include "io/posix_env.h"
#include "net/test_cert.h"
#include "server/authority.h"
#include "server/disk_server.h"

namespace archil::testing {

// Tokens are "adt_<id>_<secret>"; the table maps a whole token to what it opens.
class TableAuthority final : public server::Authority {
 public:
  void Add(std::string token, server::Grant grant) {
    MutexLock lock(&mu_);
    table_[std::move(token)] = std::move(grant);
  }
  void Remove(const std::string& token) {
    MutexLock lock(&mu_);
    table_.erase(token);
  }
  Result<server::Grant> Authorize(std::string_view token, std::string_view disk) override {
    MutexLock lock(&mu_);
    auto it = table_.find(std::string(token));
    if (it == table_.end()) return Status::Unauthenticated("token rejected");
    if (!disk.empty() && disk != it->second.disk_id && disk != it->second.disk_name) {
      return Status::NotFound("no such disk");
    }
    return it->second;
  }

 private:
  Mutex mu_;
  std::map<std::string, server::Grant> table_ ARCHIL_GUARDED_BY(mu_);
};

inline constexpr char kToken[] =
    "adt_00000000000000a1_000000000000000000000000000000000000000000000001";
inline constexpr char kOtherToken[] =
    "adt_00000000000000a2_000000000000000000000000000000000000000000000002";

class ServerHarness {
 public:
  // With `tls`, the server speaks TLS with a certificate for 127.0.0.1 that ca_file() holds.
  explicit ServerHarness(server::DiskServerOptions options = {}, bool tls = false)
      : options_(std::move(options)) {
    char tmpl[] = "/tmp/archil-server-test-XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    options_.listen = "127.0.0.1:0";
    if (tls) {
      EXPECT_TRUE(net::WriteTestCert(dir_ + "/", "IP:127.0.0.1", &cert_));
      Result<std::shared_ptr<net::TlsContext>> ctx =
          net::TlsContext::Server(cert_.cert_file, cert_.key_file);
      EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
      if (ctx.ok()) options_.tls = *ctx;
    }
    authority_.Add(
        kToken,
        server::Grant{engine::DiskNo(1), "dsk-0000000000000001", "one", "00000000000000a1", {}});
    authority_.Add(
        kOtherToken,
        server::Grant{engine::DiskNo(2), "dsk-0000000000000002", "two", "00000000000000a2", {}});
    Start();
    EXPECT_TRUE(engine_->CreateDisk(engine::DiskNo(1), {}).ok());
    EXPECT_TRUE(engine_->CreateDisk(engine::DiskNo(2), {}).ok());
  }
  ~ServerHarness() {
    Stop();
    std::filesystem::remove_all(dir_);
  }

  void Start() {
    engine::EngineOptions eo;
    eo.env = io::PosixEnv();
    eo.dir = dir_;
    eo.clock = &SystemClock::Instance();
    eo.block_cache_mb = 16;
    eo.reserve_bytes = 0;
    Result<std::unique_ptr<engine::Engine>> e = engine::Engine::Open(eo);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    Result<std::unique_ptr<server::DiskServer>> s =
        server::DiskServer::Start(options_, engine_.get(), &authority_, &SystemClock::Instance());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    options_.listen = server_->address();  // a restart comes back on the same port
  }
  void Stop() {
    server_.reset();
    engine_.reset();
  }
  void Restart() {
    Stop();
    Start();
  }

  const std::string& address() const { return options_.listen; }
  // The engine's data directory (a stopped server's may be copied or replaced).
  const std::string& dir() const { return dir_; }
  // The address as a client gives it ("tls://..." when the server speaks TLS), and the CA.
  std::string client_address() const { return (options_.tls ? "tls://" : "") + address(); }
  const std::string& ca_file() const { return cert_.cert_file; }
  engine::Engine& engine() { return *engine_; }
  server::DiskServer& server() { return *server_; }
  TableAuthority& authority() { return authority_; }

 private:
  server::DiskServerOptions options_;
  std::string dir_;
  net::TestCert cert_;
  TableAuthority authority_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<server::DiskServer> server_;
};

}  // namespace archil::testing
