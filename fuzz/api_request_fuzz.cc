// Fuzzes the control-plane API as one function: the input is split into method, path, query,
// Authorization header and body, and handled against a real (in-memory) SQLite catalog. Bad input
// must never produce a 500, a crash, or a response that is not the JSON envelope.
//
// Input layout: fields separated by '\n': method, path, authorization, optionally
// "Idempotency-Key: K", body (the rest). "ADMIN" as the authorization is the admin key; "{disk}"
// in the path is the id of a disk the fixture made (so that routes reach a stored disk).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/clock.h"
#include "base/strings.h"
#include "catalog/sqlite_catalog.h"
#include "control/api_router.h"

namespace {

// A data plane that holds no disks: checkpoint and branch routes are exercised up to the store.
class NoDisks final : public archil::LineageStore {
 public:
  archil::Status None() const { return archil::Status::NotFound("no such disk"); }
  archil::Result<archil::LineageView> Lineage(const archil::DiskId&) override { return None(); }
  archil::Result<std::vector<archil::CheckpointView>> Checkpoints(const archil::DiskId&) override {
    return None();
  }
  archil::Status DeleteCheckpoint(const archil::DiskId&, std::string_view) override {
    return None();
  }
  archil::Result<archil::BranchResult> CreateBranch(const archil::NewBranch&) override {
    return None();
  }
  archil::Result<std::vector<archil::BranchView>> Branches(const archil::DiskId&) override {
    return None();
  }
  archil::Status DeleteDisk(const archil::DiskId&) override { return None(); }
};

struct Fixture {
  std::unique_ptr<archil::SqliteCatalog> catalog = archil::SqliteCatalog::Open(":memory:").value();
  archil::FakeClock clock;
  NoDisks lineage;
  archil::ControlService service{catalog.get(), &clock, "fuzz", nullptr, &lineage};
  archil::ApiRouter router{&service};
  std::string key;
  std::string disk;
  Fixture() {
    (void)service.BootstrapAdminKey([this](const std::string& t) {
      key = t;
      return archil::Status::Ok();
    });
    archil::CreateDiskRequest create;
    create.name = "fuzz";
    archil::Result<archil::CreatedDisk> d = service.CreateDisk(create);
    if (d.ok()) disk = d->disk.id.str();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture f;
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts = archil::Split(in, '\n');
  archil::ApiRequest req;
  req.method = !parts.empty() ? std::string(parts[0]) : "GET";
  std::string target = parts.size() > 1 ? std::string(parts[1]) : "/api/disks";
  if (size_t at = target.find("{disk}"); at != std::string::npos) target.replace(at, 6, f.disk);
  size_t q = target.find('?');
  req.path = target.substr(0, q);
  if (q != std::string::npos) {
    for (std::string_view kv : archil::Split(std::string_view(target).substr(q + 1), '&')) {
      size_t eq = kv.find('=');
      req.query.emplace(std::string(kv.substr(0, eq)),
                        eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1)));
    }
  }
  std::string auth = parts.size() > 2 ? std::string(parts[2]) : "";
  req.authorization = auth == "ADMIN" ? "Bearer " + f.key : auth;
  req.host = "fuzz.example:8420";  // the share route builds its URL from it
  // An optional header line before the body: "Idempotency-Key: K".
  size_t body = 3;
  if (parts.size() > 4 && parts[3].starts_with("Idempotency-Key: ")) {
    req.idempotency_key = std::string(parts[3].substr(17));
    body = 4;
  }
  if (parts.size() > body)
    req.body = in.substr(static_cast<size_t>(parts[body].data() - in.data()));
  archil::ApiResponse res = f.router.Handle(req);
  if (res.status >= 500) __builtin_trap();
  nlohmann::json j = nlohmann::json::parse(res.body, nullptr, false);
  if (!j.is_object() || !j.contains("success")) __builtin_trap();
  return 0;
}
