#include "server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <thread>

#include "api/endpoints.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/owner_watch.h"
#include "base/service_notify.h"
#include "base/strings.h"
#include "base/thread_name.h"
#include "catalog/events.h"
#include "catalog/sqlite_catalog.h"
#include "control/advertisement.h"
#include "control/api_router.h"
#include "control/http_server.h"
#include "control/purger.h"
#include "control/service.h"
#include "dataplane/catalog_authority.h"
#include "dataplane/engine_disks.h"
#include "dataplane/engine_files.h"
#include "dataplane/engine_search.h"
#include "dataplane/reconcile.h"
#include "engine/engine.h"
#include "io/atomic_file.h"
#include "io/posix_env.h"
#include "metrics/metrics_server.h"
#include "metrics/registry.h"
#include "server/disk_server.h"
#include "server_metrics.h"
#include "store/store_uri.h"
#include "tier_service.h"

namespace archil {
namespace {

Status MakeDir(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) == 0 || errno == EEXIST) return Status::Ok();
  return Status::FromErrno(errno, "create directory " + path);
}

// One server per data directory (and per catalog): holds an exclusive lock on `path` for the
// process's life (released by the kernel if it dies), with the holder's pid inside for the error
// message. `what` is the directory or catalog it guards, `flag` the option that names it.
Result<int> LockExclusive(const std::string& path, const std::string& what,
                          const std::string& flag) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return Status::Busy("another archil server (pid " + pid + ") uses " + what +
                        ": stop it, or pass a different " + flag);
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    ARCHIL_LOG(kWarn) << "cannot record pid in " << path;
  }
  return fd;
}

Result<std::string> CatalogPath(const ServerOptions& o) {
  if (o.catalog.empty()) return o.data_dir + "/catalog.db";
  if (o.catalog.rfind("sqlite://", 0) == 0) return o.catalog.substr(9);
  if (o.catalog.rfind("postgres://", 0) == 0 || o.catalog.rfind("postgresql://", 0) == 0) {
    return Status::InvalidArgument("PostgreSQL catalogs are not supported yet: use sqlite://PATH");
  }
  return Status::InvalidArgument("--catalog must be sqlite://PATH");
}

