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
//   padding reads its input as that matrix and needs nothing. At least the
//   function's `memopt.conv_workspace` (--memopt-conv-workspace), within
//   the cap, so that cuDNN may choose faster algorithms.
// * The losses: one double partial sum per block of a parallel reduction
//   (cross_entropy: a warp per row, 8 rows a block; mse_loss: 256 elements
//   a block), at most 1024 blocks; nothing when one block suffices.
// * attention and attention_backward: the CPU kernels' strips of scores,
//   min(64, Sq) query rows of Sk elements of the compute type, one strip
//   forward and two backward (memopt/Contract/AttentionShapes.h); under a
//   cap as many rows as fit, at least one.
// * linear_cross_entropy and its backward: one chunk of logits, `chunk`
//   rows of V elements of the compute type, then, when the N rows take more
//   than one chunk, 32 MiB of GEMM scratch for cuBLAS
//   (memopt/Contract/LinearCrossEntropyShapes.h); under a cap as many rows
//   as fit, at least one, and the scratch only if it fits too.
// * adafactor_update: the row factors' means and the partial sums of its
//   reductions, a few KiB of doubles (memopt/Contract/OptimizerShapes.h),
//   kept even above a cap; clip_coefficient and square_sum: the running sum
//   of squares and one gradient's partial sums, 8 KiB (none for
//   clip_coefficient given the sum).
// * layer_norm_backward and rms_norm_backward: each row's mean and inverse
//   deviation (rms_norm: 0 and the inverse root mean square), then the
//   (sum dy·x̂, sum dy) partials of every column over at most 1024 chunks of
//   rows, chunks chosen so that about 16384 threads sum columns; all
//   doubles.
// * all_reduce: the packed bucket and the slices every rank sends
//   (memopt/Contract/CollectiveShapes.h), whatever the cap; reduce_scatter
//   likewise (packed by owner).
//
// The reductions' layout is the runtime's memopt/Contract/ReductionLayout.h
// (header-only), which the CUDA kernels split their work by.
//
// Every other op needs no workspace (and does not implement the interface).
//
// Under a cap (the function's `memopt.workspace_limit`) each op reserves
// what its kernels can still use: convolutions build the matrix a chunk of
// output rows at a time (at least one row, C/groups·R·S·OW elements, which
// the CPU cannot do without, so that much is kept even above the cap); the
// reductions reserve nothing (one block) unless their partials fit, and
// layer_norm_backward as many chunks of partials as fit.
//
//===----------------------------------------------------------------------===//

#include "memopt/Contract/AttentionShapes.h"
#include "memopt/Contract/CollectiveShapes.h"
#include "memopt/Contract/LinearCrossEntropyShapes.h"
#include "memopt/Contract/OptimizerShapes.h"
#include "memopt/Contract/ReductionLayout.h"
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace memopt;
namespace reduction = memopt::runtime::reduction;

namespace {

ShapedType shapedType(Value value) { return cast<ShapedType>(value.getType()); }

/// Bytes of the element type convolutions and reductions compute in.
int64_t computeBytes(Operation *op) {
  for (Type type : op->getOperandTypes())
    if (cast<ShapedType>(type).getElementType().isF64())
      return 8;
  return 4;
}

/// Scratch for a kernel that works a chunk of rows at a time (the CPU
/// kernels' WorkspaceRows): `maxRows` rows of `rowBytes`, fewer when
/// `limit` cannot hold them but at least one (the kernels cannot do with
/// less), nothing when there are no rows.
int64_t rowsOfScratch(int64_t rowBytes, int64_t maxRows, int64_t limit) {
  if (rowBytes == 0 || maxRows == 0)
    return 0;
  return rowBytes * std::clamp<int64_t>(limit / rowBytes, 1, maxRows);
}

/// The function's `memopt.conv_workspace` (0 without one).
int64_t convWorkspaceFloor(Operation *op) {
  if (auto func = op->getParentOfType<FunctionOpInterface>())
    if (auto floor = func->getAttrOfType<IntegerAttr>(
            MemOptDialect::kConvWorkspaceAttrName))
      return floor.getInt();
  return 0;
}

/// The im2col matrix of one image-group of a convolution with weight
/// `weight` (K×C/g×R×S) and output `output` (N×K×OH×OW), in chunks of whole
/// output rows when `limit` cannot hold it all, or 0 when the input already
/// is that matrix; at least the function's `memopt.conv_workspace` within
/// `limit`.
int64_t convWorkspace(Operation *op, Value weight, Value output,
                      ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                      int64_t limit) {
  ShapedType w = shapedType(weight), y = shapedType(output);
  int64_t r = w.getDimSize(2), s = w.getDimSize(3);
  bool direct = r == 1 && s == 1 && strides[0] == 1 && strides[1] == 1 &&
                padding[0] == 0 && padding[1] == 0;
  int64_t im2col = direct
                       ? 0
                       : rowsOfScratch(w.getDimSize(1) * r * s *
                                           y.getDimSize(3) * computeBytes(op),
                                       y.getDimSize(2), limit);
  return std::max(im2col, std::min(convWorkspaceFloor(op), limit));
}

/// Partial sums of a loss reduction that wants `blocks` blocks: none for
/// one block, or when they do not fit `limit` (the kernel then runs in one
/// block).
int64_t partialSums(int64_t blocks, int64_t limit) {
  int64_t bytes = reduction::lossPartialBytes(blocks);
  return bytes <= limit ? bytes : 0;
}

} // namespace

