// Rules for the identifiers and names of the public API, shared by the server and the CLI.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace archil {

// Disk names: 1 to 100 of [A-Za-z0-9_-].
Status ValidateDiskName(std::string_view name);
// Branch names: 1 to 100 of [A-Za-z0-9_-], unique across a disk and its branches.
Status ValidateBranchName(std::string_view name);
// Checkpoint names: 1 to 100 of [A-Za-z0-9._-], unique within their disk or branch.
Status ValidateCheckpointName(std::string_view name);
// Idempotency-Key header values: 1 to 255 printable ASCII characters.
Status ValidateIdempotencyKey(std::string_view key);
// API key names: 1 to 100 printable characters (no control characters), valid UTF-8.
Status ValidateKeyName(std::string_view name);
// Free text (nicknames, descriptions): at most `max` bytes, valid UTF-8, no control characters.
Status ValidateText(std::string_view field, std::string_view text, size_t max);

}  // namespace archil
