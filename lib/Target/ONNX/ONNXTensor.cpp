//===- ONNXTensor.cpp - ONNX tensors as bytes and constants ---------------===//
//
// ONNX stores a tensor's values either as little-endian `raw_data` or in a
// typed repeated field (float_data, int32_data holding 16-bit floats and
// small integers, int64_data, double_data). Both become the same bytes here.
//
//===----------------------------------------------------------------------===//

#include "ONNXTensor.h"

#include "memopt/runtime/Half.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace memopt;
using namespace memopt::onnx_import;
using TP = onnx::TensorProto;

bool ConstTensor::isFloatType(int32_t dataType) {
  return dataType == TP::FLOAT || dataType == TP::DOUBLE ||
         dataType == TP::FLOAT16 || dataType == TP::BFLOAT16;
}

int64_t ConstTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double ConstTensor::at(int64_t i) const {
  return isFloat() ? floats[i] : static_cast<double>(ints[i]);
}

std::vector<int64_t> ConstTensor::asInts() const {
  if (!isFloat())
    return ints;
  std::vector<int64_t> out;
  for (double f : floats)
    out.push_back(static_cast<int64_t>(f));
  return out;
}

std::string onnx_import::dataTypeName(int32_t dataType) {
  if (TP::DataType_IsValid(dataType))
    return TP::DataType_Name(static_cast<TP::DataType>(dataType));
  return "type " + std::to_string(dataType);
}

Type onnx_import::elementType(MLIRContext *ctx, int32_t dataType) {
  switch (dataType) {
  case TP::FLOAT:
    return Float32Type::get(ctx);
  case TP::DOUBLE:
    return Float64Type::get(ctx);
  case TP::FLOAT16:
    return Float16Type::get(ctx);
  case TP::BFLOAT16:
    return BFloat16Type::get(ctx);
  case TP::INT64:
    return IntegerType::get(ctx, 64);
  case TP::INT32:
    return IntegerType::get(ctx, 32);
  default:
    return {};
  }
}

std::optional<int32_t> onnx_import::onnxDataType(Type type) {
  if (!type)
    return std::nullopt;
  if (type.isF32())
    return TP::FLOAT;
  if (type.isF64())
    return TP::DOUBLE;
  if (type.isF16())
    return TP::FLOAT16;
  if (type.isBF16())
    return TP::BFLOAT16;
  if (type.isInteger(64))
    return TP::INT64;
  if (type.isInteger(32))
    return TP::INT32;
  return std::nullopt;
}

std::optional<runtime::DType> onnx_import::runtimeDType(int32_t dataType) {
  switch (dataType) {
  case TP::FLOAT:
    return runtime::DType::F32;
  case TP::DOUBLE:
    return runtime::DType::F64;
  case TP::FLOAT16:
    return runtime::DType::F16;
  case TP::BFLOAT16:
    return runtime::DType::BF16;
  case TP::INT64:
    return runtime::DType::I64;
  case TP::INT32:
    return runtime::DType::I32;
  default:
    return std::nullopt;
  }
}

/// Bytes per element of the data types the importer reads.
static int64_t elementBytes(int32_t dataType) {
  switch (dataType) {
  case TP::FLOAT:
  case TP::INT32:
    return 4;
  case TP::DOUBLE:
  case TP::INT64:
    return 8;
  case TP::FLOAT16:
  case TP::BFLOAT16:
  case TP::INT16:
  case TP::UINT16:
    return 2;
  case TP::INT8:
  case TP::UINT8:
  case TP::BOOL:
    return 1;
  default:
    return 0;
  }
}

/// A non-negative decimal integer, or nullopt.
static std::optional<uint64_t> parseCount(const std::string &s) {
  if (s.empty() || s.size() > 19 ||
      !llvm::all_of(s, [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoull(s);
}

std::optional<std::string>
onnx_import::loadExternalData(onnx::TensorProto &tensor,
                              const std::string &dir) {
  std::string location;
  std::optional<uint64_t> offset = 0, length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" && !(offset = parseCount(entry.value())))
      return "its external data offset '" + entry.value() +
             "' is not a byte count";
    else if (entry.key() == "length" && !(length = parseCount(entry.value())))
      return "its external data length '" + entry.value() +
             "' is not a byte count";
  }
  if (location.empty())
    return std::string("its external data has no location");
  // As onnx.checker: relative to the model, never outside its directory.
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(location).split(parts, '/');
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(parts, [](llvm::StringRef p) { return p == ".."; }) ||
      location.find('\\') != std::string::npos)
    return "its external data location '" + location +
           "' is not a path inside the model's directory";
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, location);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return "cannot read its external data '" + std::string(path) +
           "': " + file.getError().message();
  const uint64_t size = (*file)->getBufferSize();
  const uint64_t bytes = length ? *length : size - std::min(*offset, size);
  if (*offset > size || bytes > size - *offset)
    return "its external data (" + std::to_string(bytes) + " bytes at " +
           std::to_string(*offset) + ") runs past the end of '" +
           std::string(path) + "' (" + std::to_string(size) + " bytes)";
  tensor.set_raw_data((*file)->getBufferStart() + *offset, bytes);
  tensor.clear_external_data();
  tensor.set_data_location(TP::DEFAULT);
  return std::nullopt;
}