// Blocks the shutdown signals in the calling thread (and so in every thread it creates) and
// returns a thread that waits for one of them and calls `on_signal`.
std::thread StartSignalThread(sigset_t set, const std::function<void(int)>& on_signal) {
  return std::thread([set, on_signal] {
    NameThisThread("signals");
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    on_signal(sig);
  });
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

Result<std::pair<std::string, int>> ParseListenAddress(const std::string& address) {
  std::string host;
  std::string port;
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find("]:");
    if (close == std::string::npos) {
      return Status::InvalidArgument("invalid listen address '" + address + "': use [v6addr]:port");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || address.find(':') != colon) {
      return Status::InvalidArgument("invalid listen address '" + address + "': use host:port");
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  std::optional<uint64_t> p = ParseUint64(port);
  if (host.empty() || !p || *p > 65535) {
    return Status::InvalidArgument("invalid listen address '" + address +
                                   "': use host:port with a port from 0 to 65535");
  }
  return std::make_pair(host, static_cast<int>(*p));
}

Status ValidateServerOptions(const ServerOptions& o) {
  if (o.data_dir.empty()) return Status::InvalidArgument("--data-dir must not be empty");
  ARCHIL_RETURN_IF_ERROR(ValidateRegionName(o.region));
  ARCHIL_ASSIGN_OR_RETURN(auto api, ParseListenAddress(o.api_listen));
  ARCHIL_RETURN_IF_ERROR(ParseListenAddress(o.mount_listen).status());
  ARCHIL_RETURN_IF_ERROR(CatalogPath(o).status());
  if (!o.object_store.empty()) {
    // A malformed URI gets its precise error before anything starts.
    ARCHIL_RETURN_IF_ERROR(store::ParseStoreUri(o.object_store, store::ProcessEnv()).status());
  } else if (o.take_over || o.force_take_over) {
    return Status::InvalidArgument("--take-over needs --object-store");
  }
  ARCHIL_ASSIGN_OR_RETURN(auto mount, ParseListenAddress(o.mount_listen));
  bool tls = !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  if (!tls && !o.insecure && !IsLoopbackHost(mount.first)) {
    return Status::InvalidArgument(
        "refusing to serve mounts on " + mount.first +
        " without TLS: pass --tls-cert and --tls-key, or --insecure to allow cleartext");
  }
  if (!tls && !o.insecure && !IsLoopbackHost(api.first)) {
    return Status::InvalidArgument(
        "refusing to serve the API on " + api.first +
        " without TLS: pass --tls-cert and --tls-key, or --insecure to allow cleartext");
  }
  return Status::Ok();
}

namespace {

// The locks that make the data directory (and an outside catalog) this process's alone, held
// until it returns.
struct DataDirLocks {
  DataDirLocks() = default;
  DataDirLocks(const DataDirLocks&) = delete;
  DataDirLocks& operator=(const DataDirLocks&) = delete;
  ~DataDirLocks() {
    if (data_fd >= 0) close(data_fd);
    if (catalog_fd >= 0) close(catalog_fd);
  }
  int data_fd = -1, catalog_fd = -1;
  std::string catalog_path;
};

// Makes the data directory (0700, made private if it was not) and locks it, and the catalog
// outside it if --catalog names one; Busy if another server holds either.
Status ClaimDataDir(const ServerOptions& o, DataDirLocks* locks) {
  ARCHIL_RETURN_IF_ERROR(MakeDir(o.data_dir, 0700));
  ARCHIL_ASSIGN_OR_RETURN(locks->data_fd,
                          LockExclusive(o.data_dir + "/lock", o.data_dir, "--data-dir"));
  if (struct stat st; stat(o.data_dir.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    if (chmod(o.data_dir.c_str(), 0700) == 0) {
      ARCHIL_LOG(kInfo) << "made " << o.data_dir << " private to its owner (0700)";
    }
  }
  ARCHIL_ASSIGN_OR_RETURN(locks->catalog_path, CatalogPath(o));
  if (!o.catalog.empty()) {
    // A catalog outside the data directory has a lock of its own: two servers never share one.
    ARCHIL_ASSIGN_OR_RETURN(locks->catalog_fd, LockExclusive(locks->catalog_path + ".lock",
                                                             locks->catalog_path, "--catalog"));
  }
  return Status::Ok();
}

// A server started for a test or a benchmark stops with the process that owns it
// (base/owner_watch.h): SIGTERM, as a user would stop it, and _exit if that hangs. None for 0.
std::unique_ptr<OwnerWatch> WatchOwner(pid_t owner_pid) {
  if (owner_pid <= 0) return nullptr;
  return std::make_unique<OwnerWatch>(owner_pid, [owner_pid] {
    ARCHIL_LOG(kWarn) << "owner process " << owner_pid << " ended: shutting down";
    kill(getpid(), SIGTERM);
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(10));
      _exit(ExitCodeFor(Status::Code::kUnavailable));
    }).detach();
  });
}

// SIGTERM and SIGINT blocked in every thread started from here on (the signal thread sigwait()s
// for them); SIGPIPE ignored (a peer that hangs up is an error value, not a death).
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return signals;
}

// Where the local advertisement goes: --run-dir, else ARCHIL_RUN_DIR, else /run/archil.
std::string RunDir(const ServerOptions& o) {
  if (!o.run_dir.empty()) return o.run_dir;
  const char* env = std::getenv("ARCHIL_RUN_DIR");
  return env && *env ? env : kDefaultRunDir;
}

// The tier (docs/tiering.md), if --object-store names one: the bucket's ownership first, then,
// for an empty data directory and a bucket that holds disks, the catalog and the engine back
// from it (*recovered), and *eo made to serve with it. nullptr without --object-store.
Result<std::unique_ptr<TierService>> OpenTier(const ServerOptions& o,
                                              const std::string& catalog_path,
                                              engine::EngineOptions* eo, bool* recovered) {
  *recovered = false;
  if (o.object_store.empty()) return std::unique_ptr<TierService>();
  TierServiceOptions to;
  to.store_uri = o.object_store;
  to.data_dir = std::filesystem::absolute(o.data_dir).string();
  to.clock = &SystemClock::Instance();
  to.take_over = o.take_over;
  to.force = o.force_take_over;
  to.lease_ms = o.lease_seconds * 1000;
  to.max_backlog_bytes = o.upload_backlog_mib << 20;
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<TierService> tier, TierService::Open(to));
  ARCHIL_ASSIGN_OR_RETURN(*recovered, tier->RecoverIfEmpty(catalog_path, *eo));
  *eo = tier->ForServing(*eo);
  return tier;
}

// The disk server's options from the command line's; with a tier, a disk whose upload backlog
// is over its bound has its writes wait (TierService::AdmitMutation).
Result<server::DiskServerOptions> DiskServerOptionsFor(const ServerOptions& o,
                                                       metrics::Registry* registry,
                                                       TierService* tier) {
  server::DiskServerOptions dso;
  dso.metrics = registry;
  dso.listen = o.mount_listen;
  dso.software = "archil-server";
  if (!o.tls_cert_file.empty()) {
    // The API's certificate serves mounts too: one name, one rotation (docs/adr/0012).
    ARCHIL_ASSIGN_OR_RETURN(dso.tls, net::TlsContext::Server(o.tls_cert_file, o.tls_key_file));
  }
  dso.allow_cleartext = o.insecure;
  if (tier != nullptr) {
    dso.admit_mutation = [tier](engine::DiskNo disk) { return tier->AdmitMutation(disk); };
  }
  return dso;
}

