//===- KernelRules.cpp - per-kernel validation of plan steps --------------===//
//
// One rule per kernel, mirroring the dialect's verifier: the plan must say
// exactly what the compiler would have inferred. Messages read like the
// compiler's (`expected output 0 shape 8x64x56x56, got 8x64x55x55`) and are
// prefixed with the step (`plan: steps[3] (conv2d): ...`).
//
//===----------------------------------------------------------------------===//

#include "KernelRules.h"

#include "JsonText.h"
#include "memopt/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <set>

using nlohmann::json;

namespace memopt::runtime::detail {

namespace {

std::string formatInts(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string describe(const TensorInfo &t) {
  return concat(formatShape(t.shape), " ", dtypeName(t.dtype));
}

/// Validation context of one step: its tensors, its JSON attributes (each
/// read at most once; leftovers are unknown attributes) and the message
/// prefix.
class Rules {
public:
  Rules(KernelKind kind, const json &attrs,
        const std::vector<const TensorInfo *> &inputs,
        const std::vector<const TensorInfo *> &outputs,
        const std::string &where)
      : kind(kind), attrs(attrs), inputs(inputs), outputs(outputs),
        where(where) {}

  template <typename... Args> [[noreturn]] void error(Args &&...args) const {
    throw Error(ErrorCode::InvalidPlan,
                concat("plan: ", where, ": ", std::forward<Args>(args)...));
  }

  //===--- Arity and types ------------------------------------------------===//

  void arity(size_t minInputs, size_t maxInputs, size_t numOutputs) const {
    if (inputs.size() < minInputs || inputs.size() > maxInputs) {
      if (minInputs == maxInputs)
        error("expected ", minInputs, " input(s), got ", inputs.size());
      if (maxInputs == SIZE_MAX)
        error("expected at least ", minInputs, " input(s), got ",
              inputs.size());
      error("expected ", minInputs, " to ", maxInputs, " inputs, got ",
            inputs.size());
    }
    if (outputs.size() != numOutputs)
      error("expected ", numOutputs, " output(s), got ", outputs.size());
  }

  const TensorInfo &in(size_t i) const { return *inputs[i]; }
  const TensorInfo &out(size_t i) const { return *outputs[i]; }
  size_t numInputs() const { return inputs.size(); }
  size_t numOutputs() const { return outputs.size(); }

  void isFloat(const TensorInfo &t, const std::string &name) const {
    if (!isFloatDType(t.dtype))
      error("expected ", name, " of a float dtype (f32, f64, f16, bf16), got ",
            dtypeName(t.dtype));
  }
  void isInteger(const TensorInfo &t, const std::string &name) const {
    if (!isIntegerDType(t.dtype))
      error("expected ", name, " of dtype i32 or i64, got ",
            dtypeName(t.dtype));
  }
  void sameDType(const TensorInfo &a, const std::string &aName,
                 const TensorInfo &b, const std::string &bName) const {
    if (a.dtype != b.dtype)
      error("expected ", bName, " dtype ", dtypeName(a.dtype), " (as ", aName,
            "), got ", dtypeName(b.dtype));
  }
  void sameType(const TensorInfo &a, const std::string &aName,
                const TensorInfo &b, const std::string &bName) const {
    if (a.dtype != b.dtype || a.shape != b.shape)
      error("expected ", bName, " of type ", describe(a), " (as ", aName,
            "), got ", describe(b));
  }
  void rank(const TensorInfo &t, const std::string &name, size_t r,
            const char *layout = nullptr) const {
    if (t.shape.size() == r)
      return;
    if (layout)
      error("expected ", r, "-D ", name, " (", layout, "), got shape ",
            formatShape(t.shape));
    error("expected ", name, " of rank ", r, ", got shape ",
          formatShape(t.shape));
  }
  void minRank(const TensorInfo &t, const std::string &name, size_t r) const {
    if (t.shape.size() < r)
      error("expected ", name, " of rank >= ", r, ", got shape ",
            formatShape(t.shape));
  }

  /// Checks output `i` against the inferred dtype and shape.
  void output(size_t i, DType dtype, const Shape &shape) const {
    const TensorInfo &t = *outputs[i];
    if (t.shape != shape)
      error("expected output ", i, " shape ", formatShape(shape), ", got ",
            formatShape(t.shape));
    if (t.dtype != dtype)
      error("expected output ", i, " dtype ", dtypeName(dtype), ", got ",
            dtypeName(t.dtype));
  }

  //===--- Checked arithmetic ---------------------------------------------===//

  int64_t add(int64_t a, int64_t b, const char *what) const {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
      error(what, " overflows 64-bit sizes");
    return r;
  }
  int64_t mul(int64_t a, int64_t b, const char *what) const {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
      error(what, " overflows 64-bit sizes");
    return r;
  }

  //===--- Attributes -----------------------------------------------------===//
  // A missing or null attribute takes the dialect's default; attributes
  // without a default must be present. Unknown names are refused so that a
  // misspelt attribute cannot silently become its default.

  const json *find(const char *name) {
    seen.insert(name);
    auto it = attrs.find(name);
    if (it == attrs.end() || it->is_null())
      return nullptr;
    return &*it;
  }
  const json &require(const char *name) {
    const json *v = find(name);
    if (!v)
      error("missing attribute '", name, "'");
    return *v;
  }

  int64_t intValue(const json &v, const char *name) const {
    if (v.is_number_integer()) {
      if (v.is_number_unsigned() &&
          v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        error("attribute '", name, "' value ", jsonText(v),
              " does not fit in 64 bits");
      return v.get<int64_t>();
    }
    error("attribute '", name, "' must be an integer, got ", jsonText(v));
  }

  int64_t i64(const char *name, std::optional<int64_t> dflt) {
    const json *v = dflt ? find(name) : &require(name);
    return v ? intValue(*v, name) : *dflt;
  }

  /// A finite number; required when `dflt` is nullopt.
  double f64(const char *name, std::optional<double> dflt) {
    // A float is never null: a writer that turned NaN or infinity into null
    // must not get the default in the user's value's place.
    if (auto it = attrs.find(name); it != attrs.end() && it->is_null())
      error("attribute '", name, "' is null, not a number");
    const json *v = dflt ? find(name) : &require(name);
    if (!v)
      return *dflt;
    if (!v->is_number())
      error("attribute '", name, "' must be a number, got ", jsonText(*v));
    double d = v->get<double>();
    if (!std::isfinite(d))
      error("attribute '", name, "' must be finite, got ", jsonText(*v));
    return d;
  }

  /// A required string.
  std::string string(const char *name) {
    const json &v = require(name);
    if (!v.is_string())
      error("attribute '", name, "' must be a string, got ", jsonText(v));
    return v.get<std::string>();
  }

  bool boolean(const char *name, bool dflt) {
    const json *v = find(name);
    if (!v)
      return dflt;
    if (!v->is_boolean())
      error("attribute '", name, "' must be a boolean, got ", jsonText(*v));
    return v->get<bool>();
  }

  /// An integer array; `size` values each >= `min`. nullopt when absent and
  /// optional.
  std::optional<std::vector<int64_t>> ints(const char *name, size_t size,
                                           int64_t min, bool required) {
    const json *v = required ? &require(name) : find(name);
    if (!v)
      return std::nullopt;
    if (!v->is_array())
      error("attribute '", name, "' must be an array of integers, got ",
            jsonText(*v));
    std::vector<int64_t> values;
    for (const json &e : *v) {
      if (!e.is_number_integer())
        error("attribute '", name, "' must be an array of integers, got ",
              jsonText(*v));
      values.push_back(intValue(e, name));
    }
    if (values.size() != size)
      error("expected '", name, "' to have ", size, " values, got ",
            values.size());
    for (int64_t x : values)
      if (x < min)
        error("expected '", name, "' values >= ", min, ", got ",
              formatInts(values));
    return values;
  }
  std::array<int64_t, 2> pair(const char *name, int64_t min,
                              std::array<int64_t, 2> dflt) {
    auto v = ints(name, 2, min, false);
    return v ? std::array<int64_t, 2>{(*v)[0], (*v)[1]} : dflt;
  }

  /// Refuses attributes the rule did not read.
  void done() const {
    for (auto it = attrs.begin(); it != attrs.end(); ++it)
      if (!seen.count(it.key()))
        error("unknown attribute '", it.key(), "' for kernel '",
              kernelName(kind), "'");
  }

  /// Normalises a possibly negative axis.
  int64_t axis(int64_t a, int64_t r, const char *name) const {
    if (a < -r || a >= r)
      error("expected '", name, "' in [", -r, ", ", r, ") for rank ", r,
            ", got ", a);
    return a < 0 ? a + r : a;
  }

private:
  KernelKind kind;
  const json &attrs;
  const std::vector<const TensorInfo *> &inputs;
  const std::vector<const TensorInfo *> &outputs;
  const std::string &where;
  std::set<std::string> seen;
};

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

/// The attributes of conv2d and its backward ops.
Conv2DAttrs convAttrs(Rules &r) {
  Conv2DAttrs a;
  a.strides = r.pair("strides", 1, {1, 1});
  a.padding = r.pair("padding", 0, {0, 0});
  a.dilations = r.pair("dilations", 1, {1, 1});
  a.groups = r.i64("groups", 1);
  r.done();
  if (a.groups < 1)
    r.error("expected 'groups' >= 1, got ", a.groups);
  return a;
}

/// Checks that an NxCxHxW input `x` and a Kx(C/groups)xRxS weight `w` form
/// a convolution with `a`, and returns its output shape.
Shape convOutputShape(Rules &r, const TensorInfo &x, const char *xName,
                      const TensorInfo &w, const char *wName,
                      const Conv2DAttrs &a) {
  r.rank(x, xName, 4, "NxCxHxW");
  r.rank(w, wName, 4, "Kx(C/groups)xRxS");
  int64_t n = x.shape[0], c = x.shape[1], k = w.shape[0];
  if (c % a.groups != 0 || k % a.groups != 0)
    r.error("expected input channels (", c, ") and output channels (", k,
            ") divisible by groups (", a.groups, ")");
  if (w.shape[1] != c / a.groups)
    r.error("expected ", wName, " shape ", k, "x", c / a.groups, "x",
            w.shape[2], "x", w.shape[3], " for ", c, " input channels and ",
            a.groups, " group(s), got ", formatShape(w.shape));
  Shape out = {n, k, 0, 0};
  for (int d = 0; d < 2; ++d) {
    int64_t padded =
        r.add(x.shape[2 + d], r.mul(2, a.padding[d], "'padding'"), "'padding'");
    int64_t window =
        r.add(r.mul(a.dilations[d], w.shape[2 + d] - 1, "'dilations'"), 1,
              "'dilations'");
    if (padded < window)
      r.error(xName, " ", x.shape[2], "x", x.shape[3], " with padding [",
              a.padding[0], ", ", a.padding[1],
              "] is smaller than the dilated kernel");
    out[2 + d] = (padded - window) / a.strides[d] + 1;
  }
  return out;
}

KernelAttrs conv2d(Rules &r) {
  r.arity(2, 3, 1);
  const TensorInfo &x = r.in(0), &w = r.in(1);
  r.isFloat(x, "input");
  r.rank(x, "input", 4, "NxCxHxW");
  r.rank(w, "weight", 4, "Kx(C/groups)xRxS");
  r.sameDType(x, "input", w, "weight");
  Conv2DAttrs a = convAttrs(r);
  Shape out = convOutputShape(r, x, "input", w, "weight", a);
  if (r.numInputs() == 3) {
    const TensorInfo &b = r.in(2);
    r.rank(b, "bias", 1);
    r.sameDType(x, "input", b, "bias");
    if (b.shape[0] != out[1])
      r.error("expected bias of ", out[1], " elements (output channels), got ",
              b.shape[0]);
  }
  r.output(0, x.dtype, out);
  return a;
}

KernelAttrs linear(Rules &r) {
  r.arity(2, 3, 1);
  r.done();
  const TensorInfo &x = r.in(0), &w = r.in(1);
  r.isFloat(x, "input");
  r.minRank(x, "input", 1);
  r.rank(w, "weight", 2, "OxI");
  r.sameDType(x, "input", w, "weight");
  int64_t inFeatures = x.shape.back(), outFeatures = w.shape[0];
  if (w.shape[1] != inFeatures)
    r.error("expected weight shape ", outFeatures, "x", inFeatures, " for ",
            inFeatures, " input features, got ", formatShape(w.shape));
  if (r.numInputs() == 3) {
    const TensorInfo &b = r.in(2);
    r.rank(b, "bias", 1);
    r.sameDType(x, "input", b, "bias");
    if (b.shape[0] != outFeatures)
      r.error("expected bias of ", outFeatures,
              " elements (output features), got ", b.shape[0]);
  }
  Shape out = x.shape;
  out.back() = outFeatures;
  r.output(0, x.dtype, out);
  return std::monostate{};
}

KernelAttrs matmul(Rules &r) {
  r.arity(2, 2, 1);
  MatMulAttrs a;
  a.transposeA = r.boolean("transpose_a", false);
  a.transposeB = r.boolean("transpose_b", false);
  r.done();
  const TensorInfo &x = r.in(0), &y = r.in(1);
  r.isFloat(x, "a");
  r.sameDType(x, "a", y, "b");
  r.minRank(x, "a", 2);
  r.minRank(y, "b", 2);
  size_t ra = x.shape.size(), rb = y.shape.size();
  int64_t m = x.shape[ra - 2], ka = x.shape[ra - 1];
  if (a.transposeA)
    std::swap(m, ka);
  int64_t kb = y.shape[rb - 2], n = y.shape[rb - 1];
  if (a.transposeB)
    std::swap(kb, n);
  if (ka != kb)
    r.error("expected contracted dimensions to agree, got ", ka, " (a",
            a.transposeA ? ", transposed" : "", ") and ", kb, " (b",
            a.transposeB ? ", transposed" : "", ")");
  Shape batchA(x.shape.begin(), x.shape.end() - 2);
  Shape batchB(y.shape.begin(), y.shape.end() - 2);
  auto batch = broadcastShapes(batchA, batchB);
  if (!batch)
    r.error("batch dimensions ", formatShape(batchA), " and ",
            formatShape(batchB), " do not broadcast");
  Shape out = *batch;
  out.push_back(m);
  out.push_back(n);
  r.output(0, x.dtype, out);
  return a;
}

KernelAttrs unary(Rules &r, std::optional<double> alphaDefault) {
  r.arity(1, 1, 1);
  AlphaAttrs a;
  if (alphaDefault)
    a.alpha = r.f64("alpha", *alphaDefault);
  r.done();
  r.isFloat(r.in(0), "x");
  r.output(0, r.in(0).dtype, r.in(0).shape);
  if (alphaDefault)
    return a;
  return std::monostate{};
}

KernelAttrs binary(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &x = r.in(0), &y = r.in(1);
  r.isFloat(x, "lhs");
  r.sameDType(x, "lhs", y, "rhs");
  auto shape = broadcastShapes(x.shape, y.shape);
  if (!shape)
    r.error("operand shapes ", formatShape(x.shape), " and ",
            formatShape(y.shape), " do not broadcast");
  r.output(0, x.dtype, *shape);
  return std::monostate{};
}

/// Training-mode batch norm's operands, epsilon and momentum, and its
/// outputs: y like x, then `numOutputs - 1` per-channel outputs like gamma
/// (running mean and variance, and batch_norm_act's saved_invstd).
void checkBatchNorm(Rules &r, double epsilon, double momentum,
                    size_t numOutputs) {
  const TensorInfo &x = r.in(0), &gamma = r.in(1);
  r.isFloat(x, "x");
  r.minRank(x, "x", 2);
  r.isFloat(gamma, "gamma");
  r.rank(gamma, "gamma", 1);
  int64_t c = x.shape[1];
  if (gamma.shape[0] != c)
    r.error("expected per-channel operands of ", c,
            " elements (x's dimension 1), got ", gamma.shape[0]);
  r.sameType(gamma, "gamma", r.in(2), "beta");
  r.sameType(gamma, "gamma", r.in(3), "running_mean");
  r.sameType(gamma, "gamma", r.in(4), "running_var");
  if (x.numElements / c < 2)
    r.error("expected more than 1 value per channel for the batch "
            "statistics, got x of shape ",
            formatShape(x.shape));
  if (!(epsilon > 0))
    r.error("expected 'epsilon' > 0, got ", epsilon);
  if (!(momentum >= 0 && momentum <= 1))
    r.error("expected 'momentum' in [0, 1], got ", momentum);
  r.output(0, x.dtype, x.shape);
  for (size_t o = 1; o < numOutputs; ++o)
    r.output(o, gamma.dtype, gamma.shape);
}

KernelAttrs batchNorm(Rules &r) {
  r.arity(5, 5, 3);
  BatchNormAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  a.momentum = r.f64("momentum", 0.1);
  r.done();
  checkBatchNorm(r, a.epsilon, a.momentum, 3);
  return a;
}

/// InPlace-ABN's `activation` and `alpha` (both required): an activation
/// the backward can invert.
InvertibleActivation invertibleActivation(Rules &r, double &alpha) {
  std::string name = r.string("activation");
  alpha = r.f64("alpha", std::nullopt);
  InvertibleActivation activation = InvertibleActivation::LeakyRelu;
  if (name == "leaky_relu")
    activation = InvertibleActivation::LeakyRelu;
  else if (name == "elu")
    activation = InvertibleActivation::Elu;
  else if (name == "relu")
    r.error("activation 'relu' is not invertible (negative inputs map to 0), "
            "so the backward could not rebuild its input; expected "
            "'leaky_relu' or 'elu'");
  else
    r.error("expected 'activation' 'leaky_relu' or 'elu', got '", name, "'");
  if (!(alpha > 0))
    r.error("expected 'alpha' > 0 (an invertible activation), got ", alpha);
  return activation;
}

/// batch_norm_act(x, gamma, beta, running_mean, running_var) ->
/// (y, new_running_mean, new_running_var, saved_invstd).
KernelAttrs batchNormAct(Rules &r) {
  r.arity(5, 5, 4);
  BatchNormActAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  a.momentum = r.f64("momentum", 0.1);
  a.activation = invertibleActivation(r, a.alpha);
  r.done();
  checkBatchNorm(r, a.epsilon, a.momentum, 4);
  return a;
}

/// batch_norm_act_backward(grad, output, gamma, beta, saved_invstd) ->
/// (grad_x, grad_gamma, grad_beta).
KernelAttrs batchNormActBackward(Rules &r) {
  r.arity(5, 5, 3);
  BatchNormActBackwardAttrs a;
  a.activation = invertibleActivation(r, a.alpha);
  r.done();
  const TensorInfo &g = r.in(0), &y = r.in(1), &gamma = r.in(2);
  r.isFloat(g, "grad");
  r.sameType(g, "grad", y, "output");
  r.minRank(y, "output", 2);
  r.isFloat(gamma, "gamma");
  r.rank(gamma, "gamma", 1);
  if (gamma.shape[0] != y.shape[1])
    r.error("expected per-channel operands of ", y.shape[1],
            " elements (output's dimension 1), got ", gamma.shape[0]);
  r.sameType(gamma, "gamma", r.in(3), "beta");
  r.sameType(gamma, "gamma", r.in(4), "saved_invstd");
  r.output(0, y.dtype, y.shape);
  r.output(1, gamma.dtype, gamma.shape);
  r.output(2, gamma.dtype, gamma.shape);
  return a;
}

KernelAttrs batchNormInference(Rules &r) {
  r.arity(5, 5, 1);
  BatchNormAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  r.done();
  const TensorInfo &x = r.in(0), &gamma = r.in(1);
  r.isFloat(x, "x");
  r.minRank(x, "x", 2);
  r.isFloat(gamma, "gamma");
  r.rank(gamma, "gamma", 1);
  if (gamma.shape[0] != x.shape[1])
    r.error("expected per-channel operands of ", x.shape[1],
            " elements (x's dimension 1), got ", gamma.shape[0]);
  r.sameType(gamma, "gamma", r.in(2), "beta");
  r.sameType(gamma, "gamma", r.in(3), "running_mean");
  r.sameType(gamma, "gamma", r.in(4), "running_var");
  if (!(a.epsilon > 0))
    r.error("expected 'epsilon' > 0, got ", a.epsilon);
  r.output(0, x.dtype, x.shape);
  return a;
}

KernelAttrs layerNorm(Rules &r) {
  r.arity(3, 3, 1);
  LayerNormAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  r.done();
  const TensorInfo &x = r.in(0), &gamma = r.in(1);
  r.isFloat(x, "x");
  r.isFloat(gamma, "gamma");
  const Shape &xs = x.shape, &gs = gamma.shape;
  if (gs.empty() || gs.size() > xs.size() ||
      !std::equal(gs.begin(), gs.end(), xs.end() - gs.size()))
    r.error("expected gamma's shape (", formatShape(gs),
            ") to be a non-empty suffix of x's shape (", formatShape(xs), ")");
  r.sameType(gamma, "gamma", r.in(2), "beta");
  if (!(a.epsilon > 0))
    r.error("expected 'epsilon' > 0, got ", a.epsilon);
  r.output(0, x.dtype, x.shape);
  return a;
}

KernelAttrs pool2d(Rules &r) {
  r.arity(1, 1, 1);
  Pool2DAttrs a;
  auto kernel = r.ints("kernel_size", 2, 1, true);
  a.kernelSize = {(*kernel)[0], (*kernel)[1]};
  a.strides = r.pair("strides", 1, a.kernelSize);
  a.padding = r.pair("padding", 0, {0, 0});
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.rank(x, "x", 4, "NxCxHxW");
  Shape out = x.shape;
  for (int d = 0; d < 2; ++d) {
    if (a.padding[d] > a.kernelSize[d] / 2)
      r.error("expected 'padding' at most half of 'kernel_size', got padding ",
              a.padding[d], " for kernel ", a.kernelSize[d]);
    int64_t extent = x.shape[2 + d] - a.kernelSize[d] + 2 * a.padding[d];
    if (extent < 0)
      r.error("input ", x.shape[2], "x", x.shape[3], " with padding [",
              a.padding[0], ", ", a.padding[1], "] is smaller than the window ",
              a.kernelSize[0], "x", a.kernelSize[1]);
    out[2 + d] = extent / a.strides[d] + 1;
  }
  r.output(0, x.dtype, out);
  return a;
}

KernelAttrs globalAvgPool2d(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.rank(x, "x", 4, "NxCxHxW");
  r.output(0, x.dtype, {x.shape[0], x.shape[1]});
  return std::monostate{};
}

KernelAttrs softmax(Rules &r) {
  r.arity(1, 1, 1);
  SoftmaxAttrs a;
  int64_t axis = r.i64("axis", -1);
  a.causal = r.boolean("causal", false);
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.minRank(x, "x", 1);
  int64_t rank = x.shape.size();
  a.axis = r.axis(axis, rank, "axis");
  if (a.causal && (rank < 2 || a.axis != rank - 1 ||
                   x.shape[rank - 1] != x.shape[rank - 2]))
    r.error("'causal' needs the softmax over the last axis of square "
            "trailing dimensions (...xTxT), got shape ",
            formatShape(x.shape), " with axis ", axis);
  r.output(0, x.dtype, x.shape);
  return a;
}

KernelAttrs dropout(Rules &r) {
  r.arity(1, 1, 1);
  DropoutAttrs a;
  a.p = r.f64("p", 0.5);
  a.seed = r.i64("seed", 0);
  r.done();
  if (!(a.p >= 0 && a.p < 1))
    r.error("expected 'p' in [0, 1), got ", a.p);
  r.isFloat(r.in(0), "x");
  r.output(0, r.in(0).dtype, r.in(0).shape);
  return a;
}

KernelAttrs reshape(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  // The output's shape is the plan's (the result type); only the element
  // count and the dtype must agree.
  const TensorInfo &x = r.in(0), &y = r.out(0);
  if (y.numElements != x.numElements)
    r.error("cannot reshape ", formatShape(x.shape), " (", x.numElements,
            " elements) to ", formatShape(y.shape), " (", y.numElements,
            " elements)");
  r.output(0, x.dtype, y.shape);
  return std::monostate{};
}

KernelAttrs transpose(Rules &r) {
  r.arity(1, 1, 1);
  TransposeAttrs a;
  const TensorInfo &x = r.in(0);
  size_t rank = x.shape.size();
  a.permutation = *r.ints("permutation", rank, 0, true);
  r.done();
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t p : a.permutation) {
    if (p >= static_cast<int64_t>(rank) || seen[p])
      r.error("expected 'permutation' to be a permutation of [0, ", rank,
              "), got ", formatInts(a.permutation));
    seen[p] = true;
    out.push_back(x.shape[p]);
  }
  r.output(0, x.dtype, out);
  return a;
}

KernelAttrs slice(Rules &r) {
  r.arity(1, 1, 1);
  SliceAttrs a;
  const TensorInfo &x = r.in(0);
  size_t rank = x.shape.size();
  a.offsets = *r.ints("offsets", rank, 0, true);
  a.sizes = *r.ints("sizes", rank, 1, true);
  auto strides = r.ints("strides", rank, 1, false);
  a.strides = strides ? *strides : std::vector<int64_t>(rank, 1);
  r.done();
  for (size_t d = 0; d < rank; ++d) {
    int64_t last = r.add(a.offsets[d],
                         r.mul(a.sizes[d] - 1, a.strides[d], "slice"), "slice");
    if (last >= x.shape[d])
      r.error("slice of dimension ", d, " reaches index ", last,
              " but the dimension has size ", x.shape[d]);
  }
  r.output(0, x.dtype, a.sizes);
  return a;
}

KernelAttrs concatRule(Rules &r) {
  r.arity(1, SIZE_MAX, 1);
  ConcatAttrs a;
  int64_t axis = r.i64("axis", std::nullopt);
  r.done();
  const TensorInfo &first = r.in(0);
  int64_t rank = first.shape.size();
  if (rank == 0)
    r.error("expected inputs of rank >= 1, got a scalar");
  a.axis = r.axis(axis, rank, "axis");
  Shape out = first.shape;
  for (size_t i = 1; i < r.numInputs(); ++i) {
    const TensorInfo &t = r.in(i);
    std::string name = concat("input ", i);
    r.sameDType(first, "input 0", t, name);
    bool compatible = static_cast<int64_t>(t.shape.size()) == rank;
    for (int64_t d = 0; compatible && d < rank; ++d)
      compatible = d == a.axis || t.shape[d] == out[d];
    if (!compatible)
      r.error("expected ", name, " to match input 0 (",
              formatShape(first.shape), ") in every dimension but ", a.axis,
              ", got ", formatShape(t.shape));
    out[a.axis] = r.add(out[a.axis], t.shape[a.axis], "concatenation");
  }
  r.output(0, first.dtype, out);
  return a;
}

KernelAttrs upsample(Rules &r) {
  r.arity(1, 1, 1);
  UpsampleAttrs a;
  a.scale = r.i64("scale", std::nullopt);
  r.done();
  const TensorInfo &x = r.in(0);
  r.isFloat(x, "x");
  r.rank(x, "x", 4, "NxCxHxW");
  if (a.scale < 1)
    r.error("expected 'scale' >= 1, got ", a.scale);
  Shape out = x.shape;
  out[2] = r.mul(out[2], a.scale, "upsampling");
  out[3] = r.mul(out[3], a.scale, "upsampling");
  r.output(0, x.dtype, out);
  return a;
}

KernelAttrs embedding(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &table = r.in(0), &ids = r.in(1);
  r.isFloat(table, "table");
  r.rank(table, "table", 2, "VxD");
  r.isInteger(ids, "ids");
  Shape out = ids.shape;
  out.push_back(table.shape[1]);
  r.output(0, table.dtype, out);
  return std::monostate{};
}

KernelAttrs crossEntropy(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &logits = r.in(0), &labels = r.in(1);
  r.isFloat(logits, "logits");
  r.rank(logits, "logits", 2, "NxC");
  r.isInteger(labels, "labels");
  r.rank(labels, "labels", 1, "N");
  if (labels.shape[0] != logits.shape[0])
    r.error("expected ", logits.shape[0],
            " labels (one per row of logits), got ", labels.shape[0]);
  r.output(0, logits.dtype, {});
  return std::monostate{};
}

KernelAttrs mseLoss(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &p = r.in(0);
  r.isFloat(p, "prediction");
  r.sameType(p, "prediction", r.in(1), "target");
  r.output(0, p.dtype, {});
  return std::monostate{};
}

//===----------------------------------------------------------------------===//
// Backward rules (MemOptGradOps.td; the compiler's verifiers are in
// lib/Dialect/MemOpt/IR/MemOptGradOps.cpp)
//===----------------------------------------------------------------------===//

KernelAttrs sumTo(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &x = r.in(0), &y = r.out(0);
  r.isFloat(x, "x");
  auto b = broadcastShapes(y.shape, x.shape);
  if (!b || *b != x.shape)
    r.error("result shape ", formatShape(y.shape),
            " does not broadcast to the operand's ", formatShape(x.shape));
  r.output(0, x.dtype, y.shape);
  return std::monostate{};
}

/// conv2d_backward_input(grad_output, weight) -> grad of the NxCxHxW input
/// (its shape is the output's).
KernelAttrs conv2dBackwardInput(Rules &r) {
  r.arity(2, 2, 1);
  const TensorInfo &dy = r.in(0), &w = r.in(1), &dx = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", w, "weight");
  r.sameDType(dy, "grad_output", dx, "output 0");
  Conv2DAttrs a = convAttrs(r);
  Shape fwd = convOutputShape(r, dx, "output 0", w, "weight", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd),
            " (the conv2d output for an input of shape ", formatShape(dx.shape),
            "), got ", formatShape(dy.shape));
  return a;
}

/// conv2d_backward_weight(grad_output, input) -> grad of the
/// Kx(C/groups)xRxS weight (its shape is the output's).
KernelAttrs conv2dBackwardWeight(Rules &r) {
  r.arity(2, 2, 1);
  const TensorInfo &dy = r.in(0), &x = r.in(1), &dw = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", x, "input");
  r.sameDType(dy, "grad_output", dw, "output 0");
  Conv2DAttrs a = convAttrs(r);
  Shape fwd = convOutputShape(r, x, "input", dw, "output 0", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd),
            " (the conv2d output for input ", formatShape(x.shape),
            " and weight ", formatShape(dw.shape), "), got ",
            formatShape(dy.shape));
  return a;
}

/// relu/gelu/sigmoid/tanh/leaky_relu/elu_backward(grad, saved): every type
/// matches.
KernelAttrs activationBackward(Rules &r, std::optional<double> alphaDefault) {
  r.arity(2, 2, 1);
  ActivationBackwardAttrs a;
  if (alphaDefault) {
    a.alpha = r.f64("alpha", *alphaDefault);
    a.fromOutput = r.boolean("from_output", false);
  }
  r.done();
  const TensorInfo &g = r.in(0);
  r.isFloat(g, "grad");
  r.sameType(g, "grad", r.in(1), "saved");
  r.output(0, g.dtype, g.shape);
  if (alphaDefault)
    return a;
  return std::monostate{};
}

/// batch_norm_backward / layer_norm_backward(grad_output, x, gamma) ->
/// (grad_x, grad_gamma, grad_beta). gamma may have another float dtype than
/// x, as in the forward ops.
KernelAttrs normBackward(Rules &r, bool isBatch) {
  r.arity(3, 3, 3);
  NormBackwardAttrs a;
  a.epsilon = r.f64("epsilon", 1e-5);
  r.done();
  const TensorInfo &x = r.in(1), &gamma = r.in(2);
  r.isFloat(x, "x");
  r.sameType(x, "x", r.in(0), "grad_output");
  r.isFloat(gamma, "gamma");
  if (isBatch) {
    r.minRank(x, "x", 2);
    r.rank(gamma, "gamma", 1);
    if (gamma.shape[0] != x.shape[1])
      r.error("expected gamma of ", x.shape[1],
              " elements (x's dimension 1), got ", gamma.shape[0]);
  } else {
    const Shape &xs = x.shape, &gs = gamma.shape;
    if (gs.empty() || gs.size() > xs.size() ||
        !std::equal(gs.begin(), gs.end(), xs.end() - gs.size()))
      r.error("expected gamma's shape (", formatShape(gs),
              ") to be a non-empty suffix of x's shape (", formatShape(xs),
              ")");
  }
  if (!(a.epsilon > 0))
    r.error("expected 'epsilon' > 0, got ", a.epsilon);
  r.output(0, x.dtype, x.shape);
  r.output(1, gamma.dtype, gamma.shape);
  r.output(2, gamma.dtype, gamma.shape);
  return a;
}

/// The attributes of the pooling backward ops (strides required, as in the
/// dialect) and the forward output shape for an input of shape `x`.
Pool2DAttrs poolAttrs(Rules &r) {
  Pool2DAttrs a;
  auto kernel = r.ints("kernel_size", 2, 1, true);
  a.kernelSize = {(*kernel)[0], (*kernel)[1]};
  auto strides = r.ints("strides", 2, 1, true);
  a.strides = {(*strides)[0], (*strides)[1]};
  a.padding = r.pair("padding", 0, {0, 0});
  r.done();
  return a;
}

Shape poolOutputShape(Rules &r, const TensorInfo &x, const char *xName,
                      const Pool2DAttrs &a) {
  r.rank(x, xName, 4, "NxCxHxW");
  Shape out = x.shape;
  for (int d = 0; d < 2; ++d) {
    // As the forward rule: every window holds a real element.
    if (a.padding[d] > a.kernelSize[d] / 2)
      r.error("expected 'padding' at most half of 'kernel_size', got padding ",
              a.padding[d], " for kernel ", a.kernelSize[d]);
    int64_t extent = x.shape[2 + d] - a.kernelSize[d] + 2 * a.padding[d];
    if (extent < 0)
      r.error(xName, " ", x.shape[2], "x", x.shape[3], " with padding [",
              a.padding[0], ", ", a.padding[1], "] is smaller than the window ",
              a.kernelSize[0], "x", a.kernelSize[1]);
    out[2 + d] = extent / a.strides[d] + 1;
  }
  return out;
}

/// max_pool2d_backward(grad_output, x) -> grad of x.
KernelAttrs maxPool2dBackward(Rules &r) {
  r.arity(2, 2, 1);
  Pool2DAttrs a = poolAttrs(r);
  const TensorInfo &dy = r.in(0), &x = r.in(1);
  r.isFloat(x, "x");
  r.sameDType(x, "x", dy, "grad_output");
  Shape fwd = poolOutputShape(r, x, "x", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd), ", got ",
            formatShape(dy.shape));
  r.output(0, x.dtype, x.shape);
  return a;
}

