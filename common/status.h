// Status and Result<T>: expected failures as values.
//
// Every module reports bad input, missing files, exhausted quotas and the like
// through these types; exceptions never cross a module boundary. A Status is
// cheap to copy when ok (no allocation). Result<T> holds either a value or a
// non-ok Status.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ragd {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller's input is wrong (bad request, bad flag)
  kNotFound,           // a file, document, user or route does not exist
  kCorrupt,            // a file exists but its content is malformed
  kUnsupported,        // a valid but unsupported feature (tensor type, format)
  kIoError,            // the OS refused a read/write/mmap
  kOutOfRange,         // a value past a limit (context length, token id)
  kResourceExhausted,  // quota, rate limit, memory budget
  kUnavailable,        // temporarily unable (queue full, model loading)
  kUnauthenticated,    // no or bad credentials
  kPermissionDenied,   // credentials fine, role insufficient
  kCancelled,          // the request was cancelled by its owner
  kAlreadyExists,      // a unique thing already exists
  kInternal,           // a bug: should never reach a user
};

// Short stable name of a code ("invalid_argument"), for logs and messages.
std::string_view StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Unauthenticated(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok" or "<code name>: <message>".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a T or a non-ok Status. Access value() only after checking ok().
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
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

}  // namespace ragd

// Returns early from the enclosing function when `expr` (a Status) is not ok.
#define RAGD_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::ragd::Status ragd_status_ = (expr);        \
    if (!ragd_status_.ok()) return ragd_status_; \
  } while (0)
