#include "control/http_status.h"

namespace archil {

int HttpStatusFor(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return 200;
    case Status::Code::kInvalidArgument:
      return 400;
    case Status::Code::kUnauthenticated:
      return 401;
    case Status::Code::kPermissionDenied:
      return 403;
    case Status::Code::kNotFound:
      return 404;
    case Status::Code::kAlreadyExists:
      return 409;
    case Status::Code::kTooLarge:
      return 413;
    case Status::Code::kUnavailable:
      return 503;
    case Status::Code::kIoError:
    case Status::Code::kCorruption:
    case Status::Code::kInternal:
      return 500;
  }
  return 500;
}

}  // namespace archil
