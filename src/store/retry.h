// When and how long an S3 request is retried: exponential backoff with full jitter (a uniform
// sleep in [0, min(cap, base * 2^attempt)]), bounded by a number of attempts and a deadline.
//
// Retried: a transport failure (no connection, a timeout, a torn reply) and the replies S3 says
// to retry: 500, 502, 503 (SlowDown), 504, 429, 408, 400 RequestTimeout, and 409
// ConditionalRequestConflict or OperationAborted. Everything else is the answer.
//
// Thread-safety: RetryPolicy is a value; Backoff is used by one request at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace archil::store {

struct RetryPolicy {
  int max_attempts = 10;
  std::chrono::milliseconds base{25};
  std::chrono::milliseconds cap{2000};
  std::chrono::milliseconds deadline{60000};  // from the first attempt
};

// Whether a reply with this status and S3 error code should be retried.
bool IsRetryableReply(int http_status, std::string_view s3_code);

class Backoff {
 public:
  Backoff(const RetryPolicy& policy, uint64_t seed);
  // The sleep before attempt number `attempt` (1-based: the first retry is 1), or a negative
  // duration when no attempt may follow (out of attempts, or it would end past the deadline).
  std::chrono::milliseconds Next(int attempt, std::chrono::steady_clock::time_point start);

 private:
  RetryPolicy policy_;
  uint64_t state_;
};

}  // namespace archil::store
