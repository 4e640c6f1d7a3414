// The `archil server` role: control plane (HTTP API over the catalog) with embedded defaults.
//
// Start-up: creates DATA_DIR (0700), opens DATA_DIR/catalog.db, issues the admin API key on first
// start (DATA_DIR/admin-api-key, 0600, written once), binds the API listener, advertises the
// endpoint under the run dir so local CLIs find it, and serves until SIGTERM/SIGINT, then drains
// in-flight requests, stops the purger and removes the advertisement.
#pragma once

#include <string>

#include "base/status.h"

namespace archil {

struct ServerOptions {
  std::string data_dir = "/var/lib/archil";
  std::string region = "local";
  std::string api_listen = "127.0.0.1:8420";
  std::string mount_listen = "127.0.0.1:8421";
  std::string metrics_listen;  // empty: no scrape endpoint (docs/operations.md, Metrics)
  // dir://PATH or s3://BUCKET[/PREFIX]?...: the tier (docs/tiering.md). Empty: no tier, the disks
  // live on this server's disk only.
  std::string object_store;
  bool take_over = false;        // take the bucket from a server that stopped renewing its lease
  bool force_take_over = false;  // at once, without waiting for its lease to lapse
  int lease_seconds = 15;        // the bucket lease (docs/tiering.md §5)
  // Per disk: sealed data not yet in the bucket beyond which its writes wait (tiering.md §7).
  uint64_t upload_backlog_mib = 1024;
  std::string catalog;  // empty: sqlite://DATA_DIR/catalog.db
  std::string tls_cert_file;
  std::string tls_key_file;
  bool insecure = false;  // allow cleartext HTTP on a non-loopback address
  std::string run_dir;    // where to advertise; empty: ARCHIL_RUN_DIR or /run/archil
  size_t http_threads = 128;
};

// Checks options that need no I/O: addresses, URLs, TLS policy.
Status ValidateServerOptions(const ServerOptions& options);

// Runs until SIGTERM or SIGINT. REQUIRES: called from main() before any other thread exists
// (it blocks those signals so that every thread it starts inherits the mask).
Status RunServer(const ServerOptions& options);

// "host:port" -> (host, port). IPv6 hosts in brackets: "[::1]:8420".
Result<std::pair<std::string, int>> ParseListenAddress(const std::string& address);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

}  // namespace archil
