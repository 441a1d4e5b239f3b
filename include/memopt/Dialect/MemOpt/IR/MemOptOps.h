//===- MemOptOps.h - memopt operations --------------------------*- C++ -*-===//
//
// Declares the ops of the memopt dialect (generated from MemOptOps.td) and
// the helpers their shape inference shares.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DIALECT_MEMOPT_IR_MEMOPTOPS_H
#define MEMOPT_DIALECT_MEMOPT_IR_MEMOPTOPS_H

#include "memopt/Dialect/MemOpt/IR/MemOptDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <string>

namespace memopt {
namespace detail {

/// Compares the result types an op was written with against the ones its
/// shape rules infer, and reports a mismatch the way a user reads it:
/// `expected result shape 8x64x16x16, got 8x64x15x15`.
llvm::LogicalResult
checkInferredResultTypes(std::optional<mlir::Location> location,
                         llvm::StringRef opName, mlir::TypeRange inferred,
                         mlir::TypeRange actual);

/// Fails, naming the attribute, if a float attribute of `op` is NaN or
/// infinite.
llvm::LogicalResult verifyFiniteFloatAttributes(mlir::Operation *op);
/// clamp's and clamp_backward's bounds: min <= max where both are given.
llvm::LogicalResult verifyClampBounds(mlir::Operation *op, mlir::FloatAttr min,
                                      mlir::FloatAttr max);
/// embedding's and embedding_backward's padding_idx: in [0, vocab).
llvm::LogicalResult verifyPaddingIdx(mlir::Operation *op,
                                     std::optional<int64_t> paddingIdx,
                                     int64_t vocab);

} // namespace detail

namespace OpTrait {

/// Verifies an op's result types against the ones its shape rules infer,
/// emitting a single diagnostic that states the expected shape. Attached to
/// every op with inferred result types (MemOptBase.td).
template <typename ConcreteType>
class VerifyInferredResultTypes
    : public mlir::OpTrait::TraitBase<ConcreteType, VerifyInferredResultTypes> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    llvm::SmallVector<mlir::Type, 3> inferred;
    if (mlir::failed(ConcreteType::inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), inferred)))
      return mlir::failure();
    return detail::checkInferredResultTypes(op->getLoc(),
                                            ConcreteType::getOperationName(),
                                            inferred, op->getResultTypes());
  }
};

/// Refuses NaN and infinite float attributes (MemOptBase.td); attached to
/// every memopt op.
template <typename ConcreteType>
class FiniteFloatAttributes
    : public mlir::OpTrait::TraitBase<ConcreteType, FiniteFloatAttributes> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    return detail::verifyFiniteFloatAttributes(op);
  }
};

} // namespace OpTrait

/// Formats a shape as MLIR writes it in a tensor type: `8x64x16x16`, and
/// `scalar` for rank 0.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// The autocast class of an op (PrecisionOpInterface): compute in the low
/// precision, in f32, or in the widest type of the inputs.
enum class PrecisionClass { Allow, Deny, Follow };

/// Indices of `op`'s operands of float tensor type: the default precision
/// operands.
llvm::SmallVector<unsigned> floatOperandIndices(mlir::Operation *op);

/// Broadcasts two shapes with NumPy's rules; std::nullopt when they do not
/// broadcast.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

} // namespace memopt

#include "memopt/Dialect/MemOpt/IR/MemOptInterfaces.h.inc"

#define GET_OP_CLASSES
#include "memopt/Dialect/MemOpt/IR/MemOptOps.h.inc"

namespace memopt {

/// The workspace bytes `op`'s kernel reserves: its WorkspaceOpInterface
/// count under the enclosing function's `memopt.workspace_limit`, 0 for ops
/// without the interface.
int64_t getWorkspaceBytes(mlir::Operation *op);

/// Whether `op` is a collective across ranks (memopt.all_reduce,
/// memopt.reduce_scatter, memopt.broadcast, memopt.all_gather): every rank
/// must issue it, in the same order as the others.
bool isCollective(mlir::Operation *op);

/// Rank `rank`'s rows of `type` (a ranked tensor of at least `ranks` rows)
/// divided among `ranks` ranks by rows (CollectiveShapes.h).
mlir::RankedTensorType rowSliceType(mlir::Type type, int64_t ranks,
                                    int64_t rank);

} // namespace memopt

#endif // MEMOPT_DIALECT_MEMOPT_IR_MEMOPTOPS_H
