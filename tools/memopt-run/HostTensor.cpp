//===- HostTensor.cpp - host-side tensors for memopt-run ------------------===//

#include "HostTensor.h"

#include "memopt/runtime/Element.h"
#include "memopt/runtime/Error.h"

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
  return runtime::readElement(bytes.data() + i * runtime::dtypeSize(dtype),
                              dtype);
}

void HostTensor::set(int64_t i, double value) {
  runtime::writeElement(bytes.data() + i * runtime::dtypeSize(dtype), dtype,
                        value);
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
