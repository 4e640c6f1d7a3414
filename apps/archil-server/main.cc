// archil-server: the server role (`archil server` execs this binary with the same arguments).
// Kept apart from the client binary so the client never loads the server's libraries
// (docs/adr/0001-binary-split.md).
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "api/exit_code.h"
#include "base/log.h"
#include "server.h"

int main(int argc, char** argv) {
  // Hold shutdown signals from the first instruction: RunServer() waits for them on a thread, so
  // one that arrives during start-up still shuts down cleanly instead of killing the process.
  sigset_t shutdown_signals;
  sigemptyset(&shutdown_signals);
  sigaddset(&shutdown_signals, SIGTERM);
  sigaddset(&shutdown_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr);

  archil::ServerOptions o;
  std::string log_level = "info";
  CLI::App app{"Run the archil control plane and disk server with embedded defaults.",
               "archil server"};
  app.footer(
      "Examples:\n"
      "  archil server                             /var/lib/archil, API 127.0.0.1:8420, mounts "
      ":8421\n"
      "  archil server --object-store s3://bucket/archil?region=eu-west-1\n"
      "  archil server --api-listen 0.0.0.0:8420 --mount-listen 0.0.0.0:8421 \\\n"
      "      --tls-cert /etc/archil/cert.pem --tls-key /etc/archil/key.pem\n"
      "  archil server --metrics-listen 127.0.0.1:9842");
  app.add_option("--data-dir", o.data_dir, "Where the catalog, keys and disk data live")
      ->capture_default_str();
  app.add_option("--region", o.region, "Region name this server serves")->capture_default_str();
  app.add_option("--api-listen", o.api_listen,
                 "Control-plane HTTP address (host:port; port 0 picks one)")
      ->capture_default_str();
  app.add_option("--mount-listen", o.mount_listen, "Disk-server address for mounts")
      ->capture_default_str();
  app.add_option("--metrics-listen", o.metrics_listen,
                 "Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9842; "
                 "unauthenticated: loopback or a private network)");
  app.add_option("--object-store", o.object_store,
                 "Keep every disk in this bucket too: dir://PATH or "
                 "s3://BUCKET[/PREFIX][?endpoint=URL&region=R] (default: none, disks live on "
                 "this server's disk only)");
  app.add_flag("--take-over", o.take_over,
               "Take the bucket over from another server once it has stopped renewing its "
               "lease (an empty data directory does this by itself)");
  app.add_flag("--force-take-over", o.force_take_over,
               "Take the bucket over at once: only when the other server is known to be gone");
  app.add_option("--lease-seconds", o.lease_seconds,
                 "How long the bucket lease lasts without a renewal (renewed every third of it)")
      ->capture_default_str()
      ->check(CLI::Range(2, 3600));
  app.add_option("--upload-backlog-mib", o.upload_backlog_mib,
                 "Per disk: once this much of its data waits for the bucket, its writes wait "
                 "too (the recovery point's bound)")
      ->capture_default_str()
      ->check(CLI::Range(64, 1 << 20));
  app.add_option("--catalog", o.catalog, "sqlite://PATH (default DATA_DIR/catalog.db)");
  app.add_option("--tls-cert", o.tls_cert_file,
                 "PEM certificate: serve the API over HTTPS and mounts over TLS");
  app.add_option("--tls-key", o.tls_key_file, "PEM private key for --tls-cert");
  app.add_flag("--insecure", o.insecure,
               "Allow cleartext (HTTP and mounts) on and from non-loopback addresses");
  app.add_option("--http-threads", o.http_threads, "HTTP worker threads")
      ->capture_default_str()
      ->check(CLI::Range(4, 4096));
  app.add_option("--run-dir", o.run_dir, "Where to advertise this server (default /run/archil)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error")->capture_default_str();
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Log warnings and errors only");
  app.add_flag(
      "-v,--verbose", [&](int64_t) { log_level = "debug"; }, "Log debug messages");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  auto level = archil::ParseLogLevel(quiet ? "warn" : log_level);
  if (!level.ok()) {
    std::fprintf(stderr, "archil server: %s\n", level.status().message().c_str());
    return 2;
  }
  archil::SetLogLevel(*level);
  archil::Status s = archil::RunServer(o);
  if (!s.ok()) {
    std::fprintf(stderr, "archil server: %s\n", s.message().c_str());
    return archil::ExitCodeFor(s.code());
  }
  return 0;
}
