#include "store/aws_credentials.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace archil::store {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

GetEnv ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

Result<AwsCredentials> ParseCredentialsFile(std::string_view text, std::string_view profile) {
  AwsCredentials c;
  bool in_profile = false, found = false;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') return Status::InvalidArgument("malformed section line");
      in_profile = Trim(line.substr(1, line.size() - 2)) == profile;
      found = found || in_profile;
      continue;
    }
    if (!in_profile) continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, eq)), value = Trim(line.substr(eq + 1));
    if (key == "aws_access_key_id") c.access_key_id = value;
    if (key == "aws_secret_access_key") c.secret_access_key = value;
    if (key == "aws_session_token") c.session_token = value;
  }
  if (!found) return Status::NotFound("no profile [" + std::string(profile) + "]");
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return Status::InvalidArgument("profile [" + std::string(profile) +
                                   "] lacks aws_access_key_id or aws_secret_access_key");
  }
  return c;
}

Result<AwsCredentials> LoadAwsCredentials(const GetEnv& env) {
  std::optional<std::string> id = env("AWS_ACCESS_KEY_ID");
  std::optional<std::string> secret = env("AWS_SECRET_ACCESS_KEY");
  if (id && secret) return AwsCredentials{*id, *secret, env("AWS_SESSION_TOKEN").value_or("")};
  if (id || secret) {
    return Status::InvalidArgument(
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
  }
  std::string path;
  if (auto file = env("AWS_SHARED_CREDENTIALS_FILE")) {
    path = *file;
  } else if (auto home = env("HOME")) {
    path = *home + "/.aws/credentials";
  }
  const std::string profile = env("AWS_PROFILE").value_or("default");
  std::ifstream in(path);
  if (path.empty() || !in) {
    return Status::InvalidArgument(
        "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or write them to " +
        (path.empty() ? std::string("~/.aws/credentials") : path) + " under [" + profile + "]");
  }
  std::stringstream text;
  text << in.rdbuf();
  Result<AwsCredentials> c = ParseCredentialsFile(text.str(), profile);
  if (!c.ok()) return Status::InvalidArgument(path + ": " + c.status().message());
  return c;
}

}  // namespace archil::store