/// avg_pool2d_backward(grad_output) -> grad of the input (the output's
/// shape).
KernelAttrs avgPool2dBackward(Rules &r) {
  r.arity(1, 1, 1);
  Pool2DAttrs a = poolAttrs(r);
  const TensorInfo &dy = r.in(0), &dx = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", dx, "output 0");
  Shape fwd = poolOutputShape(r, dx, "output 0", a);
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd),
            " (the avg_pool2d output for an input of shape ",
            formatShape(dx.shape), "), got ", formatShape(dy.shape));
  return a;
}

KernelAttrs globalAvgPool2dBackward(Rules &r) {
  r.arity(1, 1, 1);
  r.done();
  const TensorInfo &dy = r.in(0), &dx = r.out(0);
  r.isFloat(dy, "grad_output");
  r.sameDType(dy, "grad_output", dx, "output 0");
  r.rank(dx, "output 0", 4, "NxCxHxW");
  Shape fwd = {dx.shape[0], dx.shape[1]};
  if (dy.shape != fwd)
    r.error("expected grad_output shape ", formatShape(fwd), ", got ",
            formatShape(dy.shape));
  return std::monostate{};
}

KernelAttrs softmaxBackward(Rules &r) {
  r.arity(2, 2, 1);
  SoftmaxAttrs a;
  int64_t axis = r.i64("axis", -1);
  r.done();
  const TensorInfo &g = r.in(0);
  r.isFloat(g, "grad");
  r.sameType(g, "grad", r.in(1), "output");
  r.minRank(g, "grad", 1);
  a.axis = r.axis(axis, static_cast<int64_t>(g.shape.size()), "axis");
  r.output(0, g.dtype, g.shape);
  return a;
}