// The first start (or the first after a recovery) writes an admin API key to
// DATA_DIR/admin-api-key (0600), as the control plane's bootstrap (docs/api.md).
Status BootstrapAdminKey(ControlService* service, const std::string& data_dir, bool recovered) {
  const std::string path = data_dir + "/admin-api-key";
  ARCHIL_ASSIGN_OR_RETURN(bool issued, service->BootstrapAdminKey(
                                           [&](const std::string& token) {
                                             return io::WriteFileAtomically(io::PosixEnv(), path,
                                                                            token + "\n", 0600);
                                           },
                                           recovered));
  if (issued) {
    ARCHIL_LOG(kInfo) << (recovered ? "recovered: a new" : "first start:")
                      << " admin API key written to " << path;
  }
  return Status::Ok();
}

// The API server's options: --api-listen, the TLS files, --http-threads.
Result<HttpServerOptions> HttpOptionsFor(const ServerOptions& o) {
  ARCHIL_ASSIGN_OR_RETURN(auto api_addr, ParseListenAddress(o.api_listen));
  HttpServerOptions http;
  http.host = api_addr.first;
  http.port = api_addr.second;
  http.tls_cert_file = o.tls_cert_file;
  http.tls_key_file = o.tls_key_file;
  http.threads = o.http_threads;
  return http;
}

// The tier's part of GET /api/health and of each disk's record.
void AddTierParts(ApiRouter* router, TierService* tier) {
  router->AddHealthPart("tier", [tier](nlohmann::json* d) { return tier->Health(d); });
  router->AddDiskPart("tier", [tier](const DiskId& id, nlohmann::json* d) {
    Result<engine::DiskNo> disk = engine::DiskNoFromId(id);
    if (!disk.ok()) return;
    *d = tier->DiskReport(*disk).ToJson();
  });
}

// Serves the API until a stop signal or a listener error: tells the service manager it is ready
// (Type=notify) with `status`, feeds its watchdog only while the catalog answers, and on a
// signal says STOPPING and stops the listener. Returns what Serve returned.
Status ServeUntilStopped(const sigset_t& signals, HttpServer* server, ControlService* service,
                         const std::string& status) {
  std::atomic<bool> serve_returned{false};
  std::thread signal_thread = StartSignalThread(signals, [&](int sig) {
    ARCHIL_LOG(kInfo) << "signal " << sig << ": shutting down";
    (void)NotifyServiceManager("STOPPING=1");
    // A stop before the listener runs would be lost: wait until it runs (or has given up).
    while (!server->running() && !serve_returned) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    server->Stop();
  });
  // Ready once the API and the disk server listen and the local advertisement is written.
  if (Status n = NotifyServiceManager("READY=1\nSTATUS=" + status); !n.ok()) {
    ARCHIL_LOG(kWarn) << n.ToString();
  }
  ServiceWatchdog watchdog([service] { return service->Health(); });
  Status served = server->Serve();
  serve_returned = true;
  watchdog.Stop();
  // Serve() also returns on a listener error; wake the signal thread so it can be joined.
  // NOLINTNEXTLINE(bugprone-bad-signal-to-kill-thread): it sigwait()s, SIGTERM only wakes it.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  return served;
}

// Writes where local CLIs find this server. Every local user reads the advertisement (0644 in a
// 0755 directory); the process's umask is 077 again right after (a file another thread creates
// meanwhile lies in the 0700 data dir).
Status Advertise(const std::string& run_dir, const Endpoints& self) {
  umask(022);
  Status advertised = WriteAdvertisement(io::PosixEnv(), run_dir, self, getpid());
  umask(077);
  return advertised;
}

// Busy if another live server on this machine advertises `region` under `run_dir`.
Status RefuseSecondServer(const std::string& run_dir, const std::string& region) {
  std::optional<pid_t> other = LiveAdvertiser(run_dir, region);
  if (!other || *other == getpid()) return Status::Ok();
  return Status::Busy("another archil server (pid " + std::to_string(*other) + ") serves region " +
                      region + " on this machine (" + AdvertisementPath(run_dir, region) +
                      "): stop it, or pass a different --region or --run-dir");
}

}  // namespace

