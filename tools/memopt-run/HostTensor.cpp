//===- HostTensor.cpp - host-side tensors for memopt-run ------------------===//

#include "HostTensor.h"

#include "memopt/runtime/Error.h"
#include "memopt/runtime/Half.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>

using namespace memopt;
using namespace memopt::run;
using runtime::DType;

HostTensor::HostTensor(DType dtype, runtime::Shape shape)
    : dtype(dtype), shape(std::move(shape)) {
  bytes.assign(runtime::numElements(this->shape) * runtime::dtypeSize(dtype),
               0);
}

int64_t HostTensor::numElements() const { return runtime::numElements(shape); }

double HostTensor::get(int64_t i) const {
  const uint8_t *p = bytes.data() + i * runtime::dtypeSize(dtype);
  switch (dtype) {
  case DType::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case DType::F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return runtime::halfBitsToFloat(v);
  }
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return runtime::bfloat16BitsToFloat(v);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  }
  return 0;
}

void HostTensor::set(int64_t i, double value) {
  uint8_t *p = bytes.data() + i * runtime::dtypeSize(dtype);
  switch (dtype) {
  case DType::F32: {
    float v = static_cast<float>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p, &value, 8);
    return;
  case DType::F16: {
    uint16_t v = runtime::floatToHalfBits(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  case DType::BF16: {
    uint16_t v = runtime::floatToBFloat16Bits(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  case DType::I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::I64: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(p, &v, 8);
    return;
  }
  }
}

void memopt::run::initialize(HostTensor &tensor, const ArgumentInit &init,
                             std::mt19937_64 &rng) {
  using Kind = ArgumentInit::Kind;
  int64_t n = tensor.numElements();
  switch (init.kind) {
  case Kind::Uniform: {
    std::uniform_real_distribution<double> dist(-init.bound, init.bound);
    for (int64_t i = 0; i < n; ++i)
      tensor.set(i, dist(rng));
    return;
  }
  case Kind::Normal:
  case Kind::RandomData: {
    std::normal_distribution<double> dist(
        0.0, init.kind == Kind::Normal ? init.stddev : 1.0);
    for (int64_t i = 0; i < n; ++i)
      tensor.set(i, dist(rng));
    return;
  }
  case Kind::Constant:
    for (int64_t i = 0; i < n; ++i)
      tensor.set(i, init.value);
    return;
  case Kind::RandomIndices: {
    std::uniform_int_distribution<int64_t> dist(0, init.limit - 1);
    for (int64_t i = 0; i < n; ++i)
      tensor.set(i, static_cast<double>(dist(rng)));
    return;
  }
  }
}

std::string memopt::run::summarize(const HostTensor &tensor) {
  std::ostringstream os;
  os << std::setprecision(7);
  std::string type =
      "tensor<" +
      (tensor.shape.empty() ? std::string()
                            : runtime::formatShape(tensor.shape) + "x") +
      std::string(runtime::dtypeName(tensor.dtype)) + ">";
  int64_t n = tensor.numElements();
  if (n == 1 && tensor.shape.empty()) {
    os << type << " = " << tensor.get(0);
    return os.str();
  }
  double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int64_t i = 0; i < n; ++i) {
    double v = tensor.get(i);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  os << type << ": mean " << (n ? sum / n : 0) << ", min " << lo << ", max "
     << hi << ", first [";
  for (int64_t i = 0; i < std::min<int64_t>(n, 4); ++i)
    os << (i ? ", " : "") << tensor.get(i);
  os << (n > 4 ? ", ...]" : "]");
  return os.str();
}

std::vector<uint8_t> memopt::run::takeWeight(
    const runtime::SafetensorsFile &weights, const std::string &name,
    const runtime::TensorInfo &info, const std::string &path) {
  using runtime::concat;
  const runtime::NamedTensor *tensor = weights.find(name);
  if (!tensor)
    throw runtime::Error(
        runtime::ErrorCode::InvalidArgument,
        concat(path, ": no tensor '", name, "' for the argument of that name"));
  if (tensor->dtype != info.dtype || tensor->shape != info.shape)
    throw runtime::Error(runtime::ErrorCode::InvalidArgument,
                         concat(path, ": tensor '", name, "' is ",
                                runtime::safetensorsDTypeName(tensor->dtype),
                                " ", runtime::formatShape(tensor->shape),
                                " but the argument is ",
                                runtime::safetensorsDTypeName(info.dtype), " ",
                                runtime::formatShape(info.shape)));
  return tensor->data;
}
