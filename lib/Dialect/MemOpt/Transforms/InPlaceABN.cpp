//===- InPlaceABN.cpp - fuse batch norm + invertible activation -----------===//
//
// InPlace-ABN (Rota Bulò et al., CVPR 2018) on a training step built by
// --memopt-autodiff. The pattern, in the step's forward and backward:
//
//   %y, %m, %v = memopt.batch_norm %x, %g, %b, %rm, %rv
//   %a = memopt.leaky_relu %y {alpha}          (or memopt.elu)
//   ...
//   %dz = memopt.leaky_relu_backward %da, %y   (or %a with from_output)
//   %dx, %dg, %db = memopt.batch_norm_backward %dz, %x, %g
//
// becomes
//
//   %a, %m, %v, %invstd = memopt.batch_norm_act %x, %g, %b, %rm, %rv
//   %dx, %dg, %db = memopt.batch_norm_act_backward %da, %a, %g, %b, %invstd
//
// The backward no longer reads %x or %y: it inverts the activation on %a.
// So %y is never stored, and %a may overwrite %x (`memopt.inplace = 0`)
// when nothing else reads %x's buffer afterwards — the rule of
// --memopt-inplace: not an argument, not a constant, and every other reader
// of the buffer (through views and earlier in-place results) precedes the
// fused op in the block.
//
// Only this exact pattern is fused: %y read by nothing but the activation
// and its backward, one backward op each, matching attributes. Anything
// else is left alone, and so are graphs without the backward ops (inference
// graphs have nothing to save). A batch norm followed by a non-invertible
// activation in the same pattern (relu, or alpha <= 0) gets a remark.
//
//===----------------------------------------------------------------------===//

#include "memopt/Analysis/MemoryAnalysis.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"
#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"

#define DEBUG_TYPE "memopt-inplace-abn"

using namespace mlir;
using namespace memopt;

