// The control-plane API's JSON schema, written once: typed request and reply bodies with their
// encoders and decoders, shared by the server's router and the CLI.
//
// Decoders never throw and never trust their input. Requests are decoded strictly (unknown fields
// and wrong types are InvalidArgument, naming the field) because a typo must not be ignored;
// replies are decoded leniently about unknown fields (a newer server may add some) but strictly
// about the types of the fields we read (Corruption: the server said something we cannot use).
//
// Field names follow Archil's API (camelCase); docs/api.md lists them.
//
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace archil::wire {

struct RootAttrs {
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t mode = 0755;
  bool operator==(const RootAttrs&) const = default;
};

// A disk user (a disk token). `token` only in the reply that created it.
struct User {
  std::string type = "token";
  std::string nickname;
  std::string token_suffix;
  std::string identifier;
  std::string created_at;  // RFC 3339
  std::optional<std::string> token;
  bool operator==(const User&) const = default;
};

struct Disk {
  std::string id;
  std::string name;
  std::string organization = "default";
  std::string status;  // "available" | "deleting"
  std::string provider = "archil";
  std::string region;
  std::string created_at;
  RootAttrs root;
  std::vector<User> users;
  // A branch (a disk of its own): its name, its lineage's root and the disk it was made from.
  std::optional<std::string> branch_name, root_id, parent_id;
  bool operator==(const Disk&) const = default;
};

// POST /api/disks
struct CreateDiskRequest {
  std::string name;
  std::optional<uint32_t> uid, gid, mode;  // rootAttrs; absent members keep the defaults
  bool operator==(const CreateDiskRequest&) const = default;
};
struct CreateDiskReply {
  std::string disk_id;
  bool created = false;
  std::vector<User> users;  // the first user carries the token when created
  Disk disk;
  bool operator==(const CreateDiskReply&) const = default;
};

// POST /api/disks/{id}/users
struct AddUserRequest {
  std::string type = "token";
  std::string nickname;
  bool operator==(const AddUserRequest&) const = default;
};

struct ApiKey {
  std::string id;
  std::string name;
  std::string description;
  std::string token_suffix;
  std::string created_at;
  std::optional<std::string> token;
  bool operator==(const ApiKey&) const = default;
};

// POST /api/tokens
struct CreateKeyRequest {
  std::string name;
  std::string description;
  bool operator==(const CreateKeyRequest&) const = default;
};

// A checkpoint of a disk or branch (snake_case, as Archil's records are).
struct Checkpoint {
  std::string name;
  std::string status = "committed";  // "pending" | "committed"
  std::string created_at;            // RFC 3339
  bool operator==(const Checkpoint&) const = default;
};

// A branch: itself a disk (filesystem_id) made from a checkpoint of its parent.
struct Branch {
  std::string name;
  std::string filesystem_id;
  std::string parent_id;
  std::string from_checkpoint;
  std::string status = "available";  // "available" | "hidden" (deleted, kept for its branches)
  std::string created_at;
  bool operator==(const Branch&) const = default;
};

// POST /api/disks/{id}/branches
struct CreateBranchRequest {
  std::string branch_name;
  std::string from_checkpoint;
  std::optional<std::string> from_branch;  // the branch that holds the checkpoint; absent: {id}
  bool operator==(const CreateBranchRequest&) const = default;
};

// GET and PUT /api/disks/{id}/allowed-ips: the request body and both replies.
struct AllowedIps {
  std::vector<std::string> allowed_ips;  // addresses and CIDR ranges; empty: any address
  bool operator==(const AllowedIps&) const = default;
};

// The envelope every response is wrapped in.
struct Envelope {
  bool success = false;
  nlohmann::json data;                     // success: the payload (null if absent)
  std::optional<std::string> next_cursor;  // paged lists: null/absent on the last page
  std::string error;                       // failure: what went wrong
  std::string code;                        // failure: CodeName() of the Status
};

nlohmann::json ToJson(const RootAttrs& v);
nlohmann::json ToJson(const User& v);
nlohmann::json ToJson(const Disk& v);
nlohmann::json ToJson(const CreateDiskRequest& v);
nlohmann::json ToJson(const CreateDiskReply& v);
nlohmann::json ToJson(const AddUserRequest& v);
nlohmann::json ToJson(const ApiKey& v);
nlohmann::json ToJson(const CreateKeyRequest& v);
nlohmann::json ToJson(const Checkpoint& v);
nlohmann::json ToJson(const Branch& v);
nlohmann::json ToJson(const CreateBranchRequest& v);
nlohmann::json ToJson(const AllowedIps& v);

// Requests (server side): strict.
Result<CreateDiskRequest> DecodeCreateDiskRequest(std::string_view body);
Result<AddUserRequest> DecodeAddUserRequest(std::string_view body);
Result<CreateKeyRequest> DecodeCreateKeyRequest(std::string_view body);
Result<CreateBranchRequest> DecodeCreateBranchRequest(std::string_view body);
// `allowedIps` is required: an array of strings (their syntax is the service's to check).
Result<AllowedIps> DecodeAllowedIpsRequest(std::string_view body);

// Replies (client side): Corruption when a field we read has the wrong type or is missing.
Result<User> DecodeUser(const nlohmann::json& j);
Result<Disk> DecodeDisk(const nlohmann::json& j);
Result<std::vector<Disk>> DecodeDiskList(const nlohmann::json& j);
Result<CreateDiskReply> DecodeCreateDiskReply(const nlohmann::json& j);
Result<ApiKey> DecodeApiKey(const nlohmann::json& j);
Result<std::vector<ApiKey>> DecodeKeyList(const nlohmann::json& j);  // {"tokens": [...]}
Result<Checkpoint> DecodeCheckpoint(const nlohmann::json& j);
Result<std::vector<Checkpoint>> DecodeCheckpointList(const nlohmann::json& j);
Result<Branch> DecodeBranch(const nlohmann::json& j);
Result<std::vector<Branch>> DecodeBranchList(const nlohmann::json& j);
Result<AllowedIps> DecodeAllowedIps(const nlohmann::json& j);

// Serialises a success envelope; `next_cursor` present only for paged lists (empty: null).
std::string EncodeOk(const nlohmann::json& data, const std::string* next_cursor = nullptr);
std::string EncodeError(std::string_view code, std::string_view message);
// Parses a response body. Corruption if it is not JSON or not an envelope (no boolean
// `success`, a failure without a string `error`, a `nextCursor` that is neither string nor null).
Result<Envelope> DecodeEnvelope(std::string_view body);

}  // namespace archil::wire
