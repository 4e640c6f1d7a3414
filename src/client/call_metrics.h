// CallMetrics: what a DiskClient counts of its calls, for the mount's metrics
// (`archil metrics`, docs/operations.md): per message type, the calls answered, their seconds
// from the first send to the answer (resends and DELAYs included: what the caller waited), and
// the calls answered with a status other than OK or not answered at all.
//
// Thread-safety: Count is safe from any thread (atomic counters; the error labels are looked up
// under the family's lock, on failures only).
#pragma once

#include <cstdint>
#include <map>

#include "client/disk_client.h"
#include "metrics/registry.h"

namespace archil::client {

class CallMetrics {
 public:
  // Adds the families to `registry`, which must outlive this.
  explicit CallMetrics(metrics::Registry* registry);

  // A call of `type` that sent `payload_bytes` of payload, and `carried_bytes` of file data in the
  // writes its Mut carried (protocol.md §5.3.2), ended with `reply` after `seconds`. A WRITE's
  // payload counts as written when the reply is OK; carried data when the reply is OK or an error
  // that says the carried changes were applied.
  void Count(uint16_t type, const Result<Reply>& reply, size_t payload_bytes, size_t carried_bytes,
             double seconds);

 private:
  struct Op {
    metrics::Counter* calls = nullptr;
    metrics::Histogram* seconds = nullptr;
  };
  std::map<uint16_t, Op> ops_;  // every message type, made at construction (read-only after)
  metrics::CounterFamily* errors_ = nullptr;
  metrics::Counter* written_ = nullptr;
  metrics::Counter* read_ = nullptr;
};

}  // namespace archil::client