Status RunServer(const ServerOptions& o) {
  ARCHIL_RETURN_IF_ERROR(ValidateServerOptions(o));
  ARCHIL_ASSIGN_OR_RETURN(pid_t owner_pid, OwnerFromEnv());
  std::unique_ptr<OwnerWatch> owner = WatchOwner(owner_pid);
  const sigset_t signals = BlockStopSignals();

  // What the server creates is its own: the data directory 0700, the catalog, its WAL, the
  // engine's files 0600 (the advertisement alone is for every local user, below).
  umask(077);
  const std::string run_dir = RunDir(o);
  ARCHIL_RETURN_IF_ERROR(RefuseSecondServer(run_dir, o.region));
  DataDirLocks locks;
  ARCHIL_RETURN_IF_ERROR(ClaimDataDir(o, &locks));
  const std::string& catalog_path = locks.catalog_path;

  engine::EngineOptions eo;
  eo.env = io::PosixEnv();
  eo.dir = std::filesystem::absolute(o.data_dir).string() + "/engine";
  eo.clock = &SystemClock::Instance();
  bool recovered = false;
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<TierService> tier,
                          OpenTier(o, catalog_path, &eo, &recovered));
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<SqliteCatalog> catalog,
                          SqliteCatalog::Open(catalog_path));

  // The storage engine, made to agree with the catalog before anything listens (ADR 0010).
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine, engine::Engine::Open(eo));
  ARCHIL_RETURN_IF_ERROR(Reconcile(catalog.get(), engine.get()));
  if (tier) ARCHIL_RETURN_IF_ERROR(tier->Start(engine.get(), catalog.get()));

  EngineDisks engine_disks(engine.get());
  DiskPurger purger(catalog.get(), &engine_disks);
  CatalogEvents events;
  events.Subscribe(&purger);
  events.Subscribe(&engine_disks);
  ControlService service(catalog.get(), &SystemClock::Instance(), o.region, &events, &engine_disks);
  EngineSearch engine_search(engine.get(), &SystemClock::Instance());
  service.set_search(&engine_search);
  EngineFiles engine_files(engine.get());
  service.set_files(&engine_files);
  ARCHIL_RETURN_IF_ERROR(BootstrapAdminKey(&service, o.data_dir, recovered));

  // What the server counts, for --metrics-listen (docs/operations.md lists every metric).
  metrics::Registry registry;
  // The disk server first: the API tells clients where it listens (GET /api/region).
  CatalogAuthority authority(catalog.get(), engine.get());
  ARCHIL_ASSIGN_OR_RETURN(server::DiskServerOptions dso,
                          DiskServerOptionsFor(o, &registry, tier.get()));
  ARCHIL_ASSIGN_OR_RETURN(
      std::unique_ptr<server::DiskServer> disk_server,
      server::DiskServer::Start(dso, engine.get(), &authority, &SystemClock::Instance()));
  engine_disks.set_server(disk_server.get());

  ARCHIL_ASSIGN_OR_RETURN(HttpServerOptions http, HttpOptionsFor(o));
  ApiRouter router(&service);
  router.SetMountAddress(disk_server->address());
  router.SetMetrics(&registry);
  if (tier) AddTierParts(&router, tier.get());
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server, HttpServer::Bind(http, &router));

  // Metrics listen before the advertisement is written: whoever waits for the advertisement (a
  // test, a script, the service manager's READY) may scrape at once.
  AddServerCollectors(&registry, engine.get(), disk_server.get(), catalog.get(), tier.get());
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!o.metrics_listen.empty()) {
    ARCHIL_ASSIGN_OR_RETURN(
        metrics_server,
        metrics::MetricsServer::Start(o.metrics_listen, [&registry] { return registry.Render(); }));
  }

  Endpoints self{o.region, server->url(), disk_server->address(),
                 std::filesystem::absolute(o.data_dir).string() + "/admin-api-key"};
  Status advertised = Advertise(run_dir, self);
  if (!advertised.ok()) {
    ARCHIL_LOG(kWarn) << "local CLIs will need --endpoint: " << advertised.ToString();
  }

  purger.Start();
  ARCHIL_LOG(kInfo) << "archil server: region " << o.region << ", control plane " << server->url()
                    << ", mounts " << disk_server->address() << ", data " << o.data_dir;
  Status served = ServeUntilStopped(
      signals, server.get(), &service,
      "region " + o.region + ", API " + server->url() + ", mounts " + disk_server->address());
  if (metrics_server) metrics_server->Stop();
  purger.Stop();
  engine_disks.set_server(nullptr);
  disk_server->Stop();
  // What the server holds goes to the bucket before it stops, within a bound (the rest goes at
  // the next start).
  if (tier) tier->Drain(20000);
  tier.reset();
  events.Unsubscribe(&engine_disks);
  events.Unsubscribe(&purger);
  if (advertised.ok()) RemoveAdvertisement(run_dir, o.region, getpid());
  ARCHIL_LOG(kInfo) << "archil server stopped";
  return served;
}

}  // namespace archil
