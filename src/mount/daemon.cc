#include "mount/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "api/mount_control.h"
#include "api/mount_record.h"
#include "api/mount_table.h"
#include "base/owner_watch.h"
#include "base/pass_loop.h"
#include "base/siphash.h"
#include "base/status.h"
#include "client/disk_client.h"
#include "client/remote_fs.h"
#include "fs/mount_core.h"
#include "fuse/fuse_adapter.h"
#include "metrics/metrics_server.h"
#include "metrics/registry.h"
#include "mount/control_server.h"
#include "mount/journal.h"
#include "mount/mount_metrics.h"

extern char** environ;

namespace archil::mount {

int64_t MonotonicNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

namespace {

int64_t UnixMillis() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

void WriteReady(int* fd, const std::string& line) {
  if (*fd < 0) return;
  (void)!write(*fd, line.data(), line.size());
  close(*fd);
  *fd = -1;
}

// Why the session could not be opened, in the user's words.
std::string ConnectError(const Status& s, const DaemonOptions& o) {
  switch (ErrnoFor(s)) {
    case EACCES:
      // ACCESS_DENIED (the token is good; this machine's address is not in the disk's list,
      // docs/protocol.md §11) or AUTH_FAILED (the token), as DiskClient names the wire status.
      if (s.message().rfind("ACCESS_DENIED", 0) == 0) {
        return "disk " + o.disk_ref + " refused this machine (" + s.message() +
               "): its allowed addresses are shown by `archil disks allowed-ips " + o.disk + "`";
      }
      return "the disk token was refused by " + o.server + " (" + s.message() +
             "): check ARCHIL_MOUNT_TOKEN or --token-file";
    case ENOENT:
      return "disk " + o.disk_ref + " does not exist on " + o.server + " (" + s.message() + ")";
    case EBUSY:
      return "disk " + o.disk_ref + " is busy: " + s.message();
    case ENOTDIR:
      return "subdirectory " + o.subdir + " of disk " + o.disk + " is not a directory";
    default:
      break;
  }
  if (s.code() == Status::Code::kUnavailable) {
    return "the disk server at " + o.server + " is unreachable (" + s.message() +
           "); is `archil server` running?";
  }
  return "could not open disk " + o.disk_ref + ": " + s.message();
}

void WriteSysfs(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)!write(fd, value.data(), value.size());
  close(fd);
}

// Asks the kernel to end the FUSE connection: every request fails, the loop ends.
void AbortConnection(unsigned minor) {
  if (Status s = AbortFuseConnection(minor); !s.ok() && s.code() != Status::Code::kNotFound) {
    std::fprintf(stderr, "archil-mount: abort FUSE connection %u: %s\n", minor,
                 s.message().c_str());
  }
}

// Waits up to `timeout_ms` for a child process's stat of `path` to return. Every request on a
// new FUSE mount waits for INIT's reply, so the stat returns only once the kernel applied it.
// A child, never this process: a daemon blocked on its own mount could not exit if killed,
// since the kernel would wait for a reply only it can give (docs/adr/0013-mount-daemon-binary.md).
bool StatFromChild(const std::string& path, int timeout_ms) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {  // only async-signal-safe calls: the parent has threads
    struct stat st {};
    const char ok = stat(path.c_str(), &st) == 0 ? '1' : '0';
    (void)!write(fds[1], &ok, 1);
    _exit(0);
  }
  close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  char ok = '0';
  const bool answered = poll(&p, 1, timeout_ms) > 0 && read(fds[0], &ok, 1) == 1;
  close(fds[0]);
  if (!answered) kill(pid, SIGKILL);  // it ends when the connection does
  waitpid(pid, nullptr, answered ? 0 : WNOHANG);
  return answered && ok == '1';
}

// `sync -f MOUNTPOINT` in a child process (see daemon.h); returns its pid, or 0.
pid_t SpawnSync(const std::string& mountpoint) {
  std::vector<std::string> args = {"sync", "-f", mountpoint};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/bin/sync", nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : 0;
}