/// slice_backward(grad) -> zeros of the output's shape with grad scattered
/// where the slice read.
KernelAttrs sliceBackward(Rules &r) {
  r.arity(1, 1, 1);
  SliceAttrs a;
  const TensorInfo &g = r.in(0), &dx = r.out(0);
  size_t rank = dx.shape.size();
  a.offsets = *r.ints("offsets", rank, 0, true);
  a.sizes = *r.ints("sizes", rank, 1, true);
  a.strides = *r.ints("strides", rank, 1, true);
  r.done();
  r.isFloat(g, "grad");
  r.sameDType(g, "grad", dx, "output 0");
  for (size_t d = 0; d < rank; ++d) {
    int64_t last = r.add(a.offsets[d],
                         r.mul(a.sizes[d] - 1, a.strides[d], "slice"), "slice");
    if (last >= dx.shape[d])
      r.error("slice of dimension ", d, " reaches index ", last,
              " but the output's dimension has size ", dx.shape[d]);
  }
  if (g.shape != a.sizes)
    r.error("expected grad shape ", formatShape(a.sizes),
            " (the slice's 'sizes'), got ", formatShape(g.shape));
  return a;
}

KernelAttrs upsampleBackward(Rules &r) {
  r.arity(1, 1, 1);
  UpsampleAttrs a;
  a.scale = r.i64("scale", std::nullopt);
  r.done();
  const TensorInfo &g = r.in(0), &dx = r.out(0);
  r.isFloat(g, "grad");
  r.sameDType(g, "grad", dx, "output 0");
  r.rank(dx, "output 0", 4, "NxCxHxW");
  if (a.scale < 1)
    r.error("expected 'scale' >= 1, got ", a.scale);
  Shape fwd = dx.shape;
  fwd[2] = r.mul(fwd[2], a.scale, "upsampling");
  fwd[3] = r.mul(fwd[3], a.scale, "upsampling");
  if (g.shape != fwd)
    r.error("expected grad shape ", formatShape(fwd), ", got ",
            formatShape(g.shape));
  return a;
}

