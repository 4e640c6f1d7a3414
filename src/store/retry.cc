#include "store/retry.h"

#include <algorithm>

namespace archil::store {

bool IsRetryableReply(int http_status, std::string_view s3_code) {
  switch (http_status) {
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      return true;
    case 400:
      return s3_code == "RequestTimeout";
    case 409:  // a concurrent conditional write or a racing multipart operation
      return s3_code == "ConditionalRequestConflict" || s3_code == "OperationAborted";
    default:
      return false;
  }
}

Backoff::Backoff(const RetryPolicy& policy, uint64_t seed) : policy_(policy), state_(seed | 1) {}

std::chrono::milliseconds Backoff::Next(int attempt, std::chrono::steady_clock::time_point start) {
  using std::chrono::milliseconds;
  if (attempt >= policy_.max_attempts) return milliseconds(-1);
  const int shift = std::min(attempt, 20);
  const int64_t ceiling = std::min<int64_t>(policy_.cap.count(), policy_.base.count() << shift);
  // xorshift64*: enough for jitter; never for secrets.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  const uint64_t r = state_ * 2685821657736338717ull;
  const milliseconds sleep(
      ceiling > 0 ? static_cast<int64_t>(r % static_cast<uint64_t>(ceiling + 1)) : 0);
  if (std::chrono::steady_clock::now() + sleep - start > policy_.deadline) return milliseconds(-1);
  return sleep;
}

}  // namespace archil::store
