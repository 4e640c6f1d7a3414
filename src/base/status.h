// Status and Result<T>: errors as values.
//
// Every fallible function returns a Status (no value) or a Result<T> (a value or a Status). No
// exception crosses a module boundary. The Code enum is the project's single error vocabulary; the
// edges translate it exactly once each: HTTP status (control/http_status.h), process exit code
// (cli/exit_code.h) and, later, errno (fs/).
//
// Thread-safety: values; copy freely.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace archil {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,   // the caller's input is wrong; retrying the same input fails again
    kUnauthenticated,   // no credential, or one we do not recognise
    kPermissionDenied,  // a valid credential that may not do this
    kNotFound,
    kAlreadyExists,  // a create that conflicts with what exists
    kTooLarge,       // input over a size limit
    kUnavailable,    // transient: retry later (network, peer down, shutting down)
    kIoError,        // a local device or file-system error
    kCorruption,     // stored or received data failed a check
    kInternal,       // a bug: an invariant did not hold
  };

  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status Unauthenticated(std::string m) { return {Code::kUnauthenticated, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status TooLarge(std::string m) { return {Code::kTooLarge, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  // An I/O error from a failed system call: "<what>: <strerror(err)>".
  static Status FromErrno(int err, std::string_view what);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Adds context in front of the message: "context: message". No-op on OK.
  Status WithContext(std::string_view context) const;
  // "INVALID_ARGUMENT: message", for logs.
  std::string ToString() const;

  bool operator==(const Status& other) const = default;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Stable lower-case name of a code ("invalid_argument"); used as the API's `code` field.
std::string_view CodeName(Status::Code code);

// A value of type T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // REQUIRES: !status.ok()
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  // REQUIRES: ok()
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace archil

// Returns the Status of `expr` from the current function if it is not OK.
#define ARCHIL_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::archil::Status archil_status_ = (expr);        \
    if (!archil_status_.ok()) return archil_status_; \
  } while (0)

#define ARCHIL_CONCAT_INNER_(a, b) a##b
#define ARCHIL_CONCAT_(a, b) ARCHIL_CONCAT_INNER_(a, b)
#define ARCHIL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

// `lhs = value of expr`, or returns its Status from the current function.
#define ARCHIL_ASSIGN_OR_RETURN(lhs, expr) \
  ARCHIL_ASSIGN_OR_RETURN_IMPL_(ARCHIL_CONCAT_(archil_result_, __LINE__), lhs, expr)
