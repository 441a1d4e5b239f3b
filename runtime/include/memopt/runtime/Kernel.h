//===- Kernel.h - the kernels a plan may call -------------------*- C++ -*-===//
//
// A plan step names a kernel by the memopt op name without the dialect
// prefix. This header is the runtime's vocabulary: the kernel kinds and, for
// each kind with attributes, a typed attribute record. The plan loader
// parses and validates a step's `attrs` into these records (filling in the
// dialect's defaults and normalising negative axes), so backends read typed,
// checked values and never JSON.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_KERNEL_H
#define MEMOPT_RUNTIME_KERNEL_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace memopt::runtime {

enum class KernelKind {
  Conv2D,
  Linear,
  MatMul,
  Relu,
  Gelu,
  Sigmoid,
  Tanh,
  LeakyRelu,
  Elu,
  Add,
  Mul,
  BatchNorm,
  LayerNorm,
  MaxPool2D,
  AvgPool2D,
  GlobalAvgPool2D,
  Softmax,
  Dropout,
  Reshape,
  Transpose,
  Slice,
  Concat,
  UpsampleNearest2D,
  Embedding,
  CrossEntropy,
  MseLoss,
};

/// The plan-file name (`conv2d`, `batch_norm`, ...).
std::string_view kernelName(KernelKind kind);

/// The kernel of a plan-file name, std::nullopt for an unknown one.
std::optional<KernelKind> lookupKernel(std::string_view name);

/// Every kernel kind, in declaration order.
const std::vector<KernelKind> &allKernelKinds();

//===----------------------------------------------------------------------===//
// Typed attributes
//===----------------------------------------------------------------------===//

struct Conv2DAttrs {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilations{1, 1};
  int64_t groups = 1;
};

struct MatMulAttrs {
  bool transposeA = false;
  bool transposeB = false;
};

/// leaky_relu (default 0.01) and elu (default 1.0).
struct AlphaAttrs {
  double alpha = 0;
};

struct BatchNormAttrs {
  double epsilon = 1e-5;
  double momentum = 0.1;
};

struct LayerNormAttrs {
  double epsilon = 1e-5;
};

/// max_pool2d and avg_pool2d; `strides` already defaulted to `kernelSize`.
struct Pool2DAttrs {
  std::array<int64_t, 2> kernelSize{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> padding{0, 0};
};

/// `axis` is normalised into [0, rank).
struct SoftmaxAttrs {
  int64_t axis = 0;
  bool causal = false;
};

struct DropoutAttrs {
  double p = 0.5;
  int64_t seed = 0;
};

struct TransposeAttrs {
  std::vector<int64_t> permutation;
};

/// `strides` already defaulted to 1 per dimension.
struct SliceAttrs {
  std::vector<int64_t> offsets;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

/// `axis` is normalised into [0, rank).
struct ConcatAttrs {
  int64_t axis = 0;
};

struct UpsampleAttrs {
  int64_t scale = 1;
};

/// The attributes of one step; std::monostate for kernels without any.
using KernelAttrs =
    std::variant<std::monostate, Conv2DAttrs, MatMulAttrs, AlphaAttrs,
                 BatchNormAttrs, LayerNormAttrs, Pool2DAttrs, SoftmaxAttrs,
                 DropoutAttrs, TransposeAttrs, SliceAttrs, ConcatAttrs,
                 UpsampleAttrs>;

/// Whether output 0 of a kernel may occupy exactly the storage of input
/// `inputIndex` (the output is then a view of that input's tensor, or of
/// the same arena slice). True where each output element depends only on
/// the input element at the same index or on reductions computed before any
/// output is written: the element-wise kernels (either operand of add/mul),
/// dropout, softmax, batch_norm and layer_norm (over x), and reshape, which
/// then copies nothing. Any other overlap of a step's inputs and outputs is
/// refused when the plan is loaded.
bool kernelAllowsInPlace(KernelKind kind, size_t inputIndex);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_KERNEL_H
