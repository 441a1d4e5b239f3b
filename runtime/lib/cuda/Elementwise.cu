//===- Elementwise.cu - activations, their gradients, binary ops, dropout -===//
//
// The CUDA versions of cpu/Elementwise.cpp, with the same scalar functions
// (ElementwiseMath.h, Dropout.h). Every tensor is read and written in its
// own dtype and computed in the CPU backend's compute type: double when an
// operand is f64, float otherwise (f16/bf16 round once, on the store).
//
// Each thread reads element i of every input before writing element i of
// the output, so every kernel here may run in place (Kernel.h). add, sub,
// mul and div broadcast NumPy-style: an output index is split into
// per-dimension indices and each operand advances by its broadcast strides (0
// where it has size 1 or no dimension).
//
//===----------------------------------------------------------------------===//

#include "Device.cuh"

#include "memopt/runtime/Dropout.h"
#include "memopt/runtime/ElementwiseMath.h"

namespace memopt::runtime::cuda {

namespace {

//===----------------------------------------------------------------------===//
// Compute types
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Forward activations
//===----------------------------------------------------------------------===//

struct ReluOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::relu(v);
  }
};
struct GeluOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::gelu(v);
  }
};
struct SigmoidOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::sigmoid(v);
  }
};
struct TanhOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::tanhForward(v);
  }
};
struct SiluOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::silu(v);
  }
};
struct ExpOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::exp(v);
  }
};
struct LogOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::log(v);
  }
};
struct SqrtOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::sqrt(v);
  }
};
struct AbsOp {
  template <typename T> __device__ T operator()(T v) const {
    return math::fabs(v);
  }
};
template <typename T> struct LeakyReluOp {
  T alpha;
  __device__ T operator()(T v) const { return math::leakyRelu(v, alpha); }
};
template <typename T> struct EluOp {
  T alpha;
  __device__ T operator()(T v) const { return math::elu(v, alpha); }
};

template <typename T> struct ClampOp {
  T lo, hi;
  __device__ T operator()(T v) const { return math::clamp(v, lo, hi); }
};

template <typename T, typename Op>
__global__ void mapKernel(const void *x, void *y, DType dtype, int64_t n,
                          Op op) {
  MEMOPT_GRID_STRIDE(i, n) { storeAs(y, dtype, i, op(loadAs<T>(x, dtype, i))); }
}

template <typename T, typename Op>
void launchMap(const KernelCall &call, Op op, const char *name) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const int64_t n = y.numElements;
  mapKernel<T><<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(x.data, y.data,
                                                                y.dtype, n, op);
  checkLaunch(name);
}

template <typename T> void unaryImpl(const KernelCall &call) {
  switch (call.step.kernel) {
  case KernelKind::Relu:
    return launchMap<T>(call, ReluOp{}, "relu");
  case KernelKind::Gelu:
    return launchMap<T>(call, GeluOp{}, "gelu");
  case KernelKind::Sigmoid:
    return launchMap<T>(call, SigmoidOp{}, "sigmoid");
  case KernelKind::Tanh:
    return launchMap<T>(call, TanhOp{}, "tanh");
  case KernelKind::Silu:
    return launchMap<T>(call, SiluOp{}, "silu");
  case KernelKind::Exp:
    return launchMap<T>(call, ExpOp{}, "exp");
  case KernelKind::Log:
    return launchMap<T>(call, LogOp{}, "log");
  case KernelKind::Sqrt:
    return launchMap<T>(call, SqrtOp{}, "sqrt");
  case KernelKind::Abs:
    return launchMap<T>(call, AbsOp{}, "abs");
  case KernelKind::LeakyRelu:
    return launchMap<T>(
        call, LeakyReluOp<T>{static_cast<T>(call.step.get<AlphaAttrs>().alpha)},
        "leaky_relu");
  case KernelKind::Elu:
    return launchMap<T>(
        call, EluOp<T>{static_cast<T>(call.step.get<AlphaAttrs>().alpha)},
        "elu");
  case KernelKind::Clamp: {
    const ClampAttrs &a = call.step.get<ClampAttrs>();
    return launchMap<T>(
        call, ClampOp<T>{static_cast<T>(a.min), static_cast<T>(a.max)},
        "clamp");
  }
  default:
    throw Error(ErrorCode::Internal, "unary kernel called for another kernel");
  }
}