namespace {

/// A batch norm, the activation on its result and their backward ops.
struct Candidate {
  BatchNormOp bn;
  Operation *act = nullptr;
  /// The activation's backward op; its result feeds `bnBackward` only.
  Operation *actBackward = nullptr;
  BatchNormBackwardOp bnBackward;
};

/// The activation's alpha (0 for relu: it is leaky_relu with slope 0).
double alphaOf(Operation *act) {
  if (auto leaky = dyn_cast<LeakyReluOp>(act))
    return leaky.getAlpha().convertToDouble();
  if (auto elu = dyn_cast<EluOp>(act))
    return elu.getAlpha().convertToDouble();
  return 0;
}

/// Whether `op` is the backward op autodiff builds for activation `act`
/// whose input is `y`: it reads `y` (or, with `from_output`, `act`'s
/// result; relu_backward always reads the output) with act's alpha.
bool isActivationBackward(Operation *op, Operation *act, Value y) {
  Value a = act->getResult(0);
  if (op->getNumOperands() != 2 || op->getOperand(0) == y ||
      op->getOperand(0) == a)
    return false;
  Value saved = op->getOperand(1);
  if (isa<ReluOp>(act))
    return isa<ReluBackwardOp>(op) && saved == a;
  if (auto leaky = dyn_cast<LeakyReluBackwardOp>(op))
    return isa<LeakyReluOp>(act) &&
           leaky.getAlpha().convertToDouble() == alphaOf(act) &&
           saved == (leaky.getFromOutput() ? a : y);
  if (auto elu = dyn_cast<EluBackwardOp>(op))
    return isa<EluOp>(act) &&
           elu.getAlpha().convertToDouble() == alphaOf(act) &&
           saved == (elu.getFromOutput() ? a : y);
  return false;
}

/// The batch norm's pattern in the step, or std::nullopt.
std::optional<Candidate> match(BatchNormOp bn) {
  Candidate c;
  c.bn = bn;
  Value y = bn.getResult();
  for (Operation *user : y.getUsers())
    if (isa<ReluOp, LeakyReluOp, EluOp>(user)) {
      if (c.act && c.act != user)
        return std::nullopt; // two activations read y
      c.act = user;
    }
  if (!c.act)
    return std::nullopt;

  // The activation's backward: among y's readers (input saved) or the
  // activation result's (output saved); its gradient must be the batch
  // norm's upstream gradient, and nothing else may read y.
  auto consider = [&](Operation *user) {
    if (!isActivationBackward(user, c.act, y))
      return false;
    Value dz = user->getResult(0);
    if (!dz.hasOneUse())
      return false;
    auto bnb = dyn_cast<BatchNormBackwardOp>(*dz.getUsers().begin());
    if (!bnb || bnb.getGradOutput() != dz || bnb.getX() != bn.getX() ||
        bnb.getGamma() != bn.getGamma() ||
        bnb.getEpsilon().convertToDouble() != bn.getEpsilon().convertToDouble())
      return false;
    if (c.actBackward && c.actBackward != user)
      return false;
    c.actBackward = user;
    c.bnBackward = bnb;
    return true;
  };
  for (Operation *user : y.getUsers())
    if (user != c.act && !consider(user))
      return std::nullopt; // y is needed by something the fusion removes
  for (Operation *user : c.act->getResult(0).getUsers())
    if (isActivationBackward(user, c.act, y))
      (void)consider(user);
  if (!c.actBackward)
    return std::nullopt;
  return c;
}

/// Why the activation cannot be inverted, or empty when it can.
std::string nonInvertible(Operation *act) {
  std::string why;
  llvm::raw_string_ostream os(why);
  const char *reason = " is not invertible: negative inputs map to 0 and "
                       "cannot be recovered from its output";
  if (isa<ReluOp>(act)) {
    os << "relu" << reason;
  } else if (double alpha = alphaOf(act); !(alpha > 0)) {
    os << act->getName().stripDialect()
       << " with alpha = " << llvm::format("%g", alpha);
    if (alpha == 0)
      os << " (a relu)" << reason;
    else
      os << " is not invertible: the sign of its output does not tell which "
            "branch produced it";
  }
  return why;
}

Location fusedLoc(ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return FusedLoc::get(ops.front()->getContext(), locs);
}

/// Replaces the candidate's four ops by the fused pair.
void fuse(const Candidate &c) {
  BatchNormOp bn = c.bn;
  OpBuilder b(bn);
  StringAttr activation =
      b.getStringAttr(isa<EluOp>(c.act) ? "elu" : "leaky_relu");
  FloatAttr alpha = b.getF64FloatAttr(alphaOf(c.act));
  auto fused = BatchNormActOp::create(
      b, fusedLoc({bn, c.act}), bn.getX(), bn.getGamma(), bn.getBeta(),
      bn.getRunningMean(), bn.getRunningVar(), bn.getEpsilonAttr(),
      bn.getMomentumAttr(), activation, alpha);

  b.setInsertionPoint(c.bnBackward);
  Type gamma = bn.getGamma().getType();
  auto backward = BatchNormActBackwardOp::create(
      b, fusedLoc({c.actBackward, c.bnBackward}),
      TypeRange{bn.getX().getType(), gamma, gamma},
      c.actBackward->getOperand(0), fused.getResult(), bn.getGamma(),
      bn.getBeta(), fused.getSavedInvstd(), activation, alpha);

  c.act->getResult(0).replaceAllUsesWith(fused.getResult());
  bn.getNewRunningMean().replaceAllUsesWith(fused.getNewRunningMean());
  bn.getNewRunningVar().replaceAllUsesWith(fused.getNewRunningVar());
  c.bnBackward->replaceAllUsesWith(backward);
  c.bnBackward->erase();
  c.actBackward->erase();
  c.act->erase();
  bn->erase();

  if (inPlaceRefusal(fused, 0).empty())
    fused->setAttr(kInPlaceAttrName, b.getI64IntegerAttr(0));
}

} // namespace

FailureOr<int64_t> memopt::fuseInPlaceABN(func::FuncOp func) {
  if (func.isExternal())
    return 0;
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("InPlace-ABN expects a single-block function");
  SmallVector<Candidate> candidates;
  for (auto bn : func.front().getOps<BatchNormOp>()) {
    std::optional<Candidate> c = match(bn);
    if (!c) {
      LLVM_DEBUG(llvm::dbgs() << "not an InPlace-ABN pattern: " << bn << "\n");
      continue;
    }
    if (std::string why = nonInvertible(c->act); !why.empty()) {
      bn->emitRemark() << "InPlace-ABN not applied: " << why
                       << ", so the backward could not rebuild its input; "
                          "InPlace-ABN needs leaky_relu with alpha > 0 or elu";
      continue;
    }
    candidates.push_back(*c);
  }
  // Fused in block order, so each in-place decision sees the earlier ones.
  for (const Candidate &c : candidates)
    fuse(c);
  return static_cast<int64_t>(candidates.size());
}