/// embedding_backward(grad, ids) -> the VxD table's gradient.
KernelAttrs embeddingBackward(Rules &r) {
  r.arity(2, 2, 1);
  r.done();
  const TensorInfo &g = r.in(0), &ids = r.in(1), &table = r.out(0);
  r.isFloat(g, "grad");
  r.isInteger(ids, "ids");
  r.sameDType(g, "grad", table, "output 0");
  r.rank(table, "output 0", 2, "VxD");
  Shape fwd = ids.shape;
  fwd.push_back(table.shape[1]);
  if (g.shape != fwd)
    r.error("expected grad shape ", formatShape(fwd), " (ids ",
            formatShape(ids.shape), " by ", table.shape[1], " features), got ",
            formatShape(g.shape));
  return std::monostate{};
}

void scalarLossGrad(Rules &r) {
  const TensorInfo &gl = r.in(0);
  r.isFloat(gl, "grad_loss");
  if (!gl.shape.empty())
    r.error("expected a 0-d grad_loss, got shape ", formatShape(gl.shape));
}

KernelAttrs crossEntropyBackward(Rules &r) {
  r.arity(3, 3, 1);
  r.done();
  scalarLossGrad(r);
  const TensorInfo &logits = r.in(1), &labels = r.in(2);
  r.isFloat(logits, "logits");
  r.rank(logits, "logits", 2, "NxC");
  r.isInteger(labels, "labels");
  r.rank(labels, "labels", 1, "N");
  if (labels.shape[0] != logits.shape[0])
    r.error("expected ", logits.shape[0],
            " labels (one per row of logits), got ", labels.shape[0]);
  r.output(0, logits.dtype, logits.shape);
  return std::monostate{};
}