//===----------------------------------------------------------------------===//
// add, sub, mul and div with broadcasting
//===----------------------------------------------------------------------===//

struct AddOp {
  template <typename T> __device__ T operator()(T u, T v) const {
    return u + v;
  }
};
struct SubOp {
  template <typename T> __device__ T operator()(T u, T v) const {
    return u - v;
  }
};
struct MulOp {
  template <typename T> __device__ T operator()(T u, T v) const {
    return u * v;
  }
};
struct DivOp {
  template <typename T> __device__ T operator()(T u, T v) const {
    return u / v;
  }
};
struct MaximumOp {
  template <typename T> __device__ T operator()(T u, T v) const {
    return math::maximum(u, v);
  }
};
struct MinimumOp {
  template <typename T> __device__ T operator()(T u, T v) const {
    return math::minimum(u, v);
  }
};
struct MaximumWeightOp {
  template <typename T> __device__ T operator()(T u, T v) const {
    return math::maximumWeight(u, v);
  }
};

/// How the operands of a binary op line up with the output.
enum class BroadcastMode {
  /// Both have the output's element count: element i of each.
  Same,
  /// b is a single element.
  ScalarB,
  /// a is a single element.
  ScalarA,
  /// General broadcasting through the strides.
  Strided,
};

/// The output's dimensions and each operand's broadcast strides.
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[2][kMaxRank] = {};
};

/// The element strides of `t` aligned to the trailing dimensions of a
/// broadcast result of rank `rank` (cpu/Indexing.h's broadcastStrides).
void broadcastStrides(const DeviceTensor &t, int rank, int64_t *strides) {
  int64_t own = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    const int d = rank - t.rank + i;
    strides[d] = t.dims[i] == 1 ? 0 : own;
    own *= t.dims[i];
  }
}

template <typename T, typename Op>
__global__ void binaryKernel(const void *a, const void *b, void *y, DType dtype,
                             int64_t n, BroadcastMode mode, Broadcast shape,
                             Op op) {
  MEMOPT_GRID_STRIDE(i, n) {
    int64_t ia = i, ib = i;
    if (mode == BroadcastMode::ScalarB) {
      ib = 0;
    } else if (mode == BroadcastMode::ScalarA) {
      ia = 0;
    } else if (mode == BroadcastMode::Strided) {
      ia = 0;
      ib = 0;
      int64_t rest = i;
      for (int d = shape.rank - 1; d >= 0; --d) {
        const int64_t index = rest % shape.dims[d];
        rest /= shape.dims[d];
        ia += index * shape.strides[0][d];
        ib += index * shape.strides[1][d];
      }
    }
    const T u = loadAs<T>(a, dtype, ia), v = loadAs<T>(b, dtype, ib);
    storeAs(y, dtype, i, op(u, v));
  }
}

template <typename T, typename Op>
void launchBinary(const KernelCall &call, Op op, const char *name) {
  const TensorRef &a = call.in(0), &b = call.in(1), &y = call.out(0);
  const int64_t n = y.numElements;
  BroadcastMode mode = BroadcastMode::Strided;
  Broadcast shape;
  if (a.numElements == n && b.numElements == n) {
    mode = BroadcastMode::Same;
  } else if (a.numElements == n && b.numElements == 1) {
    mode = BroadcastMode::ScalarB;
  } else if (a.numElements == 1 && b.numElements == n) {
    mode = BroadcastMode::ScalarA;
  } else {
    const DeviceTensor out = deviceTensor(y);
    shape.rank = out.rank;
    for (int d = 0; d < out.rank; ++d)
      shape.dims[d] = out.dims[d];
    broadcastStrides(deviceTensor(a), out.rank, shape.strides[0]);
    broadcastStrides(deviceTensor(b), out.rank, shape.strides[1]);
  }
  binaryKernel<T><<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(
      a.data, b.data, y.data, y.dtype, n, mode, shape, op);
  checkLaunch(name);
}

