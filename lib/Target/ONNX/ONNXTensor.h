//===- ONNXTensor.h - ONNX tensors as bytes and constants -------*- C++ -*-===//
//
// Decodes an ONNX TensorProto (raw_data or the typed fields) into one
// canonical form, little-endian bytes of the element type, from which the
// importer takes weights (as bytes) and constants (as numbers it folds).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_LIB_TARGET_ONNX_ONNXTENSOR_H
#define MEMOPT_LIB_TARGET_ONNX_ONNXTENSOR_H

#include "memopt/runtime/DType.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memopt::onnx_import {

/// A tensor whose value the importer knows: an initializer, a Constant
/// node's value or a folded shape computation. Integers (and booleans) are
/// kept as int64, floats as double (every f32/f16/bf16 value exactly).
struct ConstTensor {
  int32_t dataType = 0; // onnx::TensorProto_DataType
  std::vector<int64_t> shape;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool isFloat() const { return isFloatType(dataType); }
  static bool isFloatType(int32_t dataType);
  int64_t numElements() const;
  /// Element `i` as a double (ints converted).
  double at(int64_t i) const;
  /// The values as int64 (floats truncated toward zero).
  std::vector<int64_t> asInts() const;
};

/// The ONNX data type's name (`FLOAT`, `INT64`, ...).
std::string dataTypeName(int32_t dataType);

/// The MLIR element type of an ONNX data type memopt computes in (f32,
/// f16, bf16, f64, i64, i32), or null.
mlir::Type elementType(mlir::MLIRContext *ctx, int32_t dataType);

/// The ONNX data type of an MLIR element type elementType() returns.
std::optional<int32_t> onnxDataType(mlir::Type type);

/// The runtime dtype of an ONNX data type memopt stores, or nullopt.
std::optional<runtime::DType> runtimeDType(int32_t dataType);

/// A decoded tensor: its type, shape and little-endian bytes.
struct DecodedTensor {
  int32_t dataType = 0;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// Decodes `tensor`; on failure returns a message saying what is wrong
/// (external data, a size that does not match the shape, ...).
std::optional<std::string> decodeTensor(const onnx::TensorProto &tensor,
                                        DecodedTensor &out);

/// Reads the data of `tensor`, stored as ONNX external data (`location`
/// relative to `dir`, optional `offset` and `length`), into its raw_data
/// and marks it stored in the model. On failure returns a message: a
/// location that is absolute or leaves `dir`, a file that cannot be read,
/// bytes past its end.
std::optional<std::string> loadExternalData(onnx::TensorProto &tensor,
                                            const std::string &dir);

/// The value of a decoded tensor, for folding. Fails (nullopt) on a data
/// type the importer does not fold.
std::optional<ConstTensor> toConst(const DecodedTensor &tensor);

/// `value` as an MLIR constant attribute of `type` (same number of
/// elements, floats or integers as `type` says).
mlir::DenseElementsAttr toAttr(const ConstTensor &value,
                               mlir::RankedTensorType type);

/// True if every float of `value` is finite (a trainable weight is).
bool allFinite(const DecodedTensor &tensor);

} // namespace memopt::onnx_import

#endif // MEMOPT_LIB_TARGET_ONNX_ONNXTENSOR_H
