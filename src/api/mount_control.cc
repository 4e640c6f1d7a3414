#include "api/mount_control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "api/json_body.h"
#include "api/mount_record.h"
#include "base/siphash.h"

namespace archil {

using nlohmann::json;

std::string MountControlPath(const std::string& run_dir, const std::string& mountpoint) {
  static const SipHashKey kKey = {'a', 'r', 'c', 'h', 'i', 'l', '-', 'm',
                                  'o', 'u', 'n', 't', '-', 'c', 't', 'l'};
  char name[24];
  std::snprintf(name, sizeof(name), "%016llx.sock",
                static_cast<unsigned long long>(SipHash24(kKey, mountpoint)));
  return MountRecordsDir(run_dir) + "/" + name;
}

Result<UnixAddress> UnixAddress::For(const std::string& path) {
  UnixAddress a;
  a.addr_.sun_family = AF_UNIX;
  std::string p = path;
  if (p.size() >= sizeof(a.addr_.sun_path)) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return Status::InvalidArgument("socket path too long");
    const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
    a.dir_fd_ = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (a.dir_fd_ < 0) return Status::FromErrno(errno, "open " + dir);
    p = "/proc/self/fd/" + std::to_string(a.dir_fd_) + path.substr(slash);
    if (p.size() >= sizeof(a.addr_.sun_path)) {
      return Status::InvalidArgument("socket name too long: " + path);
    }
  }
  std::memcpy(a.addr_.sun_path, p.c_str(), p.size() + 1);
  return a;
}

UnixAddress::~UnixAddress() {
  if (dir_fd_ >= 0) close(dir_fd_);
}

Status CheckpointFromAViewRefused(std::string_view mountpoint, std::string_view disk_id,
                                  std::string_view checkpoint) {
  const std::string disk(disk_id);
  return Status::Errno(EROFS, std::string(mountpoint) + " is a read-only view of checkpoint " +
                                  std::string(checkpoint) + " of disk " + disk +
                                  ", which takes no checkpoints: take them of the live disk, "
                                  "through a mount of it (archil mount " +
                                  disk + " MOUNTPOINT; archil checkpoints create MOUNTPOINT NAME)");
}

std::string EncodeControlRequest(const ControlRequest& r) {
  json j = {{"v", kMountControlVersion}, {"op", r.op}};
  if (r.op == "metrics") {
    j["format"] = r.format;
  } else {
    j["name"] = r.name;
  }
  return j.dump() + "\n";
}

Result<ControlRequest> DecodeControlRequest(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  ARCHIL_ASSIGN_OR_RETURN(json j, ParseJsonObject(line));
  ARCHIL_RETURN_IF_ERROR(CheckKnownFields(j, {"v", "op", "name", "format"}));
  ARCHIL_ASSIGN_OR_RETURN(std::optional<uint64_t> v, OptionalUint(j, "v", UINT32_MAX));
  if (v != uint64_t{kMountControlVersion}) {
    return Status::InvalidArgument(
        "unsupported control version (this daemon speaks 1): "
        "remount with the new client");
  }
  ControlRequest r;
  ARCHIL_ASSIGN_OR_RETURN(r.op, RequiredString(j, "op"));
  if (r.op == "metrics") {
    ARCHIL_ASSIGN_OR_RETURN(r.format, RequiredString(j, "format"));
    if (r.format != "text" && r.format != "json") {
      return Status::InvalidArgument("metrics come as \"text\" or \"json\", not '" + r.format +
                                     "'");
    }
    return r;
  }
  if (r.op != "checkpoint_create") return Status::InvalidArgument("unknown op '" + r.op + "'");
  ARCHIL_ASSIGN_OR_RETURN(r.name, RequiredString(j, "name"));
  return r;
}

std::string EncodeControlReply(const ControlReply& r) {
  json j;
  if (r.status.ok() && !r.metrics.empty()) {
    j = {{"ok", true}, {"metrics", r.metrics}};
  } else if (r.status.ok()) {
    j = {{"ok", true},
         {"checkpoint_name", r.checkpoint_name},
         {"status", r.checkpoint_status},
         {"created_at_ns", r.created_at_ns},
         {"epoch", r.epoch}};
  } else {
    j = {{"ok", false}, {"errno", ErrnoFor(r.status)}, {"error", r.status.message()}};
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<ControlReply> DecodeControlReply(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  json j = json::parse(line, nullptr, false);
  const Status bad = Status::Corruption("the mount daemon sent a reply that is not one");
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) return bad;
  ControlReply r;
  if (!j["ok"].get<bool>()) {
    if (!j.contains("errno") || !j["errno"].is_number_integer() || !j.contains("error") ||
        !j["error"].is_string()) {
      return bad;
    }
    const int64_t e = j["errno"].get<int64_t>();
    r.status =
        Status::Errno(e > 0 && e < 4096 ? static_cast<int>(e) : EIO, j["error"].get<std::string>());
    return r;
  }
  if (j.contains("metrics")) {
    if (!j["metrics"].is_string() || j["metrics"].get_ref<const std::string&>().empty()) return bad;
    r.metrics = j["metrics"].get<std::string>();
    return r;
  }
  if (!j.contains("checkpoint_name") || !j["checkpoint_name"].is_string() ||
      !j.contains("status") || !j["status"].is_string() || !j.contains("created_at_ns") ||
      !j["created_at_ns"].is_number_integer() || !j.contains("epoch") ||
      !j["epoch"].is_number_unsigned()) {
    return bad;
  }
  r.checkpoint_name = j["checkpoint_name"].get<std::string>();
  r.checkpoint_status = j["status"].get<std::string>();
  r.created_at_ns = j["created_at_ns"].get<int64_t>();
  r.epoch = j["epoch"].get<uint64_t>();
  return r;
}

}  // namespace archil
