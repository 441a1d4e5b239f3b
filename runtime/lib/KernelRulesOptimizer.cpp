//===- KernelRulesOptimizer.cpp - rules of optimizers, loss scaling -------===//
//
// The rules of the optimizer updates (SGD, SGD with momentum, Adam): param
// and buffers of one type, every new value of that type too, and a gradient
// of the parameter's shape whose dtype the parameter's holds exactly (f16
// or bf16 beside f32 or f64, f32 beside f64), optionally still scaled by
// the loss scale the update divides it by. And the
// rules of mixed precision: casts and dynamic loss scaling
// (torch.amp.GradScaler), whose flags and scales are 0-d tensors.
//
//===----------------------------------------------------------------------===//

#include "KernelRulesImpl.h"

#include "memopt/Contract/CollectiveShapes.h"
#include "memopt/Contract/OptimizerShapes.h"

namespace memopt::runtime::detail {

namespace {

/// A 0-d tensor of dtype `dtype` (a flag, a loss scale, a counter).
void scalarOf(Rules &r, const TensorInfo &t, const std::string &name,
              DType dtype) {
  if (t.dtype != dtype)
    r.error("expected ", name, " of dtype ", dtypeName(dtype), ", got ",
            dtypeName(t.dtype));
  if (!t.shape.empty())
    r.error("expected a 0-d ", name, ", got shape ", formatShape(t.shape));
}

/// A float param (input 0) and its gradient (input 1): the param's shape,
/// in a dtype the param's holds exactly.
void paramAndGradient(Rules &r) {
  const TensorInfo &p = r.in(0);
  r.isFloat(p, "param");
  const TensorInfo &g = r.in(1);
  r.isFloat(g, "grad");
  if (g.shape != p.shape)
    r.error("expected grad of the param's shape ", formatShape(p.shape),
            ", got ", formatShape(g.shape));
  if (!widensExactly(g.dtype, p.dtype))
    r.error("expected a grad whose dtype ", dtypeName(p.dtype),
            " holds exactly, got ", dtypeName(g.dtype));
}

/// Param (input 0) and the named buffers (inputs 2, ...) of the param's
/// shape, the buffers of one type, the param's or bf16 (state-dtype=bf16);
/// output 0 of the param's type, the others of the buffers'; the gradient
/// (input 1) as paramAndGradient checks it.
void updateTypes(Rules &r, std::initializer_list<const char *> buffers) {
  paramAndGradient(r);
  const TensorInfo &p = r.in(0);
  size_t i = 2;
  for (const char *name : buffers) {
    const TensorInfo &b = r.in(i++);
    if (b.shape != p.shape || (b.dtype != p.dtype && b.dtype != DType::BF16))
      r.error("expected ", name, " of the param's shape ", formatShape(p.shape),
              " in its dtype ", dtypeName(p.dtype), " or bf16, got ",
              describe(b));
    if (i > 3)
      r.sameType(r.in(2), *buffers.begin(), b, name);
  }
  r.output(0, p.dtype, p.shape);
  for (size_t o = 1; o < r.numOutputs(); ++o)
    r.output(o, r.in(2).dtype, p.shape);
}

/// The optional trailing operands of the optimizer updates, from input
/// `index` on: a `skip` flag, a 0-d f32 that skips the step when nonzero
/// (dynamic loss scaling after an overflow), then a loss scale, a 0-d f32
/// the gradient is divided by (only beside a skip flag, for an f32 or f64
/// param).
void optionalLossScaling(Rules &r, size_t index) {
  if (r.numInputs() > index)
    scalarOf(r, r.in(index), "skip", DType::F32);
  if (r.numInputs() > index + 1) {
    scalarOf(r, r.in(index + 1), "loss scale", DType::F32);
    DType p = r.in(0).dtype;
    if (p != DType::F32 && p != DType::F64)
      r.error("expected an f32 or f64 param beside a loss scale, got ",
              dtypeName(p));
  }
}

} // namespace

KernelAttrs sgdUpdate(Rules &r) {
  r.arity(2, 4, 1);
  SgdAttrs a;
  a.lr = r.f64("lr", std::nullopt);
  a.weightDecay = r.f64("weight_decay", 0.0);
  r.done();
  updateTypes(r, {});
  optionalLossScaling(r, 2);
  return a;
}

KernelAttrs sgdMomentumUpdate(Rules &r) {
  r.arity(3, 5, 2);
  SgdMomentumAttrs a;
  a.lr = r.f64("lr", std::nullopt);
  a.momentum = r.f64("momentum", std::nullopt);
  a.dampening = r.f64("dampening", 0.0);
  a.weightDecay = r.f64("weight_decay", 0.0);
  a.nesterov = r.boolean("nesterov", false);
  r.done();
  updateTypes(r, {"momentum_buffer"});
  optionalLossScaling(r, 3);
  return a;
}

namespace {

/// Adam's attributes (adam_update and adam8bit_update).
AdamAttrs adamAttrs(Rules &r) {
  AdamAttrs a;
  a.lr = r.f64("lr", std::nullopt);
  a.beta1 = r.f64("beta1", 0.9);
  a.beta2 = r.f64("beta2", 0.999);
  a.eps = r.f64("eps", 1e-8);
  a.weightDecay = r.f64("weight_decay", 0.0);
  a.decoupledWeightDecay = r.boolean("decoupled_weight_decay", false);
  r.done();
  if (!(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1))
    r.error("expected 'beta1' and 'beta2' in [0, 1), got ", a.beta1, " and ",
            a.beta2);
  if (!(a.eps > 0))
    r.error("expected 'eps' > 0, got ", a.eps);
  return a;
}

/// The step count at input `index`: a 0-d float.
void stepCount(Rules &r, size_t index) {
  const TensorInfo &step = r.in(index);
  r.isFloat(step, "step");
  if (!step.shape.empty())
    r.error("expected a 0-d step, got shape ", formatShape(step.shape));
}

} // namespace

KernelAttrs adamUpdate(Rules &r) {
  r.arity(5, 7, 3);
  AdamAttrs a = adamAttrs(r);
  updateTypes(r, {"exp_avg", "exp_avg_sq"});
  stepCount(r, 4);
  optionalLossScaling(r, 5);
  return a;
}

/// adam8bit_update(param, grad, exp_avg, exp_avg_absmax, exp_avg_sq,
/// exp_avg_sq_absmax, step[, skip[, loss_scale]]) -> (param, exp_avg,
/// exp_avg_absmax, exp_avg_sq, exp_avg_sq_absmax): ui8 codes of the param's
/// shape, one f32 maximum per block (memopt/Contract/OptimizerShapes.h).
KernelAttrs adam8bitUpdate(Rules &r) {
  r.arity(7, 9, 5);
  AdamAttrs a = adamAttrs(r);
  paramAndGradient(r);
  const TensorInfo &p = r.in(0);
  for (auto [index, name] :
       {std::pair<size_t, const char *>{2, "exp_avg"}, {4, "exp_avg_sq"}}) {
    const TensorInfo &codes = r.in(index), &absmax = r.in(index + 1);
    if (codes.dtype != DType::UI8)
      r.error("expected ", name, " codes of dtype ui8, got ",
              dtypeName(codes.dtype));
    if (absmax.dtype != DType::F32)
      r.error("expected ", name, " absmax of dtype f32, got ",
              dtypeName(absmax.dtype));
    if (shapes::ShapeProblem problem = shapes::quantizedStateShape(
            p.shape, codes.shape, absmax.shape, name);
        !problem.empty())
      r.error(problem);
    r.output(index - 1, DType::UI8, codes.shape);
    r.output(index, DType::F32, absmax.shape);
  }
  r.output(0, p.dtype, p.shape);
  stepCount(r, 6);
  optionalLossScaling(r, 7);
  return a;
}

/// adafactor_update(param, grad, state..., step[, skip[, loss_scale]]) ->
/// (param, state...): row and column factors for a param of rank >= 2, one
/// second moment otherwise, in the step's compute type (f64 beside an f64
/// param, else f32).
KernelAttrs adafactorUpdate(Rules &r) {
  if (r.numInputs() < 1)
    r.error("expected at least 4 inputs, got ", r.numInputs());
  const size_t k = shapes::adafactorFactored(r.in(0).shape) ? 2 : 1;
  r.arity(3 + k, 5 + k, 1 + k);
  AdafactorAttrs a;
  a.lr = r.f64("lr", std::nullopt);
  a.eps1 = r.f64("eps1", 1e-30);
  a.eps2 = r.f64("eps2", 1e-3);
  a.clipThreshold = r.f64("clip_threshold", 1.0);
  a.decayRate = r.f64("decay_rate", -0.8);
  a.weightDecay = r.f64("weight_decay", 0.0);
  a.scaleParameter = r.boolean("scale_parameter", true);
  r.done();
  if (!(a.eps1 > 0) || !(a.eps2 >= 0) || !std::isfinite(a.eps1) ||
      !std::isfinite(a.eps2))
    r.error("expected 'eps1' > 0 and 'eps2' >= 0, got ", a.eps1, " and ",
            a.eps2);
  if (!(a.clipThreshold > 0) || !std::isfinite(a.clipThreshold))
    r.error("expected 'clip_threshold' > 0, got ", a.clipThreshold);
  if (!(a.decayRate < 0) || !std::isfinite(a.decayRate))
    r.error("expected 'decay_rate' < 0, got ", a.decayRate);
  if (!(a.weightDecay >= 0) || !std::isfinite(a.weightDecay))
    r.error("expected 'weight_decay' >= 0, got ", a.weightDecay);
  paramAndGradient(r);
  const TensorInfo &p = r.in(0);
  const DType compute = p.dtype == DType::F64 ? DType::F64 : DType::F32;
  std::vector<shapes::Dims> state;
  for (size_t i = 0; i < k; ++i) {
    const TensorInfo &s = r.in(2 + i);
    if (s.dtype != compute)
      r.error("expected state of dtype ", dtypeName(compute),
              " (the step's compute type), got ", dtypeName(s.dtype));
    state.push_back(s.shape);
    r.output(1 + i, s.dtype, s.shape);
  }
  if (shapes::ShapeProblem problem =
          shapes::adafactorStateShape(p.shape, state);
      !problem.empty())
    r.error(problem);
  r.output(0, p.dtype, p.shape);
  stepCount(r, 2 + k);
  optionalLossScaling(r, 3 + k);
  return a;
}

/// clip_coefficient(grads...) -> a 0-d f32: the factor clip_grad_norm_
/// scales them by. The gradients may have any float dtypes and shapes; with
/// `square_sum` the one input is their sum of squares, a 0-d f64.
KernelAttrs clipCoefficient(Rules &r) {
  r.arity(1, SIZE_MAX, 1);
  ClipAttrs a;
  a.maxNorm = r.f64("max_norm", std::nullopt);
  a.squareSum = r.boolean("square_sum", false);
  r.done();
  if (!(a.maxNorm > 0) || !std::isfinite(a.maxNorm))
    r.error("expected 'max_norm' > 0 and finite, got ", a.maxNorm);
  if (a.squareSum) {
    r.arity(1, 1, 1);
    if (r.in(0).dtype != DType::F64 || !r.in(0).shape.empty())
      r.error("with square_sum expected a 0-d f64 input, got ",
              describe(r.in(0)));
  }
  for (size_t i = 0; i < r.numInputs(); ++i)
    r.isFloat(r.in(i), concat("gradient ", i));
  r.output(0, DType::F32, {});
  return a;
}

/// Float tensors of any dtypes and shapes, without attributes, to one 0-d
/// `dtype` (square_sum, found_inf).
static KernelAttrs floatsToScalar(Rules &r, DType dtype) {
  r.arity(1, SIZE_MAX, 1);
  r.done();
  for (size_t i = 0; i < r.numInputs(); ++i)
    r.isFloat(r.in(i), concat("input ", i));
  r.output(0, dtype, {});
  return std::monostate{};
}

/// square_sum(x...) -> a 0-d f64: the sum of the squares of every element.
KernelAttrs squareSum(Rules &r) { return floatsToScalar(r, DType::F64); }

/// cast(x) -> x's values in the output's float dtype (any float dtype).
KernelAttrs cast(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &x = r.in(0), &y = r.out(0);
  r.isFloat(x, "input");
  r.isFloat(y, "output 0");
  r.output(0, y.dtype, x.shape);
  return std::monostate{};
}

/// found_inf(x...) -> a 0-d f32 flag: 1 if any element of any input is
/// +-inf or NaN, else 0. The inputs may have any float dtypes and shapes.
KernelAttrs foundInf(Rules &r) { return floatsToScalar(r, DType::F32); }

/// A collective's required `ranks`: at least 2.
int64_t collectiveRanks(Rules &r) {
  int64_t ranks = r.i64("ranks", std::nullopt);
  if (ranks < 2)
    r.error("attribute 'ranks' must be at least 2, got ", ranks);
  return ranks;
}

/// Every input of one float dtype (one packed bucket).
static void oneBucket(Rules &r) {
  for (size_t i = 0; i < r.numInputs(); ++i) {
    r.isFloat(r.in(i), concat("input ", i));
    if (i > 0)
      r.sameDType(r.in(0), "input 0", r.in(i), concat("input ", i));
  }
}

/// all_reduce(x...) -> the mean (or with `sum`, the sum) of each x over
/// `ranks` ranks: outputs of the inputs' types.
KernelAttrs allReduce(Rules &r) {
  r.arity(1, SIZE_MAX, r.numInputs());
  AllReduceAttrs a;
  a.ranks = collectiveRanks(r);
  a.sum = r.boolean("sum", false);
  r.done();
  oneBucket(r);
  for (size_t i = 0; i < r.numInputs(); ++i)
    r.output(i, r.in(i).dtype, r.in(i).shape);
  return a;
}

/// A required attribute naming one of the collective's `ranks` ranks (its
/// `rank`, a broadcast's `root`).
static int64_t rankAttr(Rules &r, const char *name, int64_t ranks) {
  int64_t rank = r.i64(name, std::nullopt);
  if (rank < 0 || rank >= ranks)
    r.error("attribute '", name, "' must be in [0, ", ranks, "), got ", rank);
  return rank;
}

/// `shape` with rank `rank`'s rows of `ranks` (CollectiveShapes.h).
static Shape rowsOf(const Shape &shape, int64_t ranks, int64_t rank) {
  Shape rows = shape;
  rows[0] = shapes::rowSliceRows(shape[0], ranks, rank);
  return rows;
}

/// reduce_scatter(x...) -> the mean over `ranks` ranks of each x that
/// `owners` gives to `rank` (-1: its rows of x), in input order.
KernelAttrs reduceScatter(Rules &r) {
  ReduceScatterAttrs a;
  a.ranks = collectiveRanks(r);
  a.rank = rankAttr(r, "rank", a.ranks);
  a.owners = *r.ints("owners", r.numInputs(), -1, true);
  r.done();
  std::vector<size_t> owned;
  for (size_t i = 0; i < a.owners.size(); ++i) {
    if (a.owners[i] >= a.ranks)
      r.error("attribute 'owners' names rank ", a.owners[i], " of ", a.ranks);
    if (a.owners[i] == -1 &&
        (r.in(i).shape.empty() || r.in(i).shape[0] < a.ranks))
      r.error("input ", i,
              " is divided by rows (owner -1) but has fewer "
              "than ",
              a.ranks, " rows: ", formatShape(r.in(i).shape));
    if (a.owners[i] == a.rank || a.owners[i] == -1)
      owned.push_back(i);
  }
  r.arity(1, SIZE_MAX, owned.size());
  oneBucket(r);
  for (size_t k = 0; k < owned.size(); ++k) {
    const TensorInfo &in = r.in(owned[k]);
    r.output(k, in.dtype,
             a.owners[owned[k]] == -1 ? rowsOf(in.shape, a.ranks, a.rank)
                                      : in.shape);
  }
  return a;
}

/// all_gather(rows[, storage]) -> every rank's rows: the output's type is
/// given (the rows alone do not say how many the others hold).
KernelAttrs allGather(Rules &r) {
  r.arity(1, 2, 1);
  AllGatherAttrs a;
  a.ranks = collectiveRanks(r);
  a.rank = rankAttr(r, "rank", a.ranks);
  r.done();
  const TensorInfo &whole = r.out(0);
  r.isFloat(whole, "output 0");
  if (whole.shape.empty() || whole.shape[0] < a.ranks)
    r.error("output 0 must have at least ", a.ranks, " rows, got ",
            formatShape(whole.shape));
  r.output(0, r.in(0).dtype, whole.shape);
  Shape rows = rowsOf(whole.shape, a.ranks, a.rank);
  if (r.in(0).shape != rows)
    r.error("input 0 must be rank ", a.rank, "'s rows of ",
            formatShape(whole.shape), ", ", formatShape(rows), ", got ",
            formatShape(r.in(0).shape));
  if (r.numInputs() == 2)
    r.output(0, r.in(1).dtype, r.in(1).shape);
  return a;
}

/// broadcast(x) -> rank `root`'s x, of x's type; broadcast() on a rank
/// that does not hold it (ZeRO stage 3) -> rank `root`'s.
KernelAttrs broadcast(Rules &r) {
  r.arity(0, 1, 1);
  BroadcastAttrs a;
  a.ranks = collectiveRanks(r);
  a.root = rankAttr(r, "root", a.ranks);
  r.done();
  if (r.numInputs() == 0) {
    r.isFloat(r.out(0), "output 0");
    return a;
  }
  r.isFloat(r.in(0), "input 0");
  r.output(0, r.in(0).dtype, r.in(0).shape);
  return a;
}

/// unscale(grad, scale) -> grad * (1 / scale) in grad's type.
KernelAttrs unscale(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &g = r.in(0);
  r.isFloat(g, "grad");
  scalarOf(r, r.in(1), "scale", DType::F32);
  r.output(0, g.dtype, g.shape);
  return std::monostate{};
}

/// update_loss_scale(scale, growth_tracker, found_inf) ->
/// (new_scale, new_growth_tracker).
KernelAttrs updateLossScale(Rules &r) {
  r.arity(3, 3, 2);
  LossScaleAttrs a;
  a.growthFactor = r.f64("growth_factor", std::nullopt);
  a.backoffFactor = r.f64("backoff_factor", std::nullopt);
  a.growthInterval = r.i64("growth_interval", std::nullopt);
  r.done();
  if (!(a.growthFactor > 0))
    r.error("expected 'growth_factor' > 0, got ", a.growthFactor);
  if (!(a.backoffFactor > 0))
    r.error("expected 'backoff_factor' > 0, got ", a.backoffFactor);
  if (a.growthInterval < 1 || a.growthInterval > INT32_MAX)
    r.error("expected 'growth_interval' in [1, ", INT32_MAX,
            "] (the growth tracker is i32), got ", a.growthInterval);
  scalarOf(r, r.in(0), "scale", DType::F32);
  scalarOf(r, r.in(1), "growth_tracker", DType::I32);
  scalarOf(r, r.in(2), "found_inf", DType::F32);
  r.output(0, DType::F32, {});
  r.output(1, DType::I32, {});
  return a;
}

/// select(condition, true_value, false_value) -> true_value if condition is
/// nonzero, else false_value; both values of one type (any dtype, integers
/// included).
KernelAttrs selectRule(Rules &r) {
  r.arity(3, 3, 1);
  r.done();
  scalarOf(r, r.in(0), "condition", DType::F32);
  const TensorInfo &a = r.in(1);
  r.sameType(a, "true_value", r.in(2), "false_value");
  r.output(0, a.dtype, a.shape);
  return std::monostate{};
}

} // namespace memopt::runtime::detail
