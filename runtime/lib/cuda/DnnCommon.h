//===- DnnCommon.h - what the cuDNN/cuBLAS kernels share --------*- C++ -*-===//
//
// Internal to the CUDA backend's Dnn*.cpp: int conversion with a range
// check, cuDNN's dtypes and scaling factors, and the RAII tensor descriptor
// that convolution and batch norm use. Defined in Dnn.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_CUDA_DNNCOMMON_H
#define MEMOPT_RUNTIME_LIB_CUDA_DNNCOMMON_H

#include "CudaKernels.h"

#include <cstdint>

namespace memopt::runtime::cuda {

/// `v` as a cuDNN/cuBLAS int; larger tensors are refused.
int toInt(int64_t v, const char *what);

/// The cuDNN data type of a float dtype (an Internal error for others).
cudnnDataType_t cudnnType(DType t);

/// The cuBLAS (CUDA) data type of a float dtype (an Internal error for
/// others).
cudaDataType_t cudaType(DType t);

/// cuBLAS's compute type for GEMMs with `ab` operands: f64, or f32
/// accumulation (TF32 tensor cores for f32 operands where `cuda.tf32`).
cublasComputeType_t gemmCompute(DType ab, const CudaContext &cuda);

/// cuDNN's scaling factors: double for f64 tensors, float otherwise.
struct Scale {
  float f;
  double d;
  explicit Scale(double v) : f(static_cast<float>(v)), d(v) {}
  const void *forType(DType t) const {
    return t == DType::F64 ? static_cast<const void *>(&d)
                           : static_cast<const void *>(&f);
  }
};

/// 1 and 0 as cuDNN's and cuBLAS's alpha and beta.
extern const Scale kOne, kZero;

class TensorDesc {
public:
  TensorDesc() {
    check(cudnnCreateTensorDescriptor(&desc), "cudnnCreateTensorDescriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(desc); }
  TensorDesc(const TensorDesc &) = delete;
  TensorDesc &operator=(const TensorDesc &) = delete;

  /// An NCHW tensor of `dtype`.
  void set(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
    toInt(n * c * h * w, "tensor size");
    check(cudnnSetTensor4dDescriptor(
              desc, CUDNN_TENSOR_NCHW, cudnnType(dtype), toInt(n, "dimension"),
              toInt(c, "dimension"), toInt(h, "dimension"),
              toInt(w, "dimension")),
          "cudnnSetTensor4dDescriptor");
  }
  /// A rank-4 tensor as it is.
  void set(const TensorRef &t) {
    set(t.dtype, t.dim(0), t.dim(1), t.dim(2), t.dim(3));
  }
  operator cudnnTensorDescriptor_t() const { return desc; }

private:
  cudnnTensorDescriptor_t desc = nullptr;
};

} // namespace memopt::runtime::cuda

#endif // MEMOPT_RUNTIME_LIB_CUDA_DNNCOMMON_H