KernelAttrs mseLossBackward(Rules &r) {
  r.arity(3, 3, 1);
  r.done();
  scalarLossGrad(r);
  const TensorInfo &p = r.in(1);
  r.isFloat(p, "prediction");
  r.sameType(p, "prediction", r.in(2), "target");
  r.output(0, p.dtype, p.shape);
  return std::monostate{};
}

//===----------------------------------------------------------------------===//
// Optimizer rules: param, grad and buffers of one type, every new value of
// that type too.
//===----------------------------------------------------------------------===//

/// A 0-d tensor of dtype `dtype` (a flag, a loss scale, a counter).
void scalarOf(Rules &r, const TensorInfo &t, const std::string &name,
              DType dtype) {
  if (t.dtype != dtype)
    r.error("expected ", name, " of dtype ", dtypeName(dtype), ", got ",
            dtypeName(t.dtype));
  if (!t.shape.empty())
    r.error("expected a 0-d ", name, ", got shape ", formatShape(t.shape));
}

void sameTypes(Rules &r, std::initializer_list<const char *> names) {
  const TensorInfo &p = r.in(0);
  r.isFloat(p, "param");
  size_t i = 0;
  for (const char *name : names) {
    if (i)
      r.sameType(p, "param", r.in(i), name);
    ++i;
  }
  for (size_t o = 0; o < r.numOutputs(); ++o)
    r.output(o, p.dtype, p.shape);
}