template <typename T> void binaryImpl(const KernelCall &call) {
  switch (call.step.kernel) {
  case KernelKind::Add:
    return launchBinary<T>(call, AddOp{}, "add");
  case KernelKind::Sub:
    return launchBinary<T>(call, SubOp{}, "sub");
  case KernelKind::Mul:
    return launchBinary<T>(call, MulOp{}, "mul");
  case KernelKind::Div:
    return launchBinary<T>(call, DivOp{}, "div");
  case KernelKind::Maximum:
    return launchBinary<T>(call, MaximumOp{}, "maximum");
  case KernelKind::Minimum:
    return launchBinary<T>(call, MinimumOp{}, "minimum");
  case KernelKind::MaximumWeight:
    return launchBinary<T>(call, MaximumWeightOp{}, "maximum_weight");
  default:
    throw Error(ErrorCode::Internal, "binary kernel called for another kernel");
  }
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// Element i keeps element first + i of the mask (on rank r of a
/// data-parallel job first = r·n: its rows of the global batch's mask, as
/// on the CPU).
template <typename T>
__global__ void dropoutKernel(const void *x, void *y, DType dtype, int64_t n,
                              uint64_t key, uint32_t threshold, T scale,
                              uint64_t first) {
  MEMOPT_GRID_STRIDE(i, n) {
    const T v = loadAs<T>(x, dtype, i);
    storeAs(y, dtype, i,
            dropout::keep(key, first + static_cast<uint64_t>(i), threshold)
                ? v * scale
                : T(0));
  }
}

template <typename T> void dropoutImpl(const KernelCall &call) {
  const DropoutAttrs &attrs = call.step.get<DropoutAttrs>();
  const uint64_t key = dropout::streamKey(attrs.seed, call.context.stepCounter);
  const uint32_t threshold = dropout::threshold(attrs.p);
  const T scale = dropout::scale<T>(attrs.p);
  const TensorRef &x = call.in(0), &y = call.out(0);
  const int64_t n = y.numElements;
  dropoutKernel<T><<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(
      x.data, y.data, y.dtype, n, key, threshold, scale,
      call.context.rank * static_cast<uint64_t>(n));
  checkLaunch("dropout");
}

//===----------------------------------------------------------------------===//
// Activation backward
//===----------------------------------------------------------------------===//
// grad * f'(saved). Where the derivative is a 0/1 or 1/alpha switch the
// gradient is selected rather than multiplied, as PyTorch does (so a NaN
// gradient does not leak through relu's zero).

struct ReluBackwardOp {
  template <typename T> __device__ T operator()(T dy, T out) const {
    return out > T(0) ? dy : T(0);
  }
};
struct GeluBackwardOp {
  template <typename T> __device__ T operator()(T dy, T x) const {
    return dy * math::geluGrad(x);
  }
};
struct SigmoidBackwardOp {
  template <typename T> __device__ T operator()(T dy, T out) const {
    return dy * math::sigmoidGradFromOutput(out);
  }
};
struct TanhBackwardOp {
  template <typename T> __device__ T operator()(T dy, T out) const {
    return dy * math::tanhGradFromOutput(out);
  }
};
struct SiluBackwardOp {
  template <typename T> __device__ T operator()(T dy, T x) const {
    return math::siluGrad(dy, x);
  }
};
struct ExpBackwardOp {
  template <typename T> __device__ T operator()(T dy, T out) const {
    return math::expGradFromOutput(dy, out);
  }
};
struct LogBackwardOp {
  template <typename T> __device__ T operator()(T dy, T x) const {
    return math::logGrad(dy, x);
  }
};
struct SqrtBackwardOp {
  template <typename T> __device__ T operator()(T dy, T out) const {
    return math::sqrtGradFromOutput(dy, out);
  }
};
struct AbsBackwardOp {
  template <typename T> __device__ T operator()(T dy, T x) const {
    return math::absGrad(dy, x);
  }
};
/// The sign test is the same from the input and from the output.
template <typename T> struct LeakyReluBackwardOp {
  T alpha;
  __device__ T operator()(T dy, T v) const {
    return v > T(0) ? dy : dy * alpha;
  }
};
template <typename T> struct EluBackwardFromOutputOp {
  T alpha;
  __device__ T operator()(T dy, T out) const {
    return out > T(0) ? dy : dy * math::eluGradFromOutput(out, alpha);
  }
};
template <typename T> struct EluBackwardOp {
  T alpha;
  __device__ T operator()(T dy, T x) const {
    return x > T(0) ? dy : dy * math::eluGrad(x, alpha);
  }
};

template <typename T> struct ClampBackwardOp {
  T lo, hi;
  __device__ T operator()(T dy, T v) const {
    return math::clampBackward(dy, v, lo, hi);
  }
};

template <typename T, typename Op>
__global__ void map2Kernel(const void *g, const void *s, void *y, DType dtype,
                           int64_t n, Op op) {
  MEMOPT_GRID_STRIDE(i, n) {
    const T dy = loadAs<T>(g, dtype, i), saved = loadAs<T>(s, dtype, i);
    storeAs(y, dtype, i, op(dy, saved));
  }
}

template <typename T, typename Op>
void launchMap2(const KernelCall &call, Op op, const char *name) {
  const TensorRef &g = call.in(0), &s = call.in(1), &y = call.out(0);
  const int64_t n = y.numElements;
  map2Kernel<T><<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(
      g.data, s.data, y.data, y.dtype, n, op);
  checkLaunch(name);
}

template <typename T> void activationBackwardImpl(const KernelCall &call) {
  switch (call.step.kernel) {
  case KernelKind::ReluBackward:
    return launchMap2<T>(call, ReluBackwardOp{}, "relu_backward");
  case KernelKind::GeluBackward:
    return launchMap2<T>(call, GeluBackwardOp{}, "gelu_backward");
  case KernelKind::SigmoidBackward:
    return launchMap2<T>(call, SigmoidBackwardOp{}, "sigmoid_backward");
  case KernelKind::TanhBackward:
    return launchMap2<T>(call, TanhBackwardOp{}, "tanh_backward");
  case KernelKind::SiluBackward:
    return launchMap2<T>(call, SiluBackwardOp{}, "silu_backward");
  case KernelKind::ExpBackward:
    return launchMap2<T>(call, ExpBackwardOp{}, "exp_backward");
  case KernelKind::LogBackward:
    return launchMap2<T>(call, LogBackwardOp{}, "log_backward");
  case KernelKind::SqrtBackward:
    return launchMap2<T>(call, SqrtBackwardOp{}, "sqrt_backward");
  case KernelKind::AbsBackward:
    return launchMap2<T>(call, AbsBackwardOp{}, "abs_backward");
  case KernelKind::LeakyReluBackward: {
    const T alpha =
        static_cast<T>(call.step.get<ActivationBackwardAttrs>().alpha);
    return launchMap2<T>(call, LeakyReluBackwardOp<T>{alpha},
                         "leaky_relu_backward");
  }
  case KernelKind::EluBackward: {
    const ActivationBackwardAttrs &a = call.step.get<ActivationBackwardAttrs>();
    const T alpha = static_cast<T>(a.alpha);
    if (a.fromOutput)
      return launchMap2<T>(call, EluBackwardFromOutputOp<T>{alpha},
                           "elu_backward");
    return launchMap2<T>(call, EluBackwardOp<T>{alpha}, "elu_backward");
  }
  case KernelKind::ClampBackward: {
    const ClampAttrs &a = call.step.get<ClampAttrs>();
    return launchMap2<T>(
        call, ClampBackwardOp<T>{static_cast<T>(a.min), static_cast<T>(a.max)},
        "clamp_backward");
  }
  default:
    throw Error(ErrorCode::Internal,
                "activation backward kernel called for another kernel");
  }
}

/// compare: any float or index dtype in, f32 0/1 out.
__global__ void compareKernel(const void *x, DType dtype, float *y, int64_t n,
                              ComparePredicate p, double v) {
  MEMOPT_GRID_STRIDE(i, n) {
    y[i] = math::compare(loadDouble(x, dtype, i), p, v);
  }
}

} // namespace

void compare(const KernelCall &call) {
  const TensorRef &x = call.in(0), &y = call.out(0);
  const CompareAttrs &a = call.step.get<CompareAttrs>();
  const int64_t n = y.numElements;
  compareKernel<<<blocksFor(n), kThreads, 0, call.cuda.stream>>>(
      x.data, x.dtype, static_cast<float *>(y.data), n, a.predicate, a.value);
  checkLaunch("compare");
}

void unary(const KernelCall &call) {
  dispatchCompute(call, [&](auto tag) { unaryImpl<decltype(tag)>(call); });
}

void binary(const KernelCall &call) {
  dispatchCompute(call, [&](auto tag) { binaryImpl<decltype(tag)>(call); });
}

void activationBackward(const KernelCall &call) {
  dispatchCompute(
      call, [&](auto tag) { activationBackwardImpl<decltype(tag)>(call); });
}

void dropout(const KernelCall &call) {
  dispatchCompute(call, [&](auto tag) { dropoutImpl<decltype(tag)>(call); });
}

} // namespace memopt::runtime::cuda