// This host's mount point as the server knows it (protocol.md §10.2): the same mount point
// remounting after its daemon died takes its old session back; any other is another mount.
std::array<uint8_t, 16> ClientId(const std::string& host, const std::string& mountpoint) {
  const std::string who = host + '\0' + mountpoint;
  std::array<uint8_t, 16> id{};
  for (int half = 0; half < 2; ++half) {
    SipHashKey key{'a', 'r', 'c', 'h', 'i', 'l', '-', 'm',
                   'o', 'u', 'n', 't', 0,   0,   0,   static_cast<uint8_t>(half)};
    uint64_t h = SipHash24(key, who);
    for (int i = 0; i < 8; ++i) id[half * 8 + i] = static_cast<uint8_t>(h >> (8 * i));
  }
  return id;
}

// How the daemon's client reaches and opens its disk.
client::DiskClientOptions ClientOptionsFor(const DaemonOptions& o, metrics::Registry* registry) {
  client::DiskClientOptions co;
  co.metrics = registry;
  co.address = o.server;
  co.ca_file = o.ca_file;
  co.allow_cleartext = o.allow_cleartext;
  co.token = o.token;
  co.disk = o.disk;
  co.subdir = o.subdir;
  co.checkpoint = o.checkpoint;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  co.hostname = host;
  co.mount_path = o.mountpoint;
  co.client_id = ClientId(co.hostname, o.mountpoint);
  co.force = o.force;
  co.software = "archil-mount";
  co.unstable = !o.sync && !o.read_only;
  co.retry_for_ms = o.timeout_s * 1000;  // 0: wait for the server forever, as a hard mount
  // A server under a flood of connections lets them in at its admission share (protocol.md
  // §12) and the kernel drops SYNs while its queue is full: 5 s leaves room for the SYN to be
  // sent again at 1 s and 3 s.
  co.connect_timeout_ms = 5000;
  return co;
}

// The kernel's read-ahead and dirty-page bound for the mount (its backing device `0:minor`).
// REQUIRES: after INIT: the kernel sets the read-ahead from INIT's reply (capped at its own
// offer, 128 KiB), overwriting anything written before.
void TuneKernelCache(unsigned minor, const DaemonOptions& o) {
  const std::string bdi = "/sys/class/bdi/0:" + std::to_string(minor);
  WriteSysfs(bdi + "/read_ahead_kb", std::to_string(o.read_ahead_kb));
  if (o.max_cache_mb > 0) {
    WriteSysfs(bdi + "/max_bytes", std::to_string(uint64_t{o.max_cache_mb} << 20));
  }
}

// What `archil status` reads about this mount, as it starts.
MountRecord NewMountRecord(const DaemonOptions& o, const std::string& disk_id, pid_t self,
                           double mount_ms) {
  MountRecord record;
  record.mountpoint = o.mountpoint;
  record.disk = o.disk_ref;
  record.disk_id = disk_id;
  record.server = o.server;
  record.pid = self;
  record.read_only = o.read_only;
  record.checkpoint = o.checkpoint;
  record.token_file = o.token_file;
  record.started_unix_ms = UnixMillis();
  record.mount_ms = mount_ms;
  return record;
}

