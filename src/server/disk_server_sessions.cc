// The DiskServer's connection and session messages (protocol.md §5.2, §10): HELLO, SESSION_CREATE
// (the token's grant, the root, the one-mount-per-disk rule), SESSION_BIND, GOODBYE, and the
// limit on failed authentications. The reactor that calls them is disk_server.cc.
#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "base/address_key.h"
#include "base/ip_range.h"
#include "base/log.h"
#include "proto/features.h"
#include "proto/messages.h"
#include "server/attr_convert.h"
#include "server/disk_server.h"

namespace archil::server {

namespace {

using proto::As;
using proto::WireStatus;

constexpr uint32_t kProtocolMin = 1, kProtocolMax = 1;
constexpr uint64_t kServerFeatures = proto::kFeatureLseek | proto::kFeatureUnstable |
                                     proto::kFeatureAttrPuts | proto::kFeatureWritePuts |
                                     proto::kFeatureCreatePuts | proto::kFeatureRemovePuts |
                                     proto::kFeatureDirPuts;
// Lanes of a session: 0 (small, synchronous) and 1..8 (bulk), protocol.md §6.
constexpr uint32_t kMaxLane = 8;
constexpr uint32_t kDefaultSlots = 64, kMaxSlots = 1024;
constexpr uint32_t kMinLeaseMs = 5000, kMaxLeaseMs = 120000;

std::string Bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

// The directory `subdir` names below the disk's root ("a/b"; empty and "." parts skipped): its
// attributes. EINVAL for a "..", ENOTDIR if it is not a directory, the lookup's error otherwise.
Result<posix::Attr> SubdirRoot(posix::FileSystem& fs, std::string_view subdir) {
  ARCHIL_ASSIGN_OR_RETURN(posix::Attr root, fs.GetAttr(posix::kRootIno));
  while (!subdir.empty()) {
    const size_t slash = subdir.find('/');
    const std::string_view name = subdir.substr(0, slash);
    subdir = slash == std::string_view::npos ? std::string_view() : subdir.substr(slash + 1);
    if (name.empty() || name == ".") continue;
    if (name == "..") return Status::Errno(EINVAL, "'..' is not allowed");
    ARCHIL_ASSIGN_OR_RETURN(root, fs.Lookup(root.ino, name));
  }
  if (!S_ISDIR(root.mode)) return Status::Errno(ENOTDIR, "not a directory");
  return root;
}

// The body of a refusal that names the mount holding the disk.
std::string HolderError(const std::string& message, const SessionIdentity& holder) {
  v1::ErrorReply e;
  e.set_message(message);
  v1::Holder* h = e.mutable_holder();
  h->set_hostname(holder.hostname);
  h->set_mount_path(holder.mount_path);
  h->set_holder_id(Bytes(holder.holder_id.data(), 8));
  return e.SerializeAsString();
}

}  // namespace

bool DiskServer::Hello(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m) {
  const auto& hello = As<v1::Hello>(m);
  const uint32_t client_min = hello.versions().min(), client_max = hello.versions().max();
  const uint32_t v = std::min(client_max, kProtocolMax);
  if (client_min > client_max || v < std::max(client_min, kProtocolMin)) {
    v1::ErrorReply e;
    e.set_message("protocol mismatch: client speaks " + std::to_string(client_min) + ".." +
                  std::to_string(client_max) + ", server speaks " + std::to_string(kProtocolMin) +
                  ".." + std::to_string(kProtocolMax) + "; upgrade the older side");
    v1::VersionRange* r = e.add_supported();
    r->set_min(kProtocolMin);
    r->set_max(kProtocolMax);
    c->Reply(h, WireStatus::kUnsupportedVersion, e.SerializeAsString());
    return false;
  }
  v1::HelloReply r;
  r.set_version(v);
  r.set_features(hello.features() & kServerFeatures);
  r.set_software(options_.software);
  r.set_server_id(server_id_);
  r.set_server_time_ns(clock_->NowMicros() * 1000);
  v1::Limits* l = r.mutable_limits();
  l->set_max_body(options_.limits.max_body);
  l->set_max_payload(options_.limits.max_payload);
  l->set_max_inflight(256);
  l->set_max_inflight_bytes(options_.max_inflight_bytes_per_connection);
  l->set_max_slots(kMaxSlots);
  l->set_max_lanes(1);
  c->Reply(h, WireStatus::kOk, r.SerializeAsString());
  return true;
}

void DiskServer::AuthFailed(const ConnPtr& c, const proto::FrameHeader& h) {
  const int64_t now = clock_->MonotonicNanos();
  Failures& f = failures_[AddressKey(c->peer())];
  if (now - f.window_start_ns > 60'000'000'000) f = Failures{now, 0};
  if (++f.count > kAuthFailuresPerMinute) {
    v1::ErrorReply e;
    e.set_message("too many failed authentications from this address; retry later");
    e.set_retry_after_ms(
        static_cast<uint32_t>((f.window_start_ns + 60'000'000'000 - now) / 1'000'000));
    c->Reply(h, WireStatus::kAuthRateLimited, e.SerializeAsString());
    return;
  }
  Error(c, h, WireStatus::kAuthFailed, "token rejected");
}

void DiskServer::RefuseGrant(const ConnPtr& c, const proto::FrameHeader& h, const Status& refusal) {
  switch (refusal.code()) {
    case Status::Code::kUnauthenticated:
      return AuthFailed(c, h);
    case Status::Code::kNotFound:
      return Error(c, h, WireStatus::kDiskNotFound, "no such disk");
    case Status::Code::kNoSpace:  // the disk's tree could not be made: its server is out of space
      return Error(c, h, WireStatus::kNoSpace, "the server is out of space: " + refusal.message());
    default:
      ARCHIL_LOG(kError) << "server: authorizing a session: " << refusal.ToString();
      return Error(c, h, WireStatus::kInternal, "the server could not check the token");
  }
}

// The message names the address as the server saw it, so that a client behind a NAT or a proxy
// learns which address to add.
bool DiskServer::AddressAllowed(const ConnPtr& c, const proto::FrameHeader& h, const Grant& grant) {
  if (IpAllowed(grant.allowed_ips, c->peer())) return true;
  ARCHIL_LOG(kInfo) << "server: refusing a session on " << grant.disk_id << " from " << c->peer()
                    << " (not in its allowed addresses)";
  Error(c, h, WireStatus::kAccessDenied,
        "disk " + grant.disk_id + " does not allow connections from " + c->peer());
  return false;
}

size_t DiskServer::EndDisallowedSessions(const std::set<uint64_t>& disks,
                                         const std::vector<IpRange>& allowed,
                                         std::string_view disk_id) {
  size_t n = 0;
  for (const std::shared_ptr<Session>& s : registry_.All()) {
    if (disks.count(s->identity().disk.value()) == 0) continue;
    for (const std::string& peer : s->Peers()) {
      if (IpAllowed(allowed, peer)) continue;
      if (Status st = registry_.End(
              s, {"disk " + std::string(disk_id) + " no longer allows connections from " + peer,
                  true});
          !st.ok()) {
        ARCHIL_LOG(kWarn) << "server: ending a session from a removed address: " << st.ToString();
      }
      ++n;
      break;
    }
  }
  return n;
}

bool DiskServer::ReclaimMountPoint(const ConnPtr& c, const proto::FrameHeader& h,
                                   const SessionIdentity& id, std::string* replaced_holder) {
  std::shared_ptr<Session> old = registry_.FindByClient(id.disk, id.client_id);
  if (!old) return true;
  const SessionIdentity& o = old->identity();
  if (o.token_id != id.token_id || old->connections() > 0) {
    c->Reply(h, WireStatus::kClientIdInUse,
             HolderError("already mounted at " + o.mount_path + " on " + o.hostname, o));
    return false;
  }
  *replaced_holder = Bytes(o.holder_id.data(), 8);
  if (Status ended = registry_.End(old, {"replaced by a new connection of this mount", true});
      !ended.ok()) {
    ARCHIL_LOG(kWarn) << "server: ending a replaced session: " << ended.ToString();
  }
  return true;
}

bool DiskServer::DisplaceOtherMounts(const ConnPtr& c, const proto::FrameHeader& h,
                                     const SessionIdentity& id, bool force,
                                     std::string_view disk_id) {
  // A final GOODBYE fences a displaced mount: its calls fail, it never binds again, and a new
  // session it asks for meets this same check.
  for (const std::shared_ptr<Session>& other : registry_.OtherMounts(id.disk, id.client_id)) {
    const SessionIdentity& o = other->identity();
    if (other->connections() > 0 && !force) {
      c->Reply(h, WireStatus::kDelegConflict,
               HolderError("the disk is mounted at " + o.mount_path + " on " + o.hostname +
                               " (archil mount --force takes it over)",
                           o));
      return false;
    }
    ARCHIL_LOG(kInfo) << "server: a mount at " << id.hostname << ":" << id.mount_path
                      << " takes disk " << disk_id << " over from " << o.hostname << ":"
                      << o.mount_path << (other->connections() > 0 ? " (forced)" : "");
    if (Status ended = registry_.End(
            other, {"the disk was taken over by a mount at " + id.mount_path + " on " + id.hostname,
                    true});
        !ended.ok()) {
      ARCHIL_LOG(kWarn) << "server: ending a displaced mount: " << ended.ToString();
    }
  }
  return true;
}

void DiskServer::SessionCreate(const ConnPtr& c, const proto::FrameHeader& h,
                               const proto::Message& msg) {
  const auto& m = As<v1::SessionCreate>(msg);
  if (c->authenticated()) return Error(c, h, WireStatus::kProtocolState, "already bound");
  Result<Grant> grant = authority_->Authorize(m.token(), m.disk());
  if (!grant.ok()) return RefuseGrant(c, h, grant.status());
  if (!AddressAllowed(c, h, *grant)) return;
  Result<engine::DiskFs*> fs = engine_->Disk(grant->disk);
  if (!fs.ok()) return Error(c, h, WireStatus::kDiskNotFound, "no such disk");
  // A checkpoint mount holds checkpoint_mu_ until its session exists, so that a delete of the
  // checkpoint, which ends its sessions first, cannot slip in between.
  std::unique_lock<std::mutex> checkpoint_lock(checkpoint_mu_, std::defer_lock);
  std::shared_ptr<engine::DiskFs> view;
  if (!m.checkpoint().empty()) {
    checkpoint_lock.lock();
    Result<std::shared_ptr<engine::DiskFs>> v =
        engine_->OpenCheckpoint(grant->disk, m.checkpoint());
    if (!v.ok()) {
      return Error(c, h, proto::WireStatusForErrno(ErrnoFor(v.status())),
                   "checkpoint: " + v.status().message());
    }
    view = std::move(v).value();
    fs = view.get();
  }
  Result<posix::Attr> root = SubdirRoot(**fs, m.subdir());
  if (!root.ok()) {
    return Error(c, h, proto::WireStatusForErrno(ErrnoFor(root.status())),
                 "subdirectory: " + root.status().message());
  }

  SessionIdentity id;
  id.token_id = grant->token_id;
  id.disk = grant->disk;
  id.root = root->ino;
  id.lease_ms = m.lease_ms() == 0 ? options_.default_lease_ms
                                  : std::clamp(m.lease_ms(), kMinLeaseMs, kMaxLeaseMs);
  id.hostname = m.hostname();
  id.mount_path = m.mount_path();
  id.checkpoint = m.checkpoint();
  const bool has_client_id = m.client_id().size() == id.client_id.size();
  if (has_client_id) std::copy(m.client_id().begin(), m.client_id().end(), id.client_id.begin());
  v1::SessionCreateReply r;
  if (has_client_id) {
    std::string replaced;
    if (!ReclaimMountPoint(c, h, id, &replaced)) return;
    if (!replaced.empty()) r.set_replaced_holder_id(replaced);
    // Exclusive mode: one mount per disk; a checkpoint's mounts are read-only and many.
    if (m.checkpoint().empty() && !DisplaceOtherMounts(c, h, id, m.force(), grant->disk_id)) {
      return;
    }
  }
  const uint32_t slots = m.slots() == 0 ? kDefaultSlots : std::clamp(m.slots(), 1u, kMaxSlots);
  Result<std::shared_ptr<Session>> s = registry_.Create(std::move(id), slots, std::move(view));
  if (!s.ok()) {
    ARCHIL_LOG(kError) << "server: creating a session: " << s.status().ToString();
    return Error(c, h, proto::WireStatusForErrno(ErrnoFor(s.status())),
                 "cannot create the session");
  }
  c->Bind(*s);
  const SessionIdentity& sid = (*s)->identity();
  r.set_session_id(Bytes(sid.id.data(), sid.id.size()));
  r.set_boot_verifier(engine_->boot_verifier());
  r.set_disk_id(grant->disk_id);
  r.set_disk_name(grant->disk_name);
  r.set_root_ino(sid.root.value());
  ToProto(*root, r.mutable_root_attr());
  r.set_slots(slots);
  r.set_lease_ms(sid.lease_ms);
  c->Reply(h, WireStatus::kOk, r.SerializeAsString());
  ARCHIL_LOG(kInfo) << "server: session of " << sid.hostname << ":" << sid.mount_path << " on "
                    << grant->disk_id << " (token " << sid.token_id << ") from " << c->peer();
}

Status DiskServer::DeleteCheckpoint(engine::DiskNo disk, std::string_view name) {
  std::lock_guard<std::mutex> lock(checkpoint_mu_);
  const size_t ended = registry_.EndCheckpoint(disk, name);
  if (ended > 0) {
    ARCHIL_LOG(kInfo) << "server: checkpoint " << name << " deleted: " << ended
                      << " mounts of it ended";
  }
  return engine_->DeleteCheckpoint(disk, name);
}

void DiskServer::SessionBind(const ConnPtr& c, const proto::FrameHeader& h,
                             const proto::Message& msg) {
  const auto& m = As<v1::SessionBind>(msg);
  if (c->authenticated()) return Error(c, h, WireStatus::kProtocolState, "already bound");
  Result<Grant> grant = authority_->Authorize(m.token(), "");
  if (!grant.ok()) {
    if (grant.status().code() == Status::Code::kUnauthenticated) return AuthFailed(c, h);
    return Error(c, h, WireStatus::kSessionUnknown, "no such session");
  }
  engine::SessionIdBytes id{};
  if (m.session_id().size() != id.size()) {
    return Error(c, h, WireStatus::kSessionUnknown, "no such session");
  }
  std::copy(m.session_id().begin(), m.session_id().end(), id.begin());
  if (m.lane() > kMaxLane) {
    return Error(c, h, WireStatus::kInvalid, "lane " + std::to_string(m.lane()) + " beyond 8");
  }
  Result<std::shared_ptr<Session>> s = registry_.Find(grant->disk, id);
  // Only the token that opened a session may bind it: any other (another disk's token, another
  // token of the disk) gets the wrong-secret answer.
  if (!s.ok() && s.status().code() == Status::Code::kPermissionDenied) return AuthFailed(c, h);
  if (!s.ok()) return Error(c, h, WireStatus::kSessionUnknown, "no such session");
  if ((*s)->identity().token_id != grant->token_id) return AuthFailed(c, h);
  if (!AddressAllowed(c, h, *grant)) return;
  c->Bind(*s, m.lane());
  v1::SessionBindReply r;
  r.set_boot_verifier(engine_->boot_verifier());
  for (uint64_t seq : (*s)->slots().LastSeqs()) r.add_slot_seq(seq);
  r.set_lease_ms((*s)->identity().lease_ms);
  c->Reply(h, WireStatus::kOk, r.SerializeAsString());
}

void DiskServer::Goodbye(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& msg) {
  const auto& m = As<v1::Goodbye>(msg);
  c->Reply(h, WireStatus::kOk, v1::GoodbyeReply().SerializeAsString());
  std::shared_ptr<Session> s = c->session();
  if (m.end_session() && s) {
    if (Status st = registry_.End(s, {"unmounted", true}); !st.ok()) {
      ARCHIL_LOG(kWarn) << "server: ending a session: " << st.ToString();
    }
  }
}

}  // namespace archil::server
