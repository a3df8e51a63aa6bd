// Errors: user mistakes throw UserError (TESSEL_CHECK), broken invariants throw InternalError
// (TESSEL_ICHECK, with file:line). Where failure is expected (schedule steps tried by a search),
// APIs return a Status instead of throwing.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace tessel {

/** A mistake in what the user asked for (bad schedule step, bad shape, bad flag). */
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/** A broken invariant inside tessel: a bug, never the user's fault. */
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/** Success, or an error message. Cheap to return; used where the caller expects failures. */
class Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string msg) { Status s; s.ok_ = false; s.msg_ = std::move(msg); return s; }
  bool is_ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& message() const { return msg_; }

 private:
  bool ok_ = true;
  std::string msg_;
};

namespace detail {
/** Collects a message with operator<< and throws E when destroyed (only built on failure). */
template <class E>
class Thrower {
 public:
  explicit Thrower(std::string prefix) { os_ << prefix; }
  [[noreturn]] ~Thrower() noexcept(false) { throw E(os_.str()); }
  template <class T>
  Thrower& operator<<(const T& v) { os_ << v; return *this; }

 private:
  std::ostringstream os_;
};
std::string icheck_prefix(const char* file, int line, const char* cond);
}  // namespace detail
}  // namespace tessel

/** User-facing check: `TESSEL_CHECK(x > 0) << "stage C, axis i: factor must be positive";` */
#define TESSEL_CHECK(cond) \
  while (!(cond)) ::tessel::detail::Thrower<::tessel::UserError>("")

/** Internal invariant check; the message carries file:line. */
#define TESSEL_ICHECK(cond) \
  while (!(cond)) ::tessel::detail::Thrower<::tessel::InternalError>(::tessel::detail::icheck_prefix(__FILE__, __LINE__, #cond))