/// The optional trailing `skip` operand of the optimizer updates (input
/// `index`): a 0-d f32 flag; when nonzero the step leaves every value as it
/// was (a step skipped by dynamic loss scaling).
void optionalSkip(Rules &r, size_t index) {
  if (r.numInputs() > index)
    scalarOf(r, r.in(index), "skip", DType::F32);
}

KernelAttrs sgdUpdate(Rules &r) {
  r.arity(2, 3, 1);
  SgdAttrs a;
  a.lr = r.f64("lr", std::nullopt);
  a.weightDecay = r.f64("weight_decay", 0.0);
  r.done();
  sameTypes(r, {"param", "grad"});
  optionalSkip(r, 2);
  return a;
}

KernelAttrs sgdMomentumUpdate(Rules &r) {
  r.arity(3, 4, 2);
  SgdMomentumAttrs a;
  a.lr = r.f64("lr", std::nullopt);
  a.momentum = r.f64("momentum", std::nullopt);
  a.dampening = r.f64("dampening", 0.0);
  a.weightDecay = r.f64("weight_decay", 0.0);
  a.nesterov = r.boolean("nesterov", false);
  r.done();
  sameTypes(r, {"param", "grad", "momentum_buffer"});
  optionalSkip(r, 3);
  return a;
}

