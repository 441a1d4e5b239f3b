//===- ForeignIR.h - what memopt's passes transform, and what not -*- C++
//-*-===//
//
// memopt's passes run inside other compilers' pipelines, on modules that
// hold more than memopt graphs. They transform a function only when it is a
// memopt graph (it has a body with memopt ops), leave every other function
// and declaration alone, and refuse with a located error a graph that mixes
// in what they cannot reason about: ops with regions, ops of other dialects
// (calls, side effects, memory), values that are not tensors. A refusal is
// a clear error; the alternative would be a silent miscompile (a free before
// a read inside a region, a reordered call, a gradient missing through a
// region).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_TRANSFORMS_FOREIGNIR_H
#define MEMOPT_DIALECT_MEMOPT_TRANSFORMS_FOREIGNIR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace memopt {

/// True if `func` has a body holding at least one memopt op, or arguments
/// with memopt attributes (`{memopt.param}`, ...).
bool isMemOptGraph(mlir::func::FuncOp func);

/// Succeeds if every op of `func` is one memopt's passes understand (memopt
/// ops, tensor `arith.constant`, `func.return`), its body is one block and
/// its arguments and results are ranked tensors; otherwise emits an error
/// at the first offending op (or the function) naming `pass`, and fails.
llvm::LogicalResult verifyTransformable(mlir::func::FuncOp func,
                                        llvm::StringRef pass);

/// The largest tensor memopt's passes take (256 TiB), the most bytes all of
/// a graph's tensors may total (64 PiB) and the most FLOPs its ops may
/// total (5.8e17). Below these, every size, offset and FLOP count the
/// analyses and passes compute (sums over buffers and clones, aligned
/// offsets) fits in int64_t with room to spare; above them a graph is
/// refused rather than wrapped.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;
constexpr int64_t kMaxGraphBytes = int64_t(1) << 56;
constexpr int64_t kMaxGraphFlops = int64_t(1) << 59;

/// Succeeds if every tensor of `func` (arguments and results of its ops)
/// fits kMaxTensorBytes and all of them together kMaxGraphBytes, and its
/// ops' FLOPs total at most kMaxGraphFlops; otherwise emits an error at
/// the first op (or the function) over a bound, naming `pass`, and fails.
/// Part of verifyTransformable.
llvm::LogicalResult verifyGraphSizes(mlir::func::FuncOp func,
                                     llvm::StringRef pass);

/// The memopt graphs a pass anchored on `anchor` transforms, each verified
/// with verifyTransformable; fails on the first one that is not
/// transformable. On a `builtin.module`: the memopt graphs among its
/// functions. On a `func.func` (a pass nested under `func.func(...)`): that
/// function if it is a memopt graph. Declarations and functions without
/// memopt ops are not returned. Any other anchor is an error naming `pass`.
llvm::LogicalResult
collectMemOptGraphs(mlir::Operation *anchor, llvm::StringRef pass,
                    llvm::SmallVectorImpl<mlir::func::FuncOp> &graphs);

/// Sets the integer attribute `attr` to the byte size `bytes` (a pass's
/// `bytes=` option, parseByteSize) on every graph collectMemOptGraphs
/// returns; a value that is not a byte size is an error on `anchor` naming
/// `pass` and the `examples` of valid sizes.
llvm::LogicalResult setByteSizeOnGraphs(mlir::Operation *anchor,
                                        llvm::StringRef pass,
                                        llvm::StringRef bytes,
                                        llvm::StringRef examples,
                                        llvm::StringRef attr);

} // namespace memopt

#endif // MEMOPT_DIALECT_MEMOPT_TRANSFORMS_FOREIGNIR_H
