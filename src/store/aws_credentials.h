// Where an s3:// store's credentials come from, in the order the AWS SDKs look:
//   1. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the environment;
//   2. the shared credentials file, AWS_SHARED_CREDENTIALS_FILE or else ~/.aws/credentials,
//      profile AWS_PROFILE or else "default" (keys aws_access_key_id, aws_secret_access_key,
//      aws_session_token).
// Nothing else (no instance metadata: the machine reaches no AWS endpoint in tests).
//
// Thread-safety: pure functions over what they are given.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/sigv4.h"

namespace archil::store {

// Reads a variable of the environment (getenv in production; a map in tests).
using GetEnv = std::function<std::optional<std::string>(const char* name)>;
GetEnv ProcessEnv();

// The credentials, or kInvalidArgument saying where they were looked for, or what in the file is
// wrong (a missing profile, a key without its secret).
Result<AwsCredentials> LoadAwsCredentials(const GetEnv& env);

// Parses the shared credentials file's text for `profile` (an INI file: "[name]" sections,
// "key = value" lines, '#' and ';' comments). NotFound if the profile is absent.
Result<AwsCredentials> ParseCredentialsFile(std::string_view text, std::string_view profile);

}  // namespace archil::store