int64_t memopt::getWorkspaceBytes(Operation *op) {
  auto workspace = dyn_cast<WorkspaceOpInterface>(op);
  if (!workspace)
    return 0;
  int64_t limit = std::numeric_limits<int64_t>::max();
  if (auto func = op->getParentOfType<FunctionOpInterface>())
    if (auto cap = func->getAttrOfType<IntegerAttr>(
            MemOptDialect::kWorkspaceLimitAttrName))
      limit = cap.getInt();
  return workspace.getWorkspaceBytes(limit);
}

int64_t Conv2DOp::getWorkspaceBytes(int64_t limit) {
  return convWorkspace(*this, getWeight(), getResult(), getStrides(),
                       getPadding(), limit);
}

int64_t Conv2DBackwardInputOp::getWorkspaceBytes(int64_t limit) {
  return convWorkspace(*this, getWeight(), getGradOutput(), getStrides(),
                       getPadding(), limit);
}

int64_t Conv2DBackwardWeightOp::getWorkspaceBytes(int64_t limit) {
  return convWorkspace(*this, getResult(), getGradOutput(), getStrides(),
                       getPadding(), limit);
}

int64_t CrossEntropyOp::getWorkspaceBytes(int64_t limit) {
  return partialSums(
      reduction::crossEntropyBlocks(shapedType(getLogits()).getDimSize(0)),
      limit);
}

int64_t MseLossOp::getWorkspaceBytes(int64_t limit) {
  return partialSums(
      reduction::mseLossBlocks(shapedType(getPrediction()).getNumElements()),
      limit);
}

/// Per-row statistics, then the column partials of as many chunks of rows
/// as `limit` holds (all of them without a cap), none when it cannot hold
/// one chunk: layer_norm_backward's split, which rms_norm_backward's
/// kernels share.
static int64_t rowNormBackwardBytes(Value x, Value gamma, int64_t limit) {
  int64_t width = shapedType(gamma).getNumElements();
  if (width == 0)
    return 0;
  int64_t rows = shapedType(x).getNumElements() / width;
  int64_t statsBytes = reduction::layerNormStatsBytes(rows);
  int64_t chunkBytes = reduction::layerNormChunkBytes(width);
  if (limit < statsBytes + chunkBytes)
    return 0;
  return reduction::layerNormBackwardChunks(rows, width,
                                            (limit - statsBytes) / chunkBytes)
      .bytes(rows, width);
}

int64_t LayerNormBackwardOp::getWorkspaceBytes(int64_t limit) {
  return rowNormBackwardBytes(getX(), getGamma(), limit);
}

int64_t RmsNormBackwardOp::getWorkspaceBytes(int64_t limit) {
  return rowNormBackwardBytes(getX(), getGamma(), limit);
}

/// The score strips of an attention kernel over `q` and `k`: up to
/// kTileRows query rows of `strips` strips of Sk elements.
static int64_t attentionWorkspace(Operation *op, Value q, Value k,
                                  int64_t strips, int64_t limit) {
  ShapedType qt = shapedType(q), kt = shapedType(k);
  int64_t queries = qt.getDimSize(qt.getRank() - 2);
  return rowsOfScratch(
      kt.getDimSize(kt.getRank() - 2) * strips * computeBytes(op),
      std::min(memopt::runtime::attention::kTileRows, queries), limit);
}

int64_t AttentionOp::getWorkspaceBytes(int64_t limit) {
  return attentionWorkspace(*this, getQ(), getK(),
                            memopt::runtime::attention::kForwardStrips, limit);
}

