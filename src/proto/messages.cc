#include "proto/messages.h"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <array>

namespace archil::proto {
namespace {

namespace v1 = ::archil::v1;

template <typename T>
std::unique_ptr<Message> New() {
  return std::make_unique<T>();
}

template <typename T>
const v1::Mut* MutField(const Message& m) {
  if constexpr (requires(const T& r) { r.mut(); }) {
    const T& r = static_cast<const T&>(m);
    return r.has_mut() ? &r.mut() : nullptr;
  } else {
    return nullptr;
  }
}

template <typename Req, typename Rep>
constexpr MessageType T(uint16_t code, std::string_view name, bool mutating, bool pre_auth = false,
                        bool push = false) {
  return MessageType{code, name, mutating, pre_auth, push, &New<Req>, &New<Rep>, &MutField<Req>};
}

constexpr bool kMut = true, kRead = false, kPreAuth = true, kPush = true;

// protocol.md §5.1, in its order.
const std::array kTypes = {
    T<v1::Hello, v1::HelloReply>(0x0001, "HELLO", kRead, kPreAuth),
    T<v1::SessionCreate, v1::SessionCreateReply>(0x0002, "SESSION_CREATE", kRead, kPreAuth),
    T<v1::SessionBind, v1::SessionBindReply>(0x0003, "SESSION_BIND", kRead, kPreAuth),
    T<v1::LeaseRenew, v1::LeaseRenewReply>(0x0004, "LEASE_RENEW", kRead),
    T<v1::ReclaimComplete, v1::ReclaimCompleteReply>(0x0005, "RECLAIM_COMPLETE", kRead),
    T<v1::Ping, v1::PingReply>(0x0006, "PING", kRead, kPreAuth),
    T<v1::Goodbye, v1::GoodbyeReply>(0x0007, "GOODBYE", kRead, kPreAuth, kPush),
    T<v1::Lookup, v1::LookupReply>(0x0101, "LOOKUP", kRead),
    T<v1::GetAttr, v1::GetAttrReply>(0x0102, "GETATTR", kRead),
    T<v1::SetAttr, v1::SetAttrReply>(0x0103, "SETATTR", kMut),
    T<v1::ReadLink, v1::ReadLinkReply>(0x0104, "READLINK", kRead),
    T<v1::Create, v1::CreateReply>(0x0105, "CREATE", kMut),
    T<v1::Mkdir, v1::MkdirReply>(0x0106, "MKDIR", kMut),
    T<v1::Mknod, v1::MknodReply>(0x0107, "MKNOD", kMut),
    T<v1::Symlink, v1::SymlinkReply>(0x0108, "SYMLINK", kMut),
    T<v1::Link, v1::LinkReply>(0x0109, "LINK", kMut),
    T<v1::Unlink, v1::UnlinkReply>(0x010A, "UNLINK", kMut),
    T<v1::Rmdir, v1::RmdirReply>(0x010B, "RMDIR", kMut),
    T<v1::Rename, v1::RenameReply>(0x010C, "RENAME", kMut),
    T<v1::ReadDir, v1::ReadDirReply>(0x010D, "READDIR", kRead),
    T<v1::Open, v1::OpenReply>(0x010E, "OPEN", kMut),
    T<v1::Release, v1::ReleaseReply>(0x010F, "RELEASE", kMut),
    T<v1::StatFs, v1::StatFsReply>(0x0110, "STATFS", kRead),
    T<v1::PutAttrs, v1::PutAttrsReply>(0x0111, "PUT_ATTRS", kMut),
    T<v1::InoGrant, v1::InoGrantReply>(0x0112, "INO_GRANT", kMut),
    T<v1::Read, v1::ReadReply>(0x0201, "READ", kRead),
    T<v1::Write, v1::WriteReply>(0x0202, "WRITE", kMut),
    T<v1::Commit, v1::CommitReply>(0x0203, "COMMIT", kRead),
    T<v1::Fallocate, v1::FallocateReply>(0x0204, "FALLOCATE", kMut),
    T<v1::Lseek, v1::LseekReply>(0x0205, "LSEEK", kRead),
    T<v1::GetXattr, v1::GetXattrReply>(0x0301, "GETXATTR", kRead),
    T<v1::ListXattr, v1::ListXattrReply>(0x0302, "LISTXATTR", kRead),
    T<v1::SetXattr, v1::SetXattrReply>(0x0303, "SETXATTR", kMut),
    T<v1::RemoveXattr, v1::RemoveXattrReply>(0x0304, "REMOVEXATTR", kMut),
    T<v1::Lock, v1::LockReply>(0x0401, "LOCK", kMut),
    T<v1::LockTest, v1::LockTestReply>(0x0402, "LOCK_TEST", kRead),
    T<v1::LockCancel, v1::LockCancelReply>(0x0403, "LOCK_CANCEL", kMut),
    T<v1::DelegAcquire, v1::DelegAcquireReply>(0x0501, "DELEG_ACQUIRE", kMut),
    T<v1::DelegReturn, v1::DelegReturnReply>(0x0502, "DELEG_RETURN", kMut),
    T<v1::DelegList, v1::DelegListReply>(0x0503, "DELEG_LIST", kRead),
    T<v1::CheckpointCreate, v1::CheckpointCreateReply>(0x0601, "CHECKPOINT_CREATE", kMut),
    T<v1::Invalidate, v1::InvalidateReply>(0x0F01, "INVALIDATE", kRead, false, kPush),
    T<v1::DelegRecall, v1::DelegRecallReply>(0x0F02, "DELEG_RECALL", kRead, false, kPush),
    T<v1::DelegRevoked, v1::DelegRevokedReply>(0x0F03, "DELEG_REVOKED", kRead, false, kPush),
    T<v1::LockGranted, v1::LockGrantedReply>(0x0F04, "LOCK_GRANTED", kRead, false, kPush),
};

}  // namespace

std::span<const MessageType> MessageTypes() { return kTypes; }

const MessageType* FindMessageType(uint16_t code) {
  auto it = std::find_if(kTypes.begin(), kTypes.end(),
                         [&](const MessageType& t) { return t.code == code; });
  return it == kTypes.end() ? nullptr : &*it;
}

WireStatus ParseBody(const FrameHeader& h, std::string_view body, std::unique_ptr<Message>* out) {
  // protobuf logs every proto3 string with invalid UTF-8 it meets at ERROR level: a peer could
  // flood the server's log with bodies it knows will be refused. The refusal (BAD_MESSAGE) is ours
  // to report, once.
  static const bool silenced = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)silenced;
  const MessageType* type = FindMessageType(h.type);
  if (type == nullptr) return WireStatus::kUnsupportedType;
  std::unique_ptr<Message> m;
  if (!h.is_reply()) {
    m = type->new_request();
  } else if (h.status == WireStatus::kOk) {
    m = type->new_reply();
  } else {
    m = std::make_unique<v1::ErrorReply>();
  }
  if (!m->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return WireStatus::kBadMessage;
  }
  *out = std::move(m);
  return WireStatus::kOk;
}

}  // namespace archil::proto
