// The engine's part of disk-server sessions: their records and reply-cache slots in the session
// column family (formats.md §4.12).
#include "base/log.h"
#include "engine/engine.h"
#include "engine/records/keys.h"

namespace archil::engine {

namespace {

std::string SessionSlotsPrefix(DiskNo disk, const SessionIdBytes& id) {
  std::string k = SlotKey(disk, id, 0);
  k.resize(k.size() - 4);  // the slot number is the key's last 4 bytes
  return k;
}

}  // namespace

Status Engine::PutSession(DiskNo disk, const SessionIdBytes& id, const SessionRecord& record) {
  const std::string key = SessionKey(disk, id), value = EncodeSession(record);
  return queue_->CommitUnsynced([&](Txn& t) -> Status {
    t.Put(core_.cfs[Cf::kSession], key, value);
    return Status::Ok();
  });
}

Status Engine::DeleteSession(DiskNo disk, const SessionIdBytes& id) {
  const std::string prefix = SessionSlotsPrefix(disk, id);
  return queue_->CommitUnsynced([&](Txn& t) -> Status {
    rocksdb::ColumnFamilyHandle* cf = core_.cfs[Cf::kSession];
    t.Delete(cf, SessionKey(disk, id));
    t.Delete(cf, InoGrantKey(disk, id));
    std::unique_ptr<rocksdb::Iterator> it = t.NewIterator(cf);
    std::vector<std::string> slots;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      slots.push_back(it->key().ToString());
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan session slots"));
    for (const std::string& k : slots) t.Delete(cf, k);
    return Status::Ok();
  });
}

Result<std::vector<StoredSession>> Engine::Sessions(DiskNo disk) {
  const std::string prefix = DiskPrefix(disk);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kSession]));
  std::map<SessionIdBytes, StoredSession> out;
  std::set<SessionIdBytes> bad;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    Result<SessionKeyParts> key =
        ParseSessionKey(std::string_view(it->key().data(), it->key().size()));
    if (!key.ok()) continue;
    const std::string_view value(it->value().data(), it->value().size());
    if (key->type == SessionRecordType::kSession) {
      Result<SessionRecord> r = DecodeSession(value);
      if (!r.ok()) {
        ARCHIL_LOG(kWarn) << "engine: disk " << disk.value()
                          << ": a session record does not decode, skipped: "
                          << r.status().ToString();
        bad.insert(key->session);
        continue;
      }
      out[key->session].id = key->session;
      out[key->session].record = std::move(r).value();
    } else if (key->type == SessionRecordType::kSlot) {
      Result<SlotRecord> r = DecodeSlot(value);
      if (!r.ok()) {
        ARCHIL_LOG(kWarn) << "engine: disk " << disk.value()
                          << ": a slot record does not decode, session skipped: "
                          << r.status().ToString();
        bad.insert(key->session);
        continue;
      }
      out[key->session].slots[key->slot] = std::move(r).value();
    }
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan sessions"));
  std::vector<StoredSession> sessions;
  for (auto& [id, s] : out) {
    // Slots without a session record (its record did not decode) are left out with it.
    if (bad.count(id) || s.record.slots == 0) continue;
    sessions.push_back(std::move(s));
  }
  return sessions;
}

CommitEpilogue Engine::SlotEpilogue(DiskNo disk, const SessionIdBytes& id, uint32_t slot,
                                    std::function<SlotRecord(const CommitResult&)> make) {
  return [cf = core_.cfs[Cf::kSession], key = SlotKey(disk, id, slot), make = std::move(make)](
             Txn& t, const CommitResult& result) { t.Put(cf, key, EncodeSlot(make(result))); };
}

}  // namespace archil::engine