template <typename T> static void append(std::vector<uint8_t> &out, T value) {
  uint8_t buffer[sizeof(T)];
  std::memcpy(buffer, &value, sizeof(T));
  out.insert(out.end(), buffer, buffer + sizeof(T));
}

std::optional<std::string>
onnx_import::decodeTensor(const onnx::TensorProto &tensor, DecodedTensor &out) {
  out.dataType = tensor.data_type();
  if (tensor.data_location() == TP::EXTERNAL)
    return std::string("its data is stored outside the model (external "
                       "data), which is read only for initializers of a "
                       "model read from a file");
  if (tensor.has_segment())
    return std::string("segmented tensors are not supported");
  int64_t size = elementBytes(out.dataType);
  if (size == 0)
    return "data type " + dataTypeName(out.dataType) + " is not supported";
  out.shape.assign(tensor.dims().begin(), tensor.dims().end());
  int64_t count = 1;
  for (int64_t d : out.shape) {
    if (d < 0 || (d > 0 && count > (int64_t(1) << 40) / d))
      return std::string("its shape is negative or too large");
    count *= d;
  }
  out.bytes.clear();
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (static_cast<int64_t>(raw.size()) != count * size)
      return "raw_data holds " + std::to_string(raw.size()) +
             " bytes but its shape and type need " +
             std::to_string(count * size);
    out.bytes.assign(raw.begin(), raw.end());
    return std::nullopt;
  }
  auto mismatch = [&](int64_t have) {
    return "it holds " + std::to_string(have) + " values but its shape has " +
           std::to_string(count) + " elements";
  };
  out.bytes.reserve(count * size);
  switch (out.dataType) {
  case TP::FLOAT:
    if (tensor.float_data_size() != count)
      return mismatch(tensor.float_data_size());
    for (float f : tensor.float_data())
      append(out.bytes, f);
    break;
  case TP::DOUBLE:
    if (tensor.double_data_size() != count)
      return mismatch(tensor.double_data_size());
    for (double f : tensor.double_data())
      append(out.bytes, f);
    break;
  case TP::INT64:
    if (tensor.int64_data_size() != count)
      return mismatch(tensor.int64_data_size());
    for (int64_t v : tensor.int64_data())
      append(out.bytes, v);
    break;
  default:
    // int32_data holds INT32 and every narrower type, one value each.
    if (tensor.int32_data_size() != count)
      return mismatch(tensor.int32_data_size());
    for (int32_t v : tensor.int32_data()) {
      if (size == 4)
        append(out.bytes, v);
      else if (size == 2)
        append(out.bytes, static_cast<uint16_t>(v));
      else
        append(out.bytes, static_cast<uint8_t>(v));
    }
    break;
  }
  return std::nullopt;
}

template <typename T> static T load(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

std::optional<ConstTensor> onnx_import::toConst(const DecodedTensor &tensor) {
  ConstTensor c;
  c.dataType = tensor.dataType;
  c.shape = tensor.shape;
  int64_t size = elementBytes(tensor.dataType);
  if (size == 0)
    return std::nullopt;
  int64_t n = static_cast<int64_t>(tensor.bytes.size()) / size;
  const uint8_t *p = tensor.bytes.data();
  for (int64_t i = 0; i < n; ++i, p += size) {
    switch (tensor.dataType) {
    case TP::FLOAT:
      c.floats.push_back(load<float>(p));
      break;
    case TP::DOUBLE:
      c.floats.push_back(load<double>(p));
      break;
    case TP::FLOAT16:
      c.floats.push_back(runtime::halfBitsToFloat(load<uint16_t>(p)));
      break;
    case TP::BFLOAT16:
      c.floats.push_back(runtime::bfloat16BitsToFloat(load<uint16_t>(p)));
      break;
    case TP::INT64:
      c.ints.push_back(load<int64_t>(p));
      break;
    case TP::INT32:
      c.ints.push_back(load<int32_t>(p));
      break;
    case TP::INT16:
      c.ints.push_back(load<int16_t>(p));
      break;
    case TP::UINT16:
      c.ints.push_back(load<uint16_t>(p));
      break;
    case TP::INT8:
      c.ints.push_back(load<int8_t>(p));
      break;
    case TP::UINT8:
    case TP::BOOL:
      c.ints.push_back(load<uint8_t>(p));
      break;
    default:
      return std::nullopt;
    }
  }
  return c;
}

DenseElementsAttr onnx_import::toAttr(const ConstTensor &value,
                                      RankedTensorType type) {
  Type element = type.getElementType();
  int64_t n = type.getNumElements();
  // A one-element value broadcasts to the whole type.
  auto index = [&](int64_t i) { return value.numElements() == 1 ? 0 : i; };
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < n; ++i) {
      APFloat f(value.at(index(i)));
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(APInt(
        width,
        static_cast<uint64_t>(value.isFloat()
                                  ? static_cast<int64_t>(value.at(index(i)))
                                  : value.ints[index(i)]),
        /*isSigned=*/true, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

bool onnx_import::allFinite(const DecodedTensor &tensor) {
  std::optional<ConstTensor> c = toConst(tensor);
  if (!c || !c->isFloat())
    return true;
  return llvm::all_of(c->floats, [](double f) { return std::isfinite(f); });
}