KernelAttrs adamUpdate(Rules &r) {
  r.arity(5, 6, 3);
  AdamAttrs a;
  a.lr = r.f64("lr", std::nullopt);
  a.beta1 = r.f64("beta1", 0.9);
  a.beta2 = r.f64("beta2", 0.999);
  a.eps = r.f64("eps", 1e-8);
  a.weightDecay = r.f64("weight_decay", 0.0);
  r.done();
  if (!(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1))
    r.error("expected 'beta1' and 'beta2' in [0, 1), got ", a.beta1, " and ",
            a.beta2);
  if (!(a.eps > 0))
    r.error("expected 'eps' > 0, got ", a.eps);
  sameTypes(r, {"param", "grad", "exp_avg", "exp_avg_sq"});
  const TensorInfo &step = r.in(4);
  r.isFloat(step, "step");
  if (!step.shape.empty())
    r.error("expected a 0-d step, got shape ", formatShape(step.shape));
  optionalSkip(r, 5);
  return a;
}

//===----------------------------------------------------------------------===//
// Mixed precision: casts and dynamic loss scaling (torch.amp.GradScaler)
//===----------------------------------------------------------------------===//

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
KernelAttrs foundInf(Rules &r) {
  r.arity(1, SIZE_MAX, 1);
  r.done();
  for (size_t i = 0; i < r.numInputs(); ++i)
    r.isFloat(r.in(i), concat("input ", i));
  r.output(0, DType::F32, {});
  return std::monostate{};
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

} // namespace

