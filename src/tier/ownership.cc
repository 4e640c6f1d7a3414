#include "tier/ownership.h"

#include <chrono>
#include <thread>

#include "api/json_body.h"
#include "base/log.h"
#include "base/strings.h"
#include "tier/manifest.h"
#include "tier/snapshotter.h"

namespace archil::tier {
namespace {

using nlohmann::json;

std::string HexOf(const std::array<uint8_t, 16>& id) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
}

std::string Who(const OwnerRecord& r) {
  return (r.host.empty() ? HexOf(r.server) : r.host) + " (generation " + std::to_string(r.gen) +
         ")";
}

struct Read {
  std::optional<OwnerRecord> record;  // nullopt: no owner object
  std::string etag;
};

Result<Read> ReadOwner(store::ObjectStore* store) {
  Read out;
  // The etag first: if the object changes before the read, a swap that uses it fails.
  Result<store::ObjectInfo> head = store->Head(kOwnerKey);
  if (!head.ok()) {
    if (head.status().code() == Status::Code::kNotFound) return out;
    return head.status().WithContext("read the bucket's owner");
  }
  ARCHIL_ASSIGN_OR_RETURN(std::string bytes, store->Get(kOwnerKey));
  ARCHIL_ASSIGN_OR_RETURN(OwnerRecord r, DecodeOwnerRecord(bytes));
  out.record = r;
  out.etag = head->etag;
  return out;
}

bool Lost(const Status& s) {
  return s.code() == Status::Code::kFailedPrecondition || s.code() == Status::Code::kAlreadyExists;
}

}  // namespace

std::string EncodeOwnerRecord(const OwnerRecord& r) {
  json j = {{"format", 1},
            {"gen", r.gen},
            {"server", HexOf(r.server)},
            {"host", r.host},
            {"beat", r.beat}};
  if (r.released) j["released"] = true;
  return EncodeEnvelope(EnvelopeKind::kOwner, DumpJson(j));
}

Result<OwnerRecord> DecodeOwnerRecord(std::string_view v) {
  auto bad = [](const std::string& why) { return Status::Corruption("owner: " + why); };
  ARCHIL_ASSIGN_OR_RETURN(std::string body, DecodeEnvelope(v, EnvelopeKind::kOwner));
  Result<json> j = ParseJsonObject(body);
  if (!j.ok()) return bad(j.status().message());
  if (!CheckKnownFields(*j, {"format", "gen", "server", "host", "beat", "released"}).ok()) {
    return bad("unknown fields");
  }
  Result<std::optional<uint64_t>> format = OptionalUint(*j, "format", 1);
  Result<std::optional<uint64_t>> gen = OptionalUint(*j, "gen", UINT32_MAX);
  Result<std::optional<uint64_t>> beat = OptionalUint(*j, "beat", UINT64_MAX);
  Result<std::string> server = RequiredString(*j, "server");
  Result<std::string> host = RequiredString(*j, "host");
  if (!format.ok() || !*format || **format != 1) return bad("format not 1");
  if (!gen.ok() || !*gen || **gen == 0 || !beat.ok() || !*beat || !server.ok() || !host.ok() ||
      !IsLowerHex(*server, 32) || host->size() > 255) {
    return bad("a field is missing or of the wrong type");
  }
  OwnerRecord r;
  if (j->contains("released")) {
    if (!(*j)["released"].is_boolean()) return bad("released is not a boolean");
    r.released = (*j)["released"].get<bool>();
  }
  r.gen = static_cast<uint32_t>(**gen);
  r.beat = **beat;
  r.host = *host;
  for (size_t i = 0; i < 16; ++i) {
    r.server[i] =
        static_cast<uint8_t>(*ParseLowerHex(std::string_view(*server).substr(2 * i, 2), 2));
  }
  return r;
}

BucketLease::BucketLease(const BucketLeaseOptions& options, uint32_t gen, bool took_over,
                         OwnerRecord record, std::string etag, int64_t sent_ns)
    : options_(options), gen_(gen), took_over_(took_over) {
  {
    MutexLock lock(&mu_);
    record_ = std::move(record);
    etag_ = std::move(etag);
    last_ok_sent_ns_ = sent_ns;
    stats_.gen = gen;
    stats_.took_over = took_over;
  }
  loop_ = std::make_unique<PassLoop>("bucket lease", options.renew_ms, [this] { return Renew(); });
}