int64_t AttentionBackwardOp::getWorkspaceBytes(int64_t limit) {
  return attentionWorkspace(*this, getQ(), getK(),
                            memopt::runtime::attention::kBackwardStrips, limit);
}

/// One chunk of logits of a linear cross-entropy kernel: up to `chunk` rows
/// of V elements.
static int64_t linearCrossEntropyWorkspace(Operation *op, Value hidden,
                                           Value weight, int64_t chunk,
                                           int64_t limit) {
  int64_t rowBytes = shapedType(weight).getDimSize(0) * computeBytes(op);
  int64_t rows = shapedType(hidden).getDimSize(0);
  int64_t logits = rowsOfScratch(rowBytes, std::min(chunk, rows), limit);
  // The GEMM scratch only where the head takes more than one chunk: its
  // GEMMs are then short in one dimension, where cuBLAS needs a workspace;
  // in one chunk they are as large as the batch (and a small model's plan
  // would grow by the scratch for nothing on the CPU).
  if (logits == 0 || logits / rowBytes >= rows)
    return logits;
  int64_t scratch = shapes::kGemmScratchBytes + shapes::kGemmScratchAlignment;
  return limit - logits >= scratch ? logits + scratch : logits;
}

int64_t AdafactorUpdateOp::getWorkspaceBytes(int64_t /*limit*/) {
  // Needed whole whatever the cap: the reductions have no slower path.
  return 8 * shapes::adafactorWorkspaceDoubles(
                 getParam().getType().getShape().vec());
}

int64_t ClipCoefficientOp::getWorkspaceBytes(int64_t /*limit*/) {
  // Given the sum of squares, it has nothing to add up.
  if (getSquareSum())
    return 0;
  return 8 * shapes::kClipCoefficientWorkspaceDoubles;
}

/// clip_coefficient's sum alone.
int64_t SquareSumOp::getWorkspaceBytes(int64_t /*limit*/) {
  return 8 * shapes::kClipCoefficientWorkspaceDoubles;
}

int64_t LinearCrossEntropyOp::getWorkspaceBytes(int64_t limit) {
  return linearCrossEntropyWorkspace(*this, getHidden(), getWeight(),
                                     getChunk(), limit);
}

int64_t LinearCrossEntropyBackwardOp::getWorkspaceBytes(int64_t limit) {
  return linearCrossEntropyWorkspace(*this, getHidden(), getWeight(),
                                     getChunk(), limit);
}

int64_t LinearCrossEntropyWithGradOp::getWorkspaceBytes(int64_t limit) {
  // The N log-sum-exps first (kept whatever the cap), then the backward
  // op's chunk of logits in what the cap leaves.
  int64_t lse = shapes::linearCrossEntropyLseBytes(
      shapedType(getHidden()).getDimSize(0), computeBytes(*this));
  return lse + linearCrossEntropyWorkspace(*this, getHidden(), getWeight(),
                                           getChunk(),
                                           std::max<int64_t>(limit - lse, 0));
}

/// A bucket's packed copy and received slices (CollectiveShapes.h), or 0
/// for an empty one.
static int64_t bucketWorkspaceBytes(ValueRange bucket, int64_t ranks,
                                    bool byOwner) {
  int64_t elements = 0;
  for (Value v : bucket)
    elements += shapedType(v).getNumElements();
  if (elements == 0 || ranks < 1)
    return 0;
  int64_t tensors = static_cast<int64_t>(bucket.size());
  int64_t elementBytes =
      (shapedType(bucket.front()).getElementTypeBitWidth() + 7) / 8;
  return byOwner ? shapes::reduceScatterWorkspaceBytes(tensors, elements, ranks,
                                                       elementBytes)
                 : shapes::allReduceWorkspaceBytes(tensors, elements, ranks,
                                                   elementBytes);
}

/// The packed bucket and the slices received from every rank, whatever the
/// cap: the kernel cannot do with less, and a smaller bucket
/// (--memopt-data-parallel=bucket) is the way to a smaller workspace.
int64_t AllReduceOp::getWorkspaceBytes(int64_t /*limit*/) {
  return bucketWorkspaceBytes(getValues(), getRanks(), /*byOwner=*/false);
}

/// The bucket packed by owner and the received slices.
int64_t ReduceScatterOp::getWorkspaceBytes(int64_t /*limit*/) {
  return bucketWorkspaceBytes(getValues(), getRanks(), /*byOwner=*/true);
}
