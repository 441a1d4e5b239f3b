//===- MemOptFusedOps.cpp - verifiers of the fused ops --------------------===//
//
// InPlace-ABN's ops (MemOptFusedOps.td). Shapes of batch_norm_act are
// inferred by batch norm's rules (MemOptNormOps.cpp); what is checked here is
// what makes the fusion valid: an activation the backward can invert.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "memopt/Contract/NormShapes.h"

#include <cmath>

using namespace mlir;
using namespace memopt;

/// `activation` must be leaky_relu or elu and `alpha` finite and positive:
/// the backward rebuilds the activation's input from its output.
static LogicalResult
verifyInvertibleActivation(Operation *op, StringRef activation, double alpha) {
  if (activation == "relu")
    return op->emitOpError(
        "cannot use activation \"relu\": ReLU is not invertible (every "
        "negative input maps to 0), so the backward could not rebuild its "
        "input from the output; use \"leaky_relu\" or \"elu\" with alpha > 0");
  if (activation != "leaky_relu" && activation != "elu")
    return op->emitOpError("expected 'activation' \"leaky_relu\" or \"elu\", "
                           "got \"")
           << activation << "\"";
  if (!std::isfinite(alpha) || alpha <= 0) {
    InFlightDiagnostic diag = op->emitOpError("expected 'alpha' > 0, got ")
                              << alpha;
    if (alpha == 0)
      diag << ": slope 0 makes " << activation
           << " a ReLU, which is not invertible (every negative input maps to "
              "0), so the backward could not rebuild its input from the "
              "output";
    else
      diag << ": the backward rebuilds the activation's input from its "
              "output, which needs a finite, positive alpha";
    return diag;
  }
  return success();
}

LogicalResult BatchNormActOp::verify() {
  return verifyInvertibleActivation(*this, getActivation(),
                                    getAlpha().convertToDouble());
}

LogicalResult BatchNormActBackwardOp::verify() {
  RankedTensorType y = getOutput().getType();
  RankedTensorType gamma = getGamma().getType();
  if (y.getRank() < 2 || gamma.getRank() != 1)
    return emitOpError("expected output of rank ≥ 2 (NxCx...) and "
                       "per-channel operands of rank 1, got ")
           << y << " and " << gamma;
  if (shapes::ShapeProblem problem =
          shapes::batchNormShape(y.getShape().vec(), gamma.getShape().vec(),
                                 /*batchStatistics=*/false, "output");
      !problem.empty())
    return emitOpError(problem);
  return verifyInvertibleActivation(*this, getActivation(),
                                    getAlpha().convertToDouble());
}
