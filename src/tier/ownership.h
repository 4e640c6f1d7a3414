// Ownership of a bucket (docs/tiering.md §5, ADR 0020): one server writes a bucket at a time,
// under a generation that only grows.
//
// The bucket's `owner` object (envelope kind 4) says who: the generation, the owner's engine id
// (its SERVER record), its host name (for people), and a beat that the owner moves on at every
// renewal, a compare-and-swap on the object's etag.
//
// The lease. The owner may acknowledge mutations only while its last renewal that succeeded was
// *sent* less than lease - margin ago on its own CLOCK_BOOTTIME (Valid()): a server that was
// paused or suspended past that knows it before it tries to renew. A renewal that finds the
// object changed by another server fences this one for good (Fenced()).
//
// Acquire, at start:
//  - no owner object: this server takes the engine's generation (If-None-Match: *);
//  - the object names this server's engine: it goes on under that generation (a restart);
//  - it names another server that released it (a clean stop): with `take_over`, taken at once;
//  - it names another server: with `take_over`, this server waits until it has seen the object
//    unchanged for lease + margin on its own monotonic clock (the other stopped renewing: it is
//    dead, paused or cut off; no clock of one machine is compared with another's), then swaps in
//    the next generation; with `force` it swaps at once (an operator who knows the other is
//    gone); otherwise Acquire fails, naming the other server.
// On a store that does not enforce conditions (s3rver) a swap cannot fence: the owner reads the
// object before each renewal instead, which narrows the window but does not close it (ADR 0020
// says what is unprotected then).
//
// ClaimDisks then hands every disk's log to the generation in its MANIFEST (the old owner's
// range closes at what this server holds of it), which every reader follows (tier/manifest.h).
//
// Thread-safety: Acquire once; then Start, Valid, Fenced and stats from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/pass_loop.h"
#include "base/status.h"
#include "engine/tier_source.h"
#include "store/object_store.h"

namespace archil::tier {

inline constexpr char kOwnerKey[] = "owner";

struct OwnerRecord {
  uint32_t gen = 1;
  std::array<uint8_t, 16> server{};
  std::string host;
  uint64_t beat = 0;
  // The owner stopped cleanly and wrote everything it held (Release): the next server takes the
  // bucket at once, without waiting for a lease to lapse.
  bool released = false;
  bool operator==(const OwnerRecord&) const = default;
};
std::string EncodeOwnerRecord(const OwnerRecord& r);
Result<OwnerRecord> DecodeOwnerRecord(std::string_view v);

struct BucketLeaseOptions {
  store::ObjectStore* store = nullptr;  // REQUIRES: outlives the lease
  const Clock* clock = nullptr;         // REQUIRES: outlives the lease
  std::array<uint8_t, 16> server{};     // this server's engine id
  std::string host;
  uint32_t engine_gen = 1;  // the generation the engine has written under so far
  int lease_ms = 15000;
  int renew_ms = 5000;
  int margin_ms = 2000;
  bool take_over = false;  // another server's bucket: wait for its lease to lapse, then take it
  bool force = false;      // ... at once
  // How Acquire waits between looks at another server's object (tests shorten it).
  std::function<void(int ms)> sleep;
};

struct BucketLeaseStats {
  uint32_t gen = 0;
  bool took_over = false;  // this server's generation came from another server's
  uint64_t renewals = 0;
  uint64_t failed_renewals = 0;
  int64_t last_renewal_age_ms = 0;
  bool valid = false;
  bool fenced = false;
  std::string fenced_by;  // "host (generation N)"
  std::string last_error;
};

class BucketLease {
 public:
  // Takes or continues ownership of `options.store` (see above).
  static Result<std::unique_ptr<BucketLease>> Acquire(const BucketLeaseOptions& options);
  BucketLease(const BucketLease&) = delete;
  BucketLease& operator=(const BucketLease&) = delete;

  uint32_t gen() const { return gen_; }
  bool took_over() const { return took_over_; }
  // Renews every renew_ms on a thread of its own, until destroyed.
  void Start() { loop_->Start(); }
  // One renewal (what the thread does).
  Status Renew() ARCHIL_EXCLUDES(mu_);
  // At a clean stop, after the last write to the bucket: marks the object released, so that
  // another server may take the bucket at once; this server's lease no longer holds.
  Status Release() ARCHIL_EXCLUDES(mu_);
  // The lease holds: this server may acknowledge a mutation now.
  bool Valid() const ARCHIL_EXCLUDES(mu_);
  // Another server took the bucket over: this one must never write it again.
  bool Fenced() const { return fenced_.load(); }
  BucketLeaseStats stats() const ARCHIL_EXCLUDES(mu_);

 private:
  BucketLease(const BucketLeaseOptions& options, uint32_t gen, bool took_over, OwnerRecord record,
              std::string etag, int64_t sent_ns);

  const BucketLeaseOptions options_;
  const uint32_t gen_;
  const bool took_over_;
  std::atomic<bool> fenced_{false};
  mutable Mutex mu_;
  OwnerRecord record_ ARCHIL_GUARDED_BY(mu_);
  std::string etag_ ARCHIL_GUARDED_BY(mu_);
  int64_t last_ok_sent_ns_ ARCHIL_GUARDED_BY(mu_) = 0;  // BootNanos
  BucketLeaseStats stats_ ARCHIL_GUARDED_BY(mu_);
  std::unique_ptr<PassLoop> loop_;  // last
};

// Hands the log of every disk `engine` holds (hidden ones too) to generation `gen` in its
// MANIFEST, from the seq after the engine's uploaded_seq on (HandOver). PermissionDenied if a disk
// already belongs to a newer generation (this server is fenced). A disk already handed over is
// left as it is.
Status ClaimDisks(engine::TierSource* engine, store::ObjectStore* store, uint32_t gen);

}  // namespace archil::tier
