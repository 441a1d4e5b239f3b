//===- KernelRulesImpl.h - the rules' shared context ------------*- C++ -*-===//
//
// Internal to KernelRules*.cpp: Rules, the validation context of one step
// (its tensors, its attributes and the message prefix), the message helpers
// of KernelRules.cpp, and one rule per kernel (or family of kernels), each
// defined in the KernelRules*.cpp file of its op family. The backward rules
// follow MemOptGradOps.td; the compiler's verifiers are in
// lib/Dialect/MemOpt/IR/MemOptGradOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_LIB_KERNELRULESIMPL_H
#define MEMOPT_RUNTIME_LIB_KERNELRULESIMPL_H

#include "JsonText.h"
#include "KernelRules.h"
#include "memopt/Contract/ShapeRule.h"
#include "memopt/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace memopt::runtime::detail {

using nlohmann::json;

/// `[1, 2, 3]`.
std::string formatInts(const std::vector<int64_t> &v);

/// `8x64 f32`: a tensor's shape and dtype.
std::string describe(const TensorInfo &t);

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
    if (!isIndexDType(t.dtype))
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
    int64_t normalised;
    if (shapes::ShapeProblem problem =
            shapes::normaliseAxis(a, r, name, normalised);
        !problem.empty())
      error(problem);
    return normalised;
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
// Rules, by op family (each returns the step's typed attributes)
//===----------------------------------------------------------------------===//

// Convolution and pooling (KernelRulesConv.cpp).
KernelAttrs conv2d(Rules &r);
KernelAttrs conv2dBackwardInput(Rules &r);
KernelAttrs conv2dBackwardWeight(Rules &r);
KernelAttrs pool2d(Rules &r);
KernelAttrs globalAvgPool2d(Rules &r);
KernelAttrs maxPool2dBackward(Rules &r);
KernelAttrs avgPool2dBackward(Rules &r);
KernelAttrs globalAvgPool2dBackward(Rules &r);

// linear, matmul (KernelRulesLinear.cpp).
KernelAttrs linear(Rules &r);
KernelAttrs matmul(Rules &r);

// Element-wise ops (KernelRulesElementwise.cpp). `alphaDefault` is the
// default of the activation's `alpha`, nullopt for those without one.
KernelAttrs unary(Rules &r, std::optional<double> alphaDefault);
KernelAttrs binary(Rules &r);
KernelAttrs softmax(Rules &r);
KernelAttrs dropout(Rules &r);
KernelAttrs sumTo(Rules &r);
KernelAttrs activationBackward(Rules &r, std::optional<double> alphaDefault);
/// clamp(x) and clamp_backward(grad, saved): optional finite bounds,
/// min <= max.
KernelAttrs clamp(Rules &r, bool backward);
KernelAttrs compare(Rules &r);
KernelAttrs reduceExtremum(Rules &r);
KernelAttrs reduceExtremumBackward(Rules &r);
KernelAttrs softmaxBackward(Rules &r);

// attention, attention_backward (KernelRulesAttention.cpp).
KernelAttrs attention(Rules &r);
KernelAttrs attentionBackward(Rules &r);

// Normalisation (KernelRulesNorm.cpp).
KernelAttrs batchNorm(Rules &r);
KernelAttrs batchNormAct(Rules &r);
KernelAttrs batchNormActBackward(Rules &r);
KernelAttrs batchNormInference(Rules &r);
/// layer_norm (x, gamma, beta) or rms_norm (x, gamma).
KernelAttrs layerNorm(Rules &r, bool rms);
/// The normalisations whose backward kernels share normBackward's rule.
enum class NormRule { Batch, Layer, Rms };
KernelAttrs normBackward(Rules &r, NormRule norm);

// Data movement (KernelRulesShape.cpp).
KernelAttrs reshape(Rules &r);
KernelAttrs transpose(Rules &r);
KernelAttrs slice(Rules &r);
KernelAttrs concatRule(Rules &r);
KernelAttrs upsample(Rules &r);
KernelAttrs embedding(Rules &r);
KernelAttrs sliceBackward(Rules &r);
KernelAttrs upsampleBackward(Rules &r);
KernelAttrs embeddingBackward(Rules &r);

// Losses (KernelRulesLoss.cpp).
KernelAttrs crossEntropy(Rules &r);
KernelAttrs mseLoss(Rules &r);
KernelAttrs crossEntropyBackward(Rules &r);
KernelAttrs linearCrossEntropy(Rules &r);
KernelAttrs linearCrossEntropyBackward(Rules &r);
KernelAttrs linearCrossEntropyWithGrad(Rules &r);
KernelAttrs mseLossBackward(Rules &r);

// Collectives (KernelRulesOptimizer.cpp).
KernelAttrs allReduce(Rules &r);
KernelAttrs reduceScatter(Rules &r);
KernelAttrs squareSum(Rules &r);
KernelAttrs broadcast(Rules &r);
KernelAttrs allGather(Rules &r);

// Optimizers and mixed precision (KernelRulesOptimizer.cpp).
KernelAttrs sgdUpdate(Rules &r);
KernelAttrs sgdMomentumUpdate(Rules &r);
KernelAttrs adamUpdate(Rules &r);
KernelAttrs adam8bitUpdate(Rules &r);
KernelAttrs adafactorUpdate(Rules &r);
KernelAttrs clipCoefficient(Rules &r);
KernelAttrs cast(Rules &r);
KernelAttrs foundInf(Rules &r);
KernelAttrs unscale(Rules &r);
KernelAttrs updateLossScale(Rules &r);
KernelAttrs selectRule(Rules &r);

} // namespace memopt::runtime::detail

#endif // MEMOPT_RUNTIME_LIB_KERNELRULESIMPL_H
