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

#include "memopt/Contract/ComparePredicate.h"
#include "memopt/Contract/ConvShapes.h"
#include "memopt/Contract/PoolShapes.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace memopt::runtime {

enum class KernelKind {
#define MEMOPT_KERNEL(KIND, NAME) KIND,
#include "memopt/Contract/Kernels.def"
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

/// conv2d, conv2d_backward_input and conv2d_backward_weight.
using Conv2DAttrs = shapes::Conv2DParams;

struct MatMulAttrs {
  bool transposeA = false;
  bool transposeB = false;
};

/// leaky_relu (default 0.01) and elu (default 1.0).
struct AlphaAttrs {
  double alpha = 0;
};

/// clamp and clamp_backward: the bounds, -inf and +inf where the op has
/// none (never NaN; min <= max).
struct ClampAttrs {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
};

/// batch_norm, and batch_norm_inference (which reads only `epsilon`).
struct BatchNormAttrs {
  double epsilon = 1e-5;
  double momentum = 0.1;
};

struct LayerNormAttrs {
  double epsilon = 1e-5;
};

/// max_pool2d and avg_pool2d (`strides` already defaulted to `kernelSize`),
/// and their backward ops.
using Pool2DAttrs = shapes::Pool2DParams;

/// softmax and softmax_backward (never causal, never safe); `axis` is
/// normalised into [0, rank). With `safe`, a row whose every entry is -inf
/// gives probabilities 0 (PyTorch's _safe_softmax, which SDPA uses) instead
/// of NaN.
struct SoftmaxAttrs {
  int64_t axis = 0;
  bool causal = false;
  bool safe = false;
};

struct DropoutAttrs {
  double p = 0.5;
  int64_t seed = 0;
};

struct TransposeAttrs {
  std::vector<int64_t> permutation;
};

/// slice (`strides` already defaulted to 1 per dimension) and
/// slice_backward.
struct SliceAttrs {
  std::vector<int64_t> offsets;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

/// `axis` is normalised into [0, rank).
struct ConcatAttrs {
  int64_t axis = 0;
};

/// upsample_nearest2d and its backward op.
struct UpsampleAttrs {
  int64_t scale = 1;
};

/// leaky_relu_backward (alpha default 0.01) and elu_backward (1.0): whether
/// `saved` is the forward op's output rather than its input.
struct ActivationBackwardAttrs {
  double alpha = 0;
  bool fromOutput = false;
};

/// batch_norm_backward and layer_norm_backward.
struct NormBackwardAttrs {
  double epsilon = 1e-5;
};

/// The invertible activation of batch_norm_act and its backward
/// (InPlace-ABN); alpha > 0.
enum class InvertibleActivation { LeakyRelu, Elu };

/// batch_norm_act: batch_norm's attributes and the activation applied to its
/// output. `activation` and `alpha` are required (alpha > 0).
struct BatchNormActAttrs {
  double epsilon = 1e-5;
  double momentum = 0.1;
  InvertibleActivation activation = InvertibleActivation::LeakyRelu;
  double alpha = 0.01;
};

/// batch_norm_act_backward: the forward op's activation.
struct BatchNormActBackwardAttrs {
  InvertibleActivation activation = InvertibleActivation::LeakyRelu;
  double alpha = 0.01;
};

/// attention and attention_backward: softmax(scale · q·kᵀ), causally masked
/// when `causal`, then dropout (`p`, `seed`: the mask of memopt.dropout on
/// the ...xSqxSk probabilities), times v. `scale` is required and finite,
/// p in [0, 1). With `safe` (forward only), a query row whose every key is
/// masked by -inf gives 0 and a log-sum-exp of -inf, as memopt.softmax's
/// `safe`; the backward pass reads a -inf log-sum-exp as probabilities 0.
struct AttentionAttrs {
  bool causal = false;
  double scale = 1;
  double p = 0;
  int64_t seed = 0;
  bool safe = false;
};

/// linear_cross_entropy and its backward: the logits of `chunk` rows (>= 1)
/// at a time.
struct LinearCrossEntropyAttrs {
  int64_t chunk = 1;
};

/// sgd_update: p - lr * (g + weightDecay * p).
struct SgdAttrs {
  double lr = 0;
  double weightDecay = 0;
};

/// sgd_momentum_update (torch.optim.SGD with momentum).
struct SgdMomentumAttrs {
  double lr = 0;
  double momentum = 0;
  double dampening = 0;
  double weightDecay = 0;
  bool nesterov = false;
};

/// adam_update (torch.optim.Adam, or torch.optim.AdamW with
/// `decoupledWeightDecay`); beta1, beta2 in [0, 1), eps > 0.
struct AdamAttrs {
  double lr = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 0;
  bool decoupledWeightDecay = false;
};

/// adafactor_update (transformers.Adafactor without relative steps or a
/// first moment): eps1 > 0, eps2 >= 0, clipThreshold > 0, decayRate < 0.
struct AdafactorAttrs {
  double lr = 0;
  double eps1 = 1e-30;
  double eps2 = 1e-3;
  double clipThreshold = 1.0;
  double decayRate = -0.8;
  double weightDecay = 0;
  bool scaleParameter = true;
};

/// clip_coefficient: max_norm > 0 and finite.
struct ClipAttrs {
  double maxNorm = 1.0;
  /// The one input is the sum of squares (a 0-d f64 tensor), not gradients.
  bool squareSum = false;
};

/// update_loss_scale (torch.amp.GradScaler's update): every attribute is
/// required; both factors > 0, growth_interval in [1, 2^31 - 1].
struct LossScaleAttrs {
  double growthFactor = 2.0;
  double backoffFactor = 0.5;
  int64_t growthInterval = 2000;
};

/// all_reduce: the mean over `ranks` ranks (>= 2), or the sum (`sum`).
struct AllReduceAttrs {
  int64_t ranks = 2;
  bool sum = false;
};

/// reduce_scatter: the mean over `ranks` ranks of each input, on the rank
/// `owners[i]` names (-1: each rank its rows); this step is rank `rank`'s.
struct ReduceScatterAttrs {
  int64_t ranks = 2;
  int64_t rank = 0;
  std::vector<int64_t> owners;
};

/// broadcast: rank `root`'s tensor on all `ranks` ranks.
struct BroadcastAttrs {
  int64_t ranks = 2;
  int64_t root = 0;
};

/// all_gather: every rank's rows of the output, on all `ranks` ranks; this
/// step is rank `rank`'s.
struct AllGatherAttrs {
  int64_t ranks = 2;
  int64_t rank = 0;
};

/// embedding and embedding_backward: the row that takes no gradient (-1:
/// none).
struct EmbeddingAttrs {
  int64_t paddingIdx = -1;
};

/// compare: x `predicate` value element-wise, 1 or 0 (math::compare).
struct CompareAttrs {
  ComparePredicate predicate = ComparePredicate::Eq;
  double value = 0;
};

/// The attributes of one step; std::monostate for kernels without any.
using KernelAttrs =
    std::variant<std::monostate, Conv2DAttrs, MatMulAttrs, AlphaAttrs,
                 ClampAttrs, CompareAttrs, EmbeddingAttrs, BatchNormAttrs,
                 LayerNormAttrs, Pool2DAttrs, SoftmaxAttrs, DropoutAttrs,
                 TransposeAttrs, SliceAttrs, ConcatAttrs, UpsampleAttrs,
                 ActivationBackwardAttrs, NormBackwardAttrs, BatchNormActAttrs,
                 BatchNormActBackwardAttrs, AttentionAttrs,
                 LinearCrossEntropyAttrs, SgdAttrs, SgdMomentumAttrs, AdamAttrs,
                 AdafactorAttrs, ClipAttrs, LossScaleAttrs, AllReduceAttrs,
                 ReduceScatterAttrs, BroadcastAttrs, AllGatherAttrs>;

/// Whether output `outputIndex` of a kernel may occupy exactly the storage
/// of input `inputIndex` (the output is then a view of that input's tensor,
/// or of the same arena slice). True where each output element depends only
/// on the input elements at the same index or on reductions computed before
/// any output is written:
///  * output 0 over input 0: the element-wise forward kernels, dropout,
///    softmax, batch_norm, batch_norm_act and layer_norm (over x), and
///    reshape, which then copies nothing; add, sub, mul and div also over
///    input 1;
///  * output 0 over either input: the activation backward kernels
///    (grad or saved), softmax_backward (grad or output), batch_norm_backward
///    and layer_norm_backward (grad_output or x), batch_norm_act_backward
///    (grad or output);
///  * output 0 over the logits (cross_entropy_backward) or over prediction
///    or target (mse_loss_backward);
///  * the optimizer updates: every output over any tensor operand
///    (param, grad and the optimizer buffers; not Adam's step count nor the
///    optional skip flag), except adafactor_update, whose new parameter may
///    only overwrite the parameter and each new state tensor only its own
///    old value (it reads the whole gradient and parameter twice), and
///    adam8bit_update, whose new parameter may overwrite the parameter or
///    the gradient and each new code or maximum only its own old value;
///  * unscale: output 0 over the gradient (input 0); update_loss_scale:
///    the new scale over the scale, the new growth tracker over the
///    tracker (output i over input i, i < 2);
///  * all_reduce: output i over input i (the bucket is packed into the
///    workspace first); broadcast: output 0 over input 0.
/// cast, found_inf, clip_coefficient, square_sum, select and reduce_scatter
/// never run in place.
/// Any other overlap of a step's inputs and outputs is refused when the plan
/// is loaded.
bool kernelAllowsInPlace(KernelKind kind, size_t outputIndex,
                         size_t inputIndex);

/// Output 0's rule (the only output of most kernels).
inline bool kernelAllowsInPlace(KernelKind kind, size_t inputIndex) {
  return kernelAllowsInPlace(kind, 0, inputIndex);
}

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_KERNEL_H
