//===- Error.h - runtime errors ---------------------------------*- C++ -*-===//
//
// The C++ runtime reports every failure as a memopt::runtime::Error: a
// category, which the C API turns into its status code, and a message that
// names what went wrong where (`plan: tensors[4]: ...`, `steps[3] (embedding
// at model.mlir:12:5): ...`). Exceptions stay inside the library's C++ API;
// the C API catches everything.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_ERROR_H
#define MEMOPT_RUNTIME_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace memopt::runtime {

enum class ErrorCode {
  /// The plan file is malformed or violates docs/plan-format.md.
  InvalidPlan = 1,
  /// A caller passed something that does not match the plan (an argument's
  /// shape, a buffer size, an index out of range, a null pointer).
  InvalidArgument,
  /// The requested device is unknown or was not built.
  BackendUnavailable,
  /// A kernel failed on the data it was given (an id or label out of range).
  KernelFailure,
  /// An allocation failed.
  OutOfMemory,
  /// A file could not be read.
  Io,
  /// A bug in memopt.
  Internal,
  /// Communication between ranks failed, or the ranks disagree (different
  /// plans, a different number of ranks than the plan's).
  Collective,
};

class Error : public std::runtime_error {
public:
  Error(ErrorCode code, const std::string &message)
      : std::runtime_error(message), errorCode(code) {}
  ErrorCode code() const { return errorCode; }

private:
  ErrorCode errorCode;
};

/// Concatenates anything streamable into a string (messages are built in
/// one expression at the throw site).
template <typename... Args> std::string concat(Args &&...args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_ERROR_H
