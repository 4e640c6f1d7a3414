// Small pure helpers of the S3 fake: MD5, XML escaping, S3's time formats, ETag quoting.
//
// Thread-safety: pure functions.
#pragma once

#include <ctime>
#include <string>
#include <string_view>

namespace archil::testing::s3fake {

// The 16 raw bytes of MD5(data).
std::string Md5Raw(std::string_view data);
// `s` with & < > " ' replaced by their XML entities.
std::string XmlEscape(std::string_view s);
// "2026-01-02T03:04:05.000Z" (ListObjectsV2's LastModified).
std::string IsoTime(std::time_t t);
// "Fri, 02 Jan 2026 03:04:05 GMT" (the Last-Modified header).
std::string HttpDate(std::time_t t);
// `s` without one pair of surrounding double quotes, if it has them.
std::string Unquote(std::string s);
// Parses x-amz-date "YYYYMMDDTHHMMSSZ" (UTC) into *out. False if malformed.
bool ParseAmzDate(std::string_view s, std::time_t* out);

}  // namespace archil::testing::s3fake
