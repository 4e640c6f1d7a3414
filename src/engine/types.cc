#include "engine/types.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace archil::engine {

Result<DiskNo> DiskNoFromId(const DiskId& id) {
  if (id.empty()) return Status::InvalidArgument("empty disk id");
  // A non-empty DiskId is well formed: "dsk-" + 16 lower-case hex digits.
  const uint64_t v = std::strtoull(id.str().c_str() + 4, nullptr, 16);
  if (v == 0) return Status::InvalidArgument("disk id " + id.str() + " is invalid (0)");
  return DiskNo(v);
}

Result<DiskNo> DiskNoFromText(std::string_view text) {
  ARCHIL_ASSIGN_OR_RETURN(DiskId id, DiskId::Parse(text));
  return DiskNoFromId(id);
}

DiskId DiskIdFromNo(DiskNo disk) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "dsk-%016" PRIx64, disk.value());
  return DiskId::Trusted(buf);
}

bool IsValidFileName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxFileName &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

bool IsValidXattrName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxXattrName && name.find('\0') == std::string_view::npos;
}

}  // namespace archil::engine
