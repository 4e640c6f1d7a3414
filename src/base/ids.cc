#include "base/ids.h"

#include "base/random.h"
#include "base/strings.h"

namespace archil {

bool DiskId::IsValid(std::string_view text) {
  return text.size() == 20 && text.substr(0, 4) == "dsk-" && IsLowerHex(text.substr(4), 16);
}

Result<DiskId> DiskId::Parse(std::string_view text) {
  if (!IsValid(text)) {
    return Status::InvalidArgument("invalid disk id: expected dsk- followed by 16 hex digits");
  }
  return DiskId(std::string(text));
}

Result<DiskId> DiskId::Generate() {
  ARCHIL_ASSIGN_OR_RETURN(std::string hex, SecureRandomHex(8));
  return DiskId("dsk-" + hex);
}

}  // namespace archil
