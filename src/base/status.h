// Status and Result<T>: errors as values.
//
// Every fallible function returns a Status (no value) or a Result<T> (a value or a Status). No
// exception crosses a module boundary. The Code enum is the project's single error vocabulary.
// One table (status.cc) gives each code its stable name, HTTP status, process exit code and default
// errno; the edges (HTTP API, CLI exit, FUSE replies) read that table and nothing else.
//
// A Status made from a system call's failure (FromErrno, Errno) also keeps the exact errno, so
// ENOSPC, ESTALE, ENOTEMPTY... reach a file-system client unchanged: ErrnoFor() returns it, and
// the code's default errno only when there is none.
//
// Thread-safety: values; copy freely.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace archil {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,     // the caller's input is wrong; retrying the same input fails again
    kUnauthenticated,     // no credential, or one we do not recognise
    kPermissionDenied,    // a valid credential (or caller) that may not do this
    kNotFound,            // the named thing does not exist
    kAlreadyExists,       // a create that conflicts with what exists
    kFailedPrecondition,  // valid input, but the current state forbids it (last API key, non-empty
                          // dir)
    kBusy,                // held by someone else (a data directory locked by another server)
    kTooLarge,            // input over a size limit
    kNoSpace,             // out of space or quota
    kStale,               // a handle to something that no longer exists (ESTALE)
    kUnavailable,         // transient: retry later (network, peer down, shutting down)
    kIoError,             // a local device or file-system error
    kCorruption,          // stored or received data failed a check
    kInternal,            // a bug: an invariant did not hold
  };
  static constexpr int kNumCodes = static_cast<int>(Code::kInternal) + 1;

  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  // REQUIRES: sys_errno == 0 or code != kOk.
  Status(Code code, std::string message, int sys_errno)
      : code_(code), errno_(sys_errno), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status Unauthenticated(std::string m) { return {Code::kUnauthenticated, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {Code::kFailedPrecondition, std::move(m)};
  }
  static Status Busy(std::string m) { return {Code::kBusy, std::move(m)}; }
  static Status NoSpace(std::string m) { return {Code::kNoSpace, std::move(m)}; }
  static Status Stale(std::string m) { return {Code::kStale, std::move(m)}; }
  static Status TooLarge(std::string m) { return {Code::kTooLarge, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  // A failed system call: "<what>: <strerror(err)>", with the code CodeForErrno(err) and `err`
  // kept for ErrnoFor(). REQUIRES: err > 0.
  static Status FromErrno(int err, std::string_view what);
  // As FromErrno, with a message that is used as it is (for errors we decide, e.g. ENOTDIR).
  static Status Errno(int err, std::string message);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The errno this Status was made from; 0 if it was not made from one (see ErrnoFor).
  int sys_errno() const { return errno_; }

  // Adds context in front of the message: "context: message". No-op on OK.
  Status WithContext(std::string_view context) const;
  // "INVALID_ARGUMENT: message", for logs.
  std::string ToString() const;

  bool operator==(const Status& other) const = default;

 private:
  Code code_ = Code::kOk;
  int errno_ = 0;
  std::string message_;
};

// The edges' mappings, all read from one table (status.cc).
//
// Stable lower-case name of a code ("invalid_argument"); the API's `code` field.
std::string_view CodeName(Status::Code code);
// HTTP status for an error of this code (the control plane's edge).
int HttpStatusFor(Status::Code code);
// Process exit code for both binaries: 0 ok, 1 other failure, 2 bad usage or input, 3 not
// authenticated or not allowed, 4 not found, 5 conflict (exists, busy, precondition), 6
// unavailable.
int ExitCodeFor(Status::Code code);
// The errno a file-system client sees: the one kept in `status`, else the code's default (EIO
// for errors that are ours). 0 for OK.
int ErrnoFor(const Status& status);
// The code for a system call's errno (ENOENT -> kNotFound, ENOSPC -> kNoSpace, ...; kIoError for
// errnos with no closer code).
Status::Code CodeForErrno(int err);

// A value of type T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // REQUIRES: !status.ok()
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok());
  }
  // A Result of a type that converts to T (a derived class's pointer, say) converts too.
  template <typename U>
  requires(!std::is_same_v<U, T> && std::is_convertible_v<U, T>)
      Result(Result<U> other)  // NOLINT(google-explicit-constructor)
      : v_(other.ok() ? std::variant<T, Status>(std::in_place_index<0>, std::move(other).value())
                      : std::variant<T, Status>(std::in_place_index<1>, other.status())) {}

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
