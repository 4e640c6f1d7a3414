#include "api/mount_record.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

namespace archil {

using nlohmann::json;

std::string MountRecordsDir(const std::string& run_dir) { return run_dir + "/mounts"; }

std::string MountRecordPath(const std::string& run_dir, const std::string& mountpoint) {
  // '/' becomes '-', and '-' and '%' are escaped, so two mount points never share a file.
  std::string name;
  for (char c : mountpoint) {
    if (c == '/') {
      name += '-';
    } else if (c == '-' || c == '%' || static_cast<unsigned char>(c) < 0x20) {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
      name += buf;
    } else {
      name += c;
    }
  }
  if (name.size() > 200)
    name = name.substr(0, 180) + "%" + std::to_string(std::hash<std::string>{}(mountpoint));
  return MountRecordsDir(run_dir) + "/" + name + ".json";
}

std::string MountRecordJson(const MountRecord& r) {
  json j = {{"mountpoint", r.mountpoint},
            {"disk", r.disk},
            {"disk_id", r.disk_id},
            {"server", r.server},
            {"pid", r.pid},
            {"read_only", r.read_only},
            {"checkpoint", r.checkpoint},
            {"token_file", r.token_file},
            {"started_unix_ms", r.started_unix_ms},
            {"mount_ms", r.mount_ms},
            {"updated_unix_ms", r.updated_unix_ms},
            {"state", r.state},
            {"requests", r.requests},
            {"in_flight", r.in_flight},
            {"errors", r.errors},
            {"bytes_read", r.bytes_read},
            {"bytes_written", r.bytes_written},
            {"open_files", r.open_files},
            {"held_orphans", r.held_orphans},
            {"read_ahead_hits", r.read_ahead_hits},
            {"read_ahead_misses", r.read_ahead_misses},
            {"read_ahead_bytes", r.read_ahead_bytes},
            {"reconnects", r.reconnects},
            {"retries", r.retries},
            {"recreated", r.recreated},
            {"unreachable_since_unix_ms", r.unreachable_since_unix_ms},
            {"waiting", r.waiting},
            {"unsynced", r.unsynced},
            {"write_back_errors", r.write_back_errors}};
  return j.dump() + "\n";
}

Result<MountRecord> ParseMountRecord(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Corruption("a mount record that is not a JSON object");
  MountRecord r;
  try {
    r.mountpoint = j.at("mountpoint").get<std::string>();
    r.disk = j.at("disk").get<std::string>();
    r.disk_id = j.at("disk_id").get<std::string>();
    r.server = j.at("server").get<std::string>();
    r.pid = j.at("pid").get<pid_t>();
    r.read_only = j.value("read_only", false);
    r.checkpoint = j.value("checkpoint", "");
    r.token_file = j.value("token_file", "");
    r.started_unix_ms = j.value("started_unix_ms", int64_t{0});
    r.mount_ms = j.value("mount_ms", 0.0);
    r.updated_unix_ms = j.value("updated_unix_ms", int64_t{0});
    r.state = j.value("state", std::string("connected"));
    r.requests = j.value("requests", uint64_t{0});
    r.in_flight = j.value("in_flight", uint64_t{0});
    r.errors = j.value("errors", uint64_t{0});
    r.bytes_read = j.value("bytes_read", uint64_t{0});
    r.bytes_written = j.value("bytes_written", uint64_t{0});
    r.open_files = j.value("open_files", uint64_t{0});
    r.held_orphans = j.value("held_orphans", uint64_t{0});
    r.read_ahead_hits = j.value("read_ahead_hits", uint64_t{0});
    r.read_ahead_misses = j.value("read_ahead_misses", uint64_t{0});
    r.read_ahead_bytes = j.value("read_ahead_bytes", uint64_t{0});
    r.reconnects = j.value("reconnects", uint64_t{0});
    r.retries = j.value("retries", uint64_t{0});
    r.recreated = j.value("recreated", uint64_t{0});
    r.unreachable_since_unix_ms = j.value("unreachable_since_unix_ms", int64_t{0});
    r.waiting = j.value("waiting", uint64_t{0});
    r.unsynced = j.value("unsynced", uint64_t{0});
    r.write_back_errors = j.value("write_back_errors", uint64_t{0});
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("a mount record with a missing or mistyped field: ") +
                              e.what());
  }
  if (r.mountpoint.empty() || r.mountpoint[0] != '/' || r.pid <= 0) {
    return Status::Corruption("a mount record without an absolute mount point and a pid");
  }
  return r;
}

Status WriteMountRecord(const std::string& run_dir, const MountRecord& r) {
  std::string dir = MountRecordsDir(run_dir);
  if (mkdir(run_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, "create " + run_dir);
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno(errno, "create " + dir);
  }
  std::string path = MountRecordPath(run_dir, r.mountpoint);
  std::string tmp = path + ".tmp";
  std::string text = MountRecordJson(r);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "write " + tmp);
  ssize_t n = write(fd, text.data(), text.size());
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) return Status::IoError("short write of " + tmp);
  if (rename(tmp.c_str(), path.c_str()) != 0) return Status::FromErrno(errno, "rename " + tmp);
  return Status::Ok();
}

Result<MountRecord> ReadMountRecord(const std::string& run_dir, const std::string& mountpoint) {
  std::ifstream in(MountRecordPath(run_dir, mountpoint));
  if (!in) return Status::NotFound("no archil mount at " + mountpoint);
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseMountRecord(ss.str());
}

std::vector<MountRecord> ListMountRecords(const std::string& run_dir) {
  std::vector<MountRecord> out;
  std::string dir = MountRecordsDir(run_dir);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    std::ifstream in(dir + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    Result<MountRecord> r = ParseMountRecord(ss.str());
    if (r.ok()) out.push_back(std::move(r.value()));
  }
  closedir(d);
  std::sort(out.begin(), out.end(),
            [](const MountRecord& a, const MountRecord& b) { return a.mountpoint < b.mountpoint; });
  return out;
}

void RemoveMountRecord(const std::string& run_dir, const std::string& mountpoint) {
  unlink(MountRecordPath(run_dir, mountpoint).c_str());
}

std::string NormalizeMountpoint(const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) p = std::filesystem::path(cwd) / p;
  }
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

namespace {

// The state letter of /proc/<pid>/stat (R, S, D, T, t, Z, ...), or 0 if it cannot be read.
char ProcessState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

}  // namespace

bool ProcessAlive(pid_t pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  // A daemon that died but was not reaped yet (its parent, often init, has not waited for it) is
  // a zombie: it answers kill(pid, 0) but serves nothing.
  return ProcessState(pid) != 'Z';
}

bool ProcessStopped(pid_t pid) {
  const char state = pid > 0 ? ProcessState(pid) : 0;
  return state == 'T' || state == 't';
}

}  // namespace archil
