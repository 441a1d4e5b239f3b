//===- ArgumentInit.h - how to initialise a graph's arguments ---*- C++ -*-===//
//
// Decides, from how a function uses each argument, how a training run
// initialises it the way PyTorch's modules do: conv/linear weights with
// kaiming_uniform_(a=√5), their biases uniform(±1/√fan_in), normalisation
// scales 1 and shifts 0, running means 0 and variances 1, embedding tables
// N(0, 1). For data it finds the value range synthetic inputs must respect:
// class labels in [0, C) of the cross-entropy they feed, ids in [0, V) of the
// embedding table they index.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_ANALYSIS_ARGUMENTINIT_H
#define MEMOPT_ANALYSIS_ARGUMENTINIT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace memopt {

struct ArgumentInit {
  enum class Kind {
    /// uniform(-bound, bound): kaiming_uniform_(a=√5) weights (bound =
    /// 1/√fan_in) and their biases (same bound).
    Uniform,
    /// normal(0, std): embedding tables (std 1) and parameters no rule
    /// covers (std 0.02, as GPT-2 initialises its tables).
    Normal,
    /// Every element `value`: norm scales (1), shifts (0), running stats.
    Constant,
    /// Synthetic float data: normal(0, 1), like torch.randn.
    RandomData,
    /// Synthetic integer data: uniform integers in [0, limit).
    RandomIndices,
  };
  Kind kind = Kind::RandomData;
  double bound = 0;  // Uniform
  double stddev = 1; // Normal
  double value = 0;  // Constant
  int64_t limit = 0; // RandomIndices
  /// RandomIndices that are the class labels of a cross-entropy (a dataset
  /// can provide them), rather than ids.
  bool classLabels = false;
  /// Which rule decided, for `memopt-run --verbose` and tests, e.g.
  /// "conv2d weight, fan_in 27".
  std::string reason;
};

/// One entry per argument of `func`. Fails with a located diagnostic when an
/// integer data argument feeds nothing whose range is known (its synthetic
/// values could not be valid).
llvm::FailureOr<std::vector<ArgumentInit>>
computeArgumentInit(mlir::func::FuncOp func);

} // namespace memopt

#endif // MEMOPT_ANALYSIS_ARGUMENTINIT_H
