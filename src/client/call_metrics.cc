#include "client/call_metrics.h"

#include <string>

#include "proto/messages.h"
#include "proto/wire_status.h"

namespace archil::client {

CallMetrics::CallMetrics(metrics::Registry* registry) {
  metrics::CounterFamily* calls = registry->AddCounter(
      "archil_client_requests_total", "Disk protocol calls answered, by message type.", {"op"});
  metrics::HistogramFamily* seconds = registry->AddHistogram(
      "archil_client_request_seconds",
      "Disk protocol calls: seconds from the first send to the answer, resends included.", {"op"},
      metrics::DefaultLatencyBounds());
  for (const proto::MessageType& t : proto::MessageTypes()) {
    const std::string op(t.name);
    ops_[t.code] = {calls->With({op}), seconds->With({op})};
  }
  errors_ = registry->AddCounter(
      "archil_client_request_errors_total",
      "Disk protocol calls answered with a status other than OK (status), or not answered "
      "(status=\"unanswered\": the server could not be reached in time, or the call was "
      "interrupted).",
      {"op", "status"});
  written_ = registry
                 ->AddCounter("archil_client_written_bytes_total",
                              "File data sent in write calls answered OK, and in the writes "
                              "other calls carried once applied, in bytes.",
                              {})
                 ->With({});
  read_ = registry
              ->AddCounter("archil_client_read_bytes_total",
                           "File data received in read replies, in bytes.", {})
              ->With({});
}

void CallMetrics::Count(uint16_t type, const Result<Reply>& reply, size_t payload_bytes,
                        size_t carried_bytes, double seconds) {
  auto it = ops_.find(type);
  if (it != ops_.end()) {
    it->second.calls->Add();
    it->second.seconds->Observe(seconds);
  }
  if (!reply.ok() || reply->status != proto::WireStatus::kOk) {
    const proto::MessageType* t = proto::FindMessageType(type);
    const std::string status =
        reply.ok() ? std::string(proto::WireStatusName(reply->status)) : "unanswered";
    errors_->With({t ? std::string(t->name) : "unknown", status})->Add();
    // The writes it carried were applied all the same (protocol.md §5.3.2).
    v1::ErrorReply e;
    if (reply.ok() && carried_bytes > 0 && e.ParseFromString(reply->body) && e.puts_applied()) {
      written_->Add(carried_bytes);
    }
    return;
  }
  if (type == proto::kTypeRead) read_->Add(reply->payload.size());
  written_->Add((type == proto::kTypeWrite ? payload_bytes : 0) + carried_bytes);
}

}  // namespace archil::client