// Refreshes `record` from the mount's counters, journals what changed since the last refresh (a
// reconnection, a lost session, an outage's start and end: once each, not every second), and
// writes it where `archil status` reads it.
void RefreshMountRecord(const DaemonOptions& o, fuse::Adapter& adapter, fs::MountCore& core,
                        client::DiskClient* disk, const client::RemoteFs& remote, Journal* journal,
                        MountRecord* record) {
  const fuse::AdapterStats& st = adapter.stats();
  client::ClientStats cs = disk->stats();
  fs::CoreStats core_stats = core.stats();
  record->updated_unix_ms = UnixMillis();
  record->requests = st.requests.load();
  record->in_flight = st.in_flight.load();
  const client::AttrLog::Stats attr_log = remote.attr_log_stats();
  record->unsynced = disk->UnstablePending() + attr_log.pending;
  record->errors = st.errors.load();
  if (attr_log.lost > record->write_back_errors) {
    journal->Error(std::to_string(attr_log.lost - record->write_back_errors) +
                   " attribute changes (with the writes before them) this mount answered did not "
                   "reach the disk (the next fsync reports EIO)");
  }
  record->write_back_errors = attr_log.lost;
  record->bytes_read = st.bytes_read.load();
  record->bytes_written = st.bytes_written.load();
  record->open_files = core_stats.open_files;
  record->held_orphans = core_stats.held_orphans;
  record->read_ahead_hits = core_stats.read_ahead.hits;
  record->read_ahead_misses = core_stats.read_ahead.misses;
  record->read_ahead_bytes = core_stats.read_ahead.bytes_cached;
  if (cs.reconnects > record->reconnects) {
    journal->Warning("reconnected to the disk server " + o.server + " (" +
                     std::to_string(cs.reconnects) + " reconnections, " +
                     std::to_string(cs.retries) + " requests resent)");
  }
  if (cs.recreated > record->recreated) {
    journal->Warning("the server had lost this mount's session; a new one was created");
  }
  if (cs.unreachable_since_ms != 0 && record->unreachable_since_unix_ms == 0) {
    journal->Warning("the disk server " + o.server + " is unreachable; requests wait for it " +
                     (o.timeout_s > 0 ? "for " + std::to_string(o.timeout_s) + " s, then fail"
                                      : "until it answers (`archil unmount -f` gives up)"));
  } else if (cs.unreachable_since_ms == 0 && record->unreachable_since_unix_ms != 0) {
    journal->Info("the disk server " + o.server + " answers again after " +
                  std::to_string((UnixMillis() - record->unreachable_since_unix_ms) / 1000) + " s");
  }
  record->unreachable_since_unix_ms = cs.unreachable_since_ms;
  record->waiting = cs.waiting;
  record->state = cs.unreachable_since_ms != 0 ? "unreachable" : "connected";
  record->reconnects = cs.reconnects;
  record->retries = cs.retries;
  record->recreated = cs.recreated;
  (void)WriteMountRecord(o.run_dir, *record);
}

// A request on the mount's control socket: `archil metrics MOUNTPOINT`, or `archil checkpoints
// create MOUNTPOINT NAME` (the CLI has synced the mount first, and every write this daemon
// answered is durable on the server, so the checkpoint holds them all). A mount of a checkpoint
// refuses the latter, whoever asks (the server refuses it on such a session too).
ControlReply AnswerControl(const ControlRequest& r, const DaemonOptions& o,
                           client::DiskClient* disk, client::RemoteFs* remote,
                           metrics::Registry* registry, Journal* journal) {
  ControlReply reply;
  if (r.op == "metrics") {
    reply.metrics = r.format == "json" ? registry->RenderJson() : registry->Render();
    return reply;
  }
  if (!o.checkpoint.empty()) {
    reply.status = CheckpointFromAViewRefused(o.mountpoint, disk->disk_id(), o.checkpoint);
    return reply;
  }
  // After the attribute changes this daemon answered itself (they ride ahead of it).
  Result<v1::CheckpointCreateReply> made = remote->Checkpoint(r.name);
  if (!made.ok()) {
    reply.status = made.status();
    journal->Warning("checkpoint '" + r.name + "' failed: " + made.status().message());
    return reply;
  }
  reply.checkpoint_name = r.name;
  reply.created_at_ns = made->created_at_ns();
  reply.epoch = made->epoch();
  return reply;
}

// Signals are taken by the main thread only (sigtimedwait): blocks them, and every thread
// started later inherits the mask. Returns the set to wait on.
sigset_t TakeSignals() {
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return sigs;
}