KernelAttrs checkStep(KernelKind kind, const json &attrs,
                      const std::vector<const TensorInfo *> &inputs,
                      const std::vector<const TensorInfo *> &outputs,
                      const std::string &where) {
  Rules r(kind, attrs, inputs, outputs, where);
  switch (kind) {
  case KernelKind::Conv2D:
    return conv2d(r);
  case KernelKind::Linear:
    return linear(r);
  case KernelKind::MatMul:
    return matmul(r);
  case KernelKind::Relu:
  case KernelKind::Gelu:
  case KernelKind::Sigmoid:
  case KernelKind::Tanh:
    return unary(r, std::nullopt);
  case KernelKind::LeakyRelu:
    return unary(r, 0.01);
  case KernelKind::Elu:
    return unary(r, 1.0);
  case KernelKind::Add:
  case KernelKind::Sub:
  case KernelKind::Mul:
  case KernelKind::Div:
    return binary(r);
  case KernelKind::BatchNorm:
    return batchNorm(r);
  case KernelKind::BatchNormInference:
    return batchNormInference(r);
  case KernelKind::LayerNorm:
    return layerNorm(r);
  case KernelKind::MaxPool2D:
  case KernelKind::AvgPool2D:
    return pool2d(r);
  case KernelKind::GlobalAvgPool2D:
    return globalAvgPool2d(r);
  case KernelKind::Softmax:
    return softmax(r);
  case KernelKind::Dropout:
    return dropout(r);
  case KernelKind::Reshape:
    return reshape(r);
  case KernelKind::Transpose:
    return transpose(r);
  case KernelKind::Slice:
    return slice(r);
  case KernelKind::Concat:
    return concatRule(r);
  case KernelKind::UpsampleNearest2D:
    return upsample(r);
  case KernelKind::Embedding:
    return embedding(r);
  case KernelKind::CrossEntropy:
    return crossEntropy(r);
  case KernelKind::MseLoss:
    return mseLoss(r);
  case KernelKind::SumTo:
    return sumTo(r);
  case KernelKind::Conv2DBackwardInput:
    return conv2dBackwardInput(r);
  case KernelKind::Conv2DBackwardWeight:
    return conv2dBackwardWeight(r);
  case KernelKind::ReluBackward:
  case KernelKind::GeluBackward:
  case KernelKind::SigmoidBackward:
  case KernelKind::TanhBackward:
    return activationBackward(r, std::nullopt);
  case KernelKind::LeakyReluBackward:
    return activationBackward(r, 0.01);
  case KernelKind::EluBackward:
    return activationBackward(r, 1.0);
  case KernelKind::BatchNormBackward:
    return normBackward(r, true);
  case KernelKind::LayerNormBackward:
    return normBackward(r, false);
  case KernelKind::MaxPool2DBackward:
    return maxPool2dBackward(r);
  case KernelKind::AvgPool2DBackward:
    return avgPool2dBackward(r);
  case KernelKind::GlobalAvgPool2DBackward:
    return globalAvgPool2dBackward(r);
  case KernelKind::SoftmaxBackward:
    return softmaxBackward(r);
  case KernelKind::SliceBackward:
    return sliceBackward(r);
  case KernelKind::UpsampleNearest2DBackward:
    return upsampleBackward(r);
  case KernelKind::EmbeddingBackward:
    return embeddingBackward(r);
  case KernelKind::CrossEntropyBackward:
    return crossEntropyBackward(r);
  case KernelKind::MseLossBackward:
    return mseLossBackward(r);
  case KernelKind::BatchNormAct:
    return batchNormAct(r);
  case KernelKind::BatchNormActBackward:
    return batchNormActBackward(r);
  case KernelKind::SgdUpdate:
    return sgdUpdate(r);
  case KernelKind::SgdMomentumUpdate:
    return sgdMomentumUpdate(r);
  case KernelKind::AdamUpdate:
    return adamUpdate(r);
  case KernelKind::Cast:
    return cast(r);
  case KernelKind::FoundInf:
    return foundInf(r);
  case KernelKind::Unscale:
    return unscale(r);
  case KernelKind::UpdateLossScale:
    return updateLossScale(r);
  case KernelKind::Select:
    return selectRule(r);
  }
  r.error("internal error: no rule for kernel '", kernelName(kind), "'");
}

} // namespace memopt::runtime::detail
