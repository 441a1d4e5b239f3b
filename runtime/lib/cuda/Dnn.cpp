//===- Dnn.cpp - helpers of the cuDNN and cuBLAS kernels ------------------===//
//
// The kernels that run on cuDNN and cuBLAS, by what they compute:
// convolutions (DnnConv.cpp), batch norm (DnnBatchNorm.cpp), and linear and
// matmul GEMMs (DnnGemm.cpp). This file defines the helpers they share
// (DnnCommon.h).
//
// Pooling lives in Pool.cu (its own kernels, not cuDNN).
//
//===----------------------------------------------------------------------===//

#include "DnnCommon.h"

#include <climits>

namespace memopt::runtime::cuda {

/// `v` as a cuDNN/cuBLAS int; larger tensors are refused.
int toInt(int64_t v, const char *what) {
  if (v < 0 || v > INT_MAX)
    throw Error(
        ErrorCode::KernelFailure,
        runtime::concat(what, " (", v,
                        ") exceeds the 32-bit range of cuDNN and cuBLAS"));
  return static_cast<int>(v);
}

cudnnDataType_t cudnnType(DType t) {
  switch (t) {
  case DType::F32:
    return CUDNN_DATA_FLOAT;
  case DType::F64:
    return CUDNN_DATA_DOUBLE;
  case DType::F16:
    return CUDNN_DATA_HALF;
  case DType::BF16:
    return CUDNN_DATA_BFLOAT16;
  default:
    break;
  }
  throw Error(ErrorCode::Internal,
              runtime::concat("cuDNN called with dtype ", dtypeName(t)));
}

cublasComputeType_t gemmCompute(DType ab, const CudaContext &cuda) {
  if (ab == DType::F64)
    return CUBLAS_COMPUTE_64F;
  return ab == DType::F32 && cuda.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                       : CUBLAS_COMPUTE_32F;
}

cudaDataType_t cudaType(DType t) {
  switch (t) {
  case DType::F32:
    return CUDA_R_32F;
  case DType::F64:
    return CUDA_R_64F;
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  default:
    break;
  }
  throw Error(ErrorCode::Internal,
              runtime::concat("cuBLAS called with dtype ", dtypeName(t)));
}

const Scale kOne(1.0), kZero(0.0);

} // namespace memopt::runtime::cuda