// The owner's death ends the mount from whatever state this process is in: under `*mount_mu`,
// it aborts the mount in `*entry` (if made), removes the mount record and exits. None without
// an owner.
std::unique_ptr<OwnerWatch> WatchOwner(const DaemonOptions& o, std::mutex* mount_mu,
                                       std::optional<MountEntry>* entry) {
  if (o.owner_pid <= 0) return nullptr;
  return std::make_unique<OwnerWatch>(o.owner_pid, [&o, mount_mu, entry] {
    std::lock_guard<std::mutex> lock(*mount_mu);
    std::fprintf(stderr, "archil-mount: owner process %d ended: aborting the mount at %s\n",
                 static_cast<int>(o.owner_pid), o.mountpoint.c_str());
    if (*entry) (void)AbortAndDetach(**entry);
    RemoveMountRecord(o.run_dir, o.mountpoint);
    _exit(ExitCodeFor(Status::Code::kUnavailable));
  });
}

// --metrics-listen's server, rendering `registry`; none without the flag.
Result<std::unique_ptr<metrics::MetricsServer>> StartMetrics(const DaemonOptions& o,
                                                             metrics::Registry* registry) {
  if (o.metrics_listen.empty()) return std::unique_ptr<metrics::MetricsServer>();
  return metrics::MetricsServer::Start(o.metrics_listen, [registry] { return registry->Render(); });
}

// The mounted daemon's life, until the kernel ends the connection (unmounted, or aborted on a
// stop signal: SIGTERM, SIGINT, SIGHUP stop the adapter and abort the connection `minor`). Every
// sync_interval_ms it runs `sync -f` on the mount in a child (one at a time), so that the
// kernel's write-back cache reaches the server within that bound, and runs `synced` once each
// child has ended; every second it journals new EIO replies and runs `update`. Returns once the
// last sync child is reaped.
void ServeUntilUnmounted(const DaemonOptions& o, const sigset_t& sigs, fuse::Adapter* adapter,
                         std::optional<unsigned> minor, Journal* journal,
                         const std::function<void()>& update, const std::function<void()>& synced) {
  uint64_t errors_logged = 0;
  pid_t sync_pid = 0;
  int64_t next_sync = MonotonicNanos() + int64_t{o.sync_interval_ms} * 1'000'000;
  int64_t next_update = MonotonicNanos() + 1'000'000'000;
  bool stopping = false;
  for (;;) {
    timespec tick{0, 250'000'000};
    siginfo_t info{};
    int sig = sigtimedwait(&sigs, &info, &tick);
    if (sig == SIGUSR1) break;  // the kernel ended the connection: unmounted
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
      if (!stopping) {
        journal->Info("unmounting " + o.mountpoint + " on signal " + std::to_string(sig));
        stopping = true;
        adapter->Stop();
        if (minor) AbortConnection(*minor);
      }
      continue;
    }
    if (sync_pid > 0 && waitpid(sync_pid, nullptr, WNOHANG) == sync_pid) {
      sync_pid = 0;
      synced();
    }
    const int64_t now = MonotonicNanos();
    if (!stopping && sync_pid == 0 && now >= next_sync) {
      sync_pid = SpawnSync(o.mountpoint);
      next_sync = now + int64_t{o.sync_interval_ms} * 1'000'000;
    }
    if (now >= next_update) {
      next_update = now + 1'000'000'000;
      uint64_t errors = adapter->stats().errors.load();
      if (errors > errors_logged) {
        journal->Error(std::to_string(errors - errors_logged) +
                       " requests failed with EIO: the disk server " + o.server +
                       " could not be reached or refused the session");
        errors_logged = errors;
      }
      update();
    }
  }
  if (sync_pid > 0) waitpid(sync_pid, nullptr, 0);
}

}  // namespace

std::string ReadyOk(double mount_ms) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "OK %.3f\n", mount_ms);
  return buf;
}

std::string ReadyErr(int exit_code, const std::string& message) {
  std::string m = message;
  for (char& c : m) {
    if (c == '\n') c = ' ';
  }
  return "ERR " + std::to_string(exit_code) + " " + m + "\n";
}

