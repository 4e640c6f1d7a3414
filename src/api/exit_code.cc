#include "api/exit_code.h"

namespace archil {

std::string ErrorLine(const Status& s) {
  std::string line = "archil: " + s.message();
  switch (s.code()) {
    case Status::Code::kUnauthenticated:
      line +=
          " (set ARCHIL_API_KEY or pass --api-key; a local server keeps its admin key in "
          "DATA_DIR/admin-api-key)";
      break;
    case Status::Code::kUnavailable:
      line += " (is the server running? check --region or --endpoint)";
      break;
    default:
      break;
  }
  return line;
}

}  // namespace archil
