#include "api/exit_code.h"

namespace archil {

int ExitCodeFor(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return 0;
    case Status::Code::kInvalidArgument:
    case Status::Code::kTooLarge:
      return 2;
    case Status::Code::kUnauthenticated:
    case Status::Code::kPermissionDenied:
      return 3;
    case Status::Code::kNotFound:
      return 4;
    case Status::Code::kAlreadyExists:
      return 5;
    case Status::Code::kUnavailable:
      return 6;
    default:
      return 1;
  }
}

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
