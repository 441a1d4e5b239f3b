//===- OptionChecks.cpp - the checks the passes share for their options --===//
//
// The budget and the arena alignment are checked here, once for every pass
// that takes them (Support/ByteSize.h reads the bytes).
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace memopt;

LogicalResult memopt::verifyAlignmentOption(Operation *anchor, StringRef pass,
                                            int64_t alignment) {
  if (alignment > 0 && alignment <= kMaxAlignment &&
      llvm::isPowerOf2_64(static_cast<uint64_t>(alignment)))
    return success();
  return anchor->emitError()
         << pass << ": alignment must be a power of two from 1 to "
         << kMaxAlignment << ", got " << alignment;
}

LogicalResult memopt::verifyFlopFractionOption(Operation *anchor,
                                               StringRef pass, StringRef option,
                                               double fraction) {
  if (fraction >= 0 && std::isfinite(fraction))
    return success();
  return anchor->emitError()
         << pass << ": " << option
         << " must be a fraction >= 0 of the forward pass's FLOPs, got "
         << llvm::formatv("{0}", llvm::format("%g", fraction)).str();
}

FailureOr<std::optional<int64_t>>
memopt::parseBudgetOption(Operation *anchor, StringRef pass, StringRef text) {
  if (text.empty())
    return std::optional<int64_t>();
  std::optional<int64_t> bytes = parseByteSize(text);
  if (bytes && *bytes > 0)
    return bytes;
  return anchor->emitError()
         << pass << ": invalid budget '" << text
         << "' (expected a positive byte count such as 1073741824, 512MiB or "
            "2GiB)";
}
