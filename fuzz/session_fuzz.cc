// Fuzzes the disk server's request execution (docs/protocol.md §7, §12 row 12 and after):
// sequences of requests of any type, with arbitrary bodies and payloads and arbitrary (slot,
// seq) pairs, through parse, validation and the slot table to the engine, on one session of a
// fresh disk per input (an engine on the in-memory power-loss simulator). Nothing may crash; every
// reply carries a status of §13; and the engine's invariants (every extent on a live block, each
// block held once, history with its deadlist entries) hold after every input.
//
// Input: a sequence of requests, each: byte 0 the type (an index into the registry), bytes 1-2
// the body length, byte 3 the payload length in 64-byte units, then the body and the payload.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "engine/engine.h"
#include "io/sim_env.h"
#include "proto/messages.h"
#include "proto/validate.h"
#include "server/requests.h"
#include "server/session_registry.h"

namespace archil::server {
namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

struct World {
  io::SimEnv env;
  FakeClock clock;
  std::unique_ptr<engine::Engine> engine;
  uint64_t next_disk = 1;
  World() {
    engine::EngineOptions o;
    o.env = &env;
    o.dir = "/data";
    o.clock = &clock;
    o.segment_blocks = 64;
    o.intent_sync_ms = 0;
    o.rocks_max_sleep_micros = 0;
    o.block_cache_mb = 8;
    o.reserve_bytes = 0;
    engine = std::move(engine::Engine::Open(o)).value();
  }
};

void Run(const uint8_t* data, size_t size) {
  // One engine for many inputs, a fresh disk per input; a fresh engine every 128 inputs, so that
  // the range deletes of deleted disks do not pile up in the simulator's memtables.
  // Never destroyed at exit: RocksDB's own statics may be gone by then.
  static World* w = nullptr;
  static int inputs = 0;
  if (w == nullptr || ++inputs % 128 == 0) {
    delete w;
    w = new World();
  }
  const engine::DiskNo disk(w->next_disk++);
  Check(w->engine->CreateDisk(disk, {}).ok());
  SessionRegistry registry(w->engine.get());
  SessionIdentity id;
  id.disk = disk;
  id.root = posix::kRootIno;
  id.token_id = "fuzz";
  std::shared_ptr<Session> session = registry.Create(id, 4).value();

  std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto types = proto::MessageTypes();
  while (in.size() >= 4) {
    proto::FrameHeader h;
    h.type = types[static_cast<uint8_t>(in[0]) % types.size()].code;
    const size_t body_len = static_cast<uint8_t>(in[1]) | (static_cast<uint8_t>(in[2]) << 8);
    const size_t payload_len = size_t{static_cast<uint8_t>(in[3])} * 64;
    in.remove_prefix(4);
    const std::string_view body = in.substr(0, body_len);
    in.remove_prefix(body.size());
    std::string payload(in.substr(0, payload_len));
    in.remove_prefix(std::min(in.size(), payload_len));
    h.payload_len = static_cast<uint32_t>(payload.size());

    const proto::MessageType* type = proto::FindMessageType(h.type);
    if (type->pre_auth || type->push) continue;  // handled by the connection, not the session
    std::unique_ptr<proto::Message> m;
    if (proto::ParseBody(h, body, &m) != proto::WireStatus::kOk) continue;
    std::string why;
    Response r;
    const proto::WireStatus v = proto::ValidateRequest(h, *m, payload, {}, &why);
    if (v != proto::WireStatus::kOk) {
      r = ErrorResponse(v, why);
      if (const v1::Mut* mut = type->mut_of(*m)) r = Refuse(*session, *mut, r);
    } else {
      r = Execute(*session, h.type, *m, payload);
    }
    Check(proto::IsKnownWireStatus(static_cast<uint16_t>(r.status)));
    Check(r.payload.empty() || (h.type == proto::kTypeRead && r.status == proto::WireStatus::kOk));
  }
  Check(registry.End(session, {"unmounted", true}).ok());
  Check(w->engine->DeleteDisk(disk).ok());
  Check(w->engine->CheckInvariants().ok());
}

}  // namespace
}  // namespace archil::server

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  archil::server::Run(data, size);
  return 0;
}
