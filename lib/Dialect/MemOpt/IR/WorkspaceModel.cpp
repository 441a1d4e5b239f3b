//===- WorkspaceModel.cpp - scratch bytes of the kernels that need some ---===//
//
// WorkspaceOpInterface's implementations: the scratch memory each kernel
// may use while it runs, reserved in the arena for that op alone by
// --memopt-plan-memory. Backends use at most this much and pick their
// algorithms to fit, so the numbers are a contract between the compiler and
// every runtime backend:
//
// * Convolutions (forward and both gradients): the im2col matrix of one
//   image and group, (C/groups)·R·S × OH·OW elements of the compute type
//   (f64 for f64 tensors, else f32), which the CPU backend lowers them with
//   and which bounds the cuDNN algorithms the CUDA backend may choose (the
//   implicit-GEMM ones need none). A 1×1 convolution with unit stride and no
//   padding reads its input as that matrix and needs nothing.
// * The losses: one double partial sum per block of a parallel reduction
//   (cross_entropy: a warp per row, 8 rows a block; mse_loss: 256 elements
//   a block), at most 1024 blocks; nothing when one block suffices.
// * layer_norm_backward: each row's mean and inverse deviation, then the
//   (sum dy·x̂, sum dy) partials of every column over at most 1024 chunks of
//   rows, chunks chosen so that about 16384 threads sum columns; all
//   doubles.
//
// Every other op needs no workspace (and does not implement the interface).
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace memopt;

namespace {

ShapedType shapedType(Value value) { return cast<ShapedType>(value.getType()); }

/// Bytes of the element type convolutions and reductions compute in.
int64_t computeBytes(Operation *op) {
  for (Type type : op->getOperandTypes())
    if (cast<ShapedType>(type).getElementType().isF64())
      return 8;
  return 4;
}

/// The im2col matrix of one image-group of a convolution whose input is
/// `input` (N×C×H×W), weight `weight` (K×C/g×R×S) and output `output`
/// (N×K×OH×OW), or 0 when the input already is that matrix.
int64_t convWorkspace(Operation *op, Value weight, Value output,
                      ArrayRef<int64_t> strides, ArrayRef<int64_t> padding) {
  ShapedType w = shapedType(weight), y = shapedType(output);
  int64_t r = w.getDimSize(2), s = w.getDimSize(3);
  bool direct = r == 1 && s == 1 && strides[0] == 1 && strides[1] == 1 &&
                padding[0] == 0 && padding[1] == 0;
  if (direct)
    return 0;
  int64_t rows = w.getDimSize(1) * r * s;
  int64_t cols = y.getDimSize(2) * y.getDimSize(3);
  return rows * cols * computeBytes(op);
}

/// Partial sums of a reduction over `blocks` blocks (none for one block).
int64_t partialSums(int64_t blocks) {
  constexpr int64_t kMaxPartials = 1024;
  if (blocks <= 1)
    return 0;
  return std::min(blocks, kMaxPartials) * static_cast<int64_t>(sizeof(double));
}

} // namespace

int64_t Conv2DOp::getWorkspaceBytes() {
  return convWorkspace(*this, getWeight(), getResult(), getStrides(),
                       getPadding());
}

int64_t Conv2DBackwardInputOp::getWorkspaceBytes() {
  return convWorkspace(*this, getWeight(), getGradOutput(), getStrides(),
                       getPadding());
}

int64_t Conv2DBackwardWeightOp::getWorkspaceBytes() {
  return convWorkspace(*this, getResult(), getGradOutput(), getStrides(),
                       getPadding());
}

/// A warp per row, eight rows a block.
int64_t CrossEntropyOp::getWorkspaceBytes() {
  return partialSums(
      llvm::divideCeil(shapedType(getLogits()).getDimSize(0), 8));
}

/// 256 elements a block.
int64_t MseLossOp::getWorkspaceBytes() {
  return partialSums(
      llvm::divideCeil(shapedType(getPrediction()).getNumElements(), 256));
}

int64_t LayerNormBackwardOp::getWorkspaceBytes() {
  constexpr int64_t kColumnThreadsWanted = 16384, kMaxRowChunks = 1024;
  int64_t width = shapedType(getGamma()).getNumElements();
  if (width == 0)
    return 0;
  int64_t rows = shapedType(getX()).getNumElements() / width;
  int64_t chunks =
      std::clamp<int64_t>(llvm::divideCeil(kColumnThreadsWanted, width), 1,
                          std::max<int64_t>(1, std::min(kMaxRowChunks, rows)));
  int64_t rowsPerChunk = std::max<int64_t>(1, llvm::divideCeil(rows, chunks));
  chunks = llvm::divideCeil(rows, rowsPerChunk);
  int64_t bytesPerDouble = static_cast<int64_t>(sizeof(double));
  return (rows + chunks * width) * 2 * bytesPerDouble;
}