bool ParseReady(const std::string& line, ReadyLine* out) {
  std::string l = line;
  while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
  if (l.rfind("OK ", 0) == 0) {
    char* end = nullptr;
    double ms = std::strtod(l.c_str() + 3, &end);
    if (end == l.c_str() + 3 || *end != '\0' || !std::isfinite(ms) || ms < 0) return false;
    *out = ReadyLine{true, ms, 0, ""};
    return true;
  }
  if (l.rfind("ERR ", 0) == 0) {
    char* end = nullptr;
    long code = std::strtol(l.c_str() + 4, &end, 10);
    if (end == l.c_str() + 4 || *end != ' ' || code <= 0 || code > 255) return false;
    *out = ReadyLine{false, 0, static_cast<int>(code), std::string(end + 1)};
    return true;
  }
  return false;
}

// How long one commit of the write-back (DiskClient::Commit) waits for a server.
constexpr int kCommitBudgetMs = 10000;

int RunDaemon(const DaemonOptions& o, int ready_fd) {
  const sigset_t sigs = TakeSignals();
  // Under `mount_mu`, held while the mount is made and found, so that the owner's end finds a
  // mount made meanwhile too.
  std::mutex mount_mu;
  std::optional<MountEntry> entry;
  std::unique_ptr<OwnerWatch> owner = WatchOwner(o, &mount_mu, &entry);

  // What the mount counts (`archil metrics`, --metrics-listen): declared before everything it
  // reads, rendered only by servers declared after them (so stopped before they go).
  metrics::Registry registry;
  Result<std::unique_ptr<client::DiskClient>> connected =
      client::DiskClient::Connect(ClientOptionsFor(o, &registry));
  if (!connected.ok()) {
    Status s = connected.status();
    int code = ExitCodeFor(s.code());
    WriteReady(&ready_fd, ReadyErr(code, ConnectError(s, o)));
    return code;
  }
  std::unique_ptr<client::DiskClient> disk = std::move(connected.value());
  Journal journal("archil-" + disk->disk_id(), o.journal_socket);

  // This mount alone changes the disk (the server displaced any other writer): a directory's
  // attributes after a change of its names come with that change's answer, and attribute changes
  // of an inode whose attributes it knows are answered here (client/attr_log.h).
  client::RemoteFs remote(disk.get(), /*exclusive=*/!o.read_only);
  // The mount's own read-ahead keeps READs in flight while the kernel is between its windows:
  // four of the kernel's windows ahead, at most 16 MiB (docs/semantics.md §5.11).
  const size_t own_read_ahead = std::min<size_t>(size_t{o.read_ahead_kb} * 1024 * 4, 16 << 20);
  fs::MountCore core(
      &remote, posix::Ino(disk->root_ino()),
      fs::MountOptions{.read_only = o.read_only, .read_ahead_bytes = own_read_ahead});
  fuse::AdapterOptions ao;
  ao.writeback_cache = !o.read_only;
  ao.read_ahead_kb = o.read_ahead_kb;
  ao.fs_name = "archil:" + disk->disk_id() + (o.checkpoint.empty() ? "" : "@" + o.checkpoint) +
               (o.subdir.empty() ? "" : ":" + o.subdir);
  // Figures for `df` to fall back on while no server answers (client/remote_fs.h).
  (void)remote.Statfs();
  fuse::Adapter adapter(&core, ao);
  AddMountCollectors(&registry, &adapter, &core, &remote, disk.get());
  Result<std::unique_ptr<metrics::MetricsServer>> metrics_server = StartMetrics(o, &registry);
  if (!metrics_server.ok()) {
    const int code = ExitCodeFor(metrics_server.status().code());
    WriteReady(&ready_fd, ReadyErr(code, "--metrics-listen " + o.metrics_listen + ": " +
                                             metrics_server.status().message()));
    (void)disk->Goodbye();
    return code;
  }
  std::unique_lock<std::mutex> mounting(mount_mu);
  if (Status s = adapter.Mount(o.mountpoint, o.read_only); !s.ok()) {
    journal.Error("mount at " + o.mountpoint + " failed: " + s.message());
    WriteReady(&ready_fd, ReadyErr(ExitCodeFor(Status::Code::kIoError),
                                   "could not mount at " + o.mountpoint + ": " + s.message()));
    (void)disk->Goodbye();
    return ExitCodeFor(Status::Code::kIoError);
  }
  entry = FindMount(o.mountpoint);
  // The kernel's connection, to abort on a stop (none if the mount table did not show it).
  const std::optional<unsigned> minor =
      entry ? std::optional<unsigned>(entry->minor) : std::nullopt;
  mounting.unlock();

  const pid_t self = getpid();
  std::thread loop([&adapter, self] {
    (void)adapter.Run();
    kill(self, SIGUSR1);
  });
  if (!adapter.WaitReady(10000)) {
    WriteReady(&ready_fd, ReadyErr(ExitCodeFor(Status::Code::kIoError),
                                   "the kernel did not start the mount within 10 s"));
    adapter.Stop();
    if (minor) AbortConnection(*minor);
    loop.join();
    (void)disk->Goodbye();
    return ExitCodeFor(Status::Code::kIoError);
  }
  // Init ran, but the kernel applies INIT's reply only once libfuse has written it: until then a
  // sysfs write may be overwritten.
  if (!StatFromChild(o.mountpoint, 10000)) {
    journal.Warning("the mount at " + o.mountpoint + " did not answer a stat within 10 s");
  }
  if (minor) TuneKernelCache(*minor, o);
  const double mount_ms = static_cast<double>(MonotonicNanos() - o.start_ns) / 1e6;
  char line[96];
  std::snprintf(line, sizeof(line), "Mounted disk in %.0f ms", mount_ms);
  journal.Info(std::string(line) + " (" + o.disk_ref + " at " + o.mountpoint + ", server " +
               o.server + ")");

  MountRecord record = NewMountRecord(o, disk->disk_id(), self, mount_ms);
  auto update = [&] {
    RefreshMountRecord(o, adapter, core, disk.get(), remote, &journal, &record);
  };
  update();
  // `archil checkpoints create MOUNTPOINT NAME` and `archil metrics MOUNTPOINT`.
  ControlServer control(MountControlPath(o.run_dir, o.mountpoint), [&](const ControlRequest& r) {
    return AnswerControl(r, o, disk.get(), &remote, &registry, &journal);
  });
  if (Status s = control.Start(); !s.ok()) {
    journal.Warning("no control socket (checkpoints cannot be taken through this mount): " +
                    s.message());
  }
  WriteReady(&ready_fd, ReadyOk(mount_ms));

  // What the server answered before its sync is made durable right after each write-back of
  // dirty pages (docs/adr/0027), and at least every sync_interval_ms, the attribute changes this
  // daemon answered itself sent first (ADR 0028); a pass that finds no server gives up after 10 s
  // and the next one tries again. (Write-back errors are left for the next fsync to report.)
  PassLoop committer("metadata commit", o.sync_interval_ms, [&disk, &remote] {
    ARCHIL_RETURN_IF_ERROR(remote.FlushAttrs(kCommitBudgetMs));
    return disk->Commit(kCommitBudgetMs);
  });
  if (disk->Unstable()) committer.Start();  // the attribute log needs UNSTABLE too

  ServeUntilUnmounted(o, sigs, &adapter, minor, &journal, update, [&] { committer.Kick(); });
  committer.Stop();
  control.Stop();
  loop.join();
  adapter.Stop();
  if (Status s = remote.FlushAttrs(kCommitBudgetMs); !s.ok()) {
    journal.Error("unmounted with attribute changes this mount had answered not sent: " +
                  s.message());
  }
  if (Status s = disk->Commit(kCommitBudgetMs); !s.ok()) {
    journal.Error("unmounted with " + std::to_string(disk->UnstablePending()) +
                  " operations the server had answered and not yet made durable: " + s.message());
  }
  if (const uint64_t lost = remote.attr_log_stats().lost; lost > record.write_back_errors) {
    journal.Error(std::to_string(lost - record.write_back_errors) +
                  " attribute changes this mount answered did not reach the disk");
  }
  Status bye = disk->Goodbye();
  RemoveMountRecord(o.run_dir, o.mountpoint);
  journal.Info("Unmounted " + o.mountpoint +
               (bye.ok() ? "" : " (session end: " + bye.message() + ")"));
  return 0;
}

}  // namespace archil::mount