Result<std::unique_ptr<BucketLease>> BucketLease::Acquire(const BucketLeaseOptions& o) {
  auto sleep = o.sleep ? o.sleep
                       : [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  const int64_t wait_ns = int64_t{o.lease_ms + o.margin_ms} * 1000000;
  for (int attempt = 0; attempt < 100; ++attempt) {
    ARCHIL_ASSIGN_OR_RETURN(Read read, ReadOwner(o.store));
    OwnerRecord next;
    next.server = o.server;
    next.host = o.host;
    bool took_over = false;
    store::PutOptions put;
    if (!read.record) {
      next.gen = std::max<uint32_t>(1, o.engine_gen);
      put.condition = store::Condition::kIfAbsent;
    } else if (read.record->server == o.server) {
      // This server's own bucket: it goes on under its generation.
      next.gen = std::max(read.record->gen, o.engine_gen);
      next.beat = read.record->beat + 1;
      next.released = false;
      put.condition = store::Condition::kIfMatch;
      put.etag = read.etag;
    } else {
      if (!o.take_over && !o.force) {
        return Status::Busy("the bucket " + o.store->Describe() + " belongs to another server, " +
                            Who(*read.record) +
                            ": this server's disks were taken over, or it is the wrong bucket");
      }
      if (!o.force && !read.record->released) {
        // Wait until the other's object has not changed for a whole lease on this clock.
        ARCHIL_LOG(kWarn) << "tier: the bucket belongs to " << Who(*read.record)
                          << "; taking it over once it has not renewed its lease for "
                          << (o.lease_ms + o.margin_ms) / 1000.0 << " s";
        const int64_t since = o.clock->MonotonicNanos();
        bool gone = false;
        while (o.clock->MonotonicNanos() - since < wait_ns) {
          sleep(std::min(1000, o.renew_ms));
          ARCHIL_ASSIGN_OR_RETURN(Read again, ReadOwner(o.store));
          if (!again.record) {
            gone = true;  // removed: look again from the top
            break;
          }
          if (again.etag != read.etag) {
            return Status::Busy("the bucket " + o.store->Describe() + " belongs to " +
                                Who(*again.record) +
                                ", which renews its lease: stop that server first");
          }
        }
        if (gone) continue;
      }
      next.gen = std::max(read.record->gen, o.engine_gen) + 1;
      put.condition = store::Condition::kIfMatch;
      put.etag = read.etag;
      took_over = true;
    }
    const int64_t sent = o.clock->BootNanos();
    Result<std::string> etag = o.store->Put(kOwnerKey, EncodeOwnerRecord(next), put);
    if (!etag.ok()) {
      if (Lost(etag.status())) continue;  // it changed meanwhile: look again
      return etag.status().WithContext("take the bucket's ownership");
    }
    if (took_over) {
      ARCHIL_LOG(kWarn) << "tier: took the bucket over from " << Who(*read.record)
                        << " as generation " << next.gen;
    }
    return std::unique_ptr<BucketLease>(new BucketLease(o, next.gen, took_over, next, *etag, sent));
  }
  return Status::Unavailable("the bucket's owner object kept changing: could not take it");
}

Status BucketLease::Renew() {
  if (fenced_) return Status::PermissionDenied("fenced");
  OwnerRecord next;
  std::string etag;
  {
    MutexLock lock(&mu_);
    next = record_;
    etag = etag_;
  }
  if (!options_.store->EnforcesConditions()) {
    // The swap below would not fail: look first.
    Result<Read> read = ReadOwner(options_.store);
    if (read.ok() && read->record &&
        (read->record->server != options_.server || read->record->gen != gen_)) {
      fenced_ = true;
      MutexLock lock(&mu_);
      stats_.fenced = true;
      stats_.fenced_by = Who(*read->record);
      return Status::PermissionDenied("fenced by " + stats_.fenced_by);
    }
  }
  next.beat += 1;
  store::PutOptions put;
  put.condition = store::Condition::kIfMatch;
  put.etag = etag;
  const int64_t sent = options_.clock->BootNanos();
  Result<std::string> done = options_.store->Put(kOwnerKey, EncodeOwnerRecord(next), put);
  if (!done.ok() && Lost(done.status())) {
    // Changed: by another server (fenced), or by this one's own earlier renewal whose reply was
    // lost (the object still says this server and generation: go on from it).
    Result<Read> read = ReadOwner(options_.store);
    if (read.ok() && read->record && read->record->server == options_.server &&
        read->record->gen == gen_) {
      MutexLock lock(&mu_);
      record_ = *read->record;
      etag_ = read->etag;
      ++stats_.failed_renewals;
      return Status::Ok();  // the next renewal swaps on the etag now known
    }
    if (read.ok()) {
      fenced_ = true;
      MutexLock lock(&mu_);
      stats_.fenced = true;
      stats_.fenced_by = read->record ? Who(*read->record) : "a removed owner object";
      ARCHIL_LOG(kError) << "tier: fenced: the bucket now belongs to " << stats_.fenced_by
                         << "; this server writes nothing more to it";
      return Status::PermissionDenied("fenced by " + stats_.fenced_by);
    }
    done = read.status();
  }
  MutexLock lock(&mu_);
  if (!done.ok()) {
    ++stats_.failed_renewals;
    stats_.last_error = done.status().ToString();
    return done.status().WithContext("renew the bucket lease");
  }
  record_ = next;
  etag_ = *done;
  last_ok_sent_ns_ = sent;
  ++stats_.renewals;
  return Status::Ok();
}

Status BucketLease::Release() {
  if (fenced_) return Status::Ok();
  OwnerRecord next;
  std::string etag;
  {
    MutexLock lock(&mu_);
    next = record_;
    etag = etag_;
  }
  next.beat += 1;
  next.released = true;
  store::PutOptions put;
  put.condition = store::Condition::kIfMatch;
  put.etag = etag;
  Result<std::string> done = options_.store->Put(kOwnerKey, EncodeOwnerRecord(next), put);
  if (!done.ok()) return done.status().WithContext("release the bucket");
  MutexLock lock(&mu_);
  record_ = next;
  etag_ = *done;
  last_ok_sent_ns_ = INT64_MIN / 2;  // no longer valid
  return Status::Ok();
}

bool BucketLease::Valid() const {
  if (fenced_) return false;
  MutexLock lock(&mu_);
  return options_.clock->BootNanos() - last_ok_sent_ns_ <
         int64_t{options_.lease_ms - options_.margin_ms} * 1000000;
}

BucketLeaseStats BucketLease::stats() const {
  const bool valid = Valid();
  MutexLock lock(&mu_);
  BucketLeaseStats out = stats_;
  out.valid = valid;
  out.fenced = fenced_;
  out.last_renewal_age_ms = (options_.clock->BootNanos() - last_ok_sent_ns_) / 1000000;
  return out;
}

Status ClaimDisks(engine::TierSource* engine, store::ObjectStore* store, uint32_t gen) {
  for (engine::DiskNo disk : engine->ListDisksAndHidden()) {
    for (int attempt = 0;; ++attempt) {
      ARCHIL_ASSIGN_OR_RETURN(ManifestRead read, ReadDiskManifest(store, disk));
      const uint32_t current = CurrentOwner(read.manifest);
      if (current > gen) {
        return Status::PermissionDenied("fenced: generation " + std::to_string(current) + " owns " +
                                        engine::DiskIdFromNo(disk).str() +
                                        ", this server is generation " + std::to_string(gen));
      }
      if (current == gen) break;
      ARCHIL_ASSIGN_OR_RETURN(engine::Seq uploaded, engine->UploadedSeq(disk));
      const DiskManifest next = HandOver(read.manifest, gen, engine::Seq(uploaded.value() + 1));
      store::PutOptions put;
      put.condition = read.etag.empty() ? store::Condition::kIfAbsent : store::Condition::kIfMatch;
      put.etag = read.etag;
      Result<std::string> done = store->Put(DiskManifestKey(disk), EncodeDiskManifest(next), put);
      if (done.ok()) break;
      if (!Lost(done.status()) || attempt >= 10) {
        return done.status().WithContext("hand " + engine::DiskIdFromNo(disk).str() +
                                         " to generation " + std::to_string(gen));
      }
    }
  }
  return Status::Ok();
}

}  // namespace archil::tier
