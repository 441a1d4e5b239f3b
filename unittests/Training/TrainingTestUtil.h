//===- TrainingTestUtil.h - compile and run graphs in tests -----*- C++ -*-===//
//
// Compiles MLIR source through memopt's driver and runs the resulting plan on
// the CPU runtime, for the differential and gradient tests.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_UNITTESTS_TRAINING_TRAININGTESTUTIL_H
#define MEMOPT_UNITTESTS_TRAINING_TRAININGTESTUTIL_H

#include "memopt/Driver/Compile.h"
#include "memopt/runtime/Executor.h"
#include "memopt/runtime/Plan.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace memopt::testing {

/// A compiled graph ready to run, with f64/f32/i64 host access by argument.
class CompiledStep {
public:
  /// Compiles `source` with `pipeline` run before lowering; fails the
  /// current test (and returns null) on any diagnostic.
  static std::unique_ptr<CompiledStep>
  compile(const std::string &source, const std::string &pipeline,
          const std::string &device = "cpu");
  /// The same plan on another device (a fresh executor; arguments unset).
  /// Throws runtime::Error when the device is not usable.
  std::unique_ptr<CompiledStep> onDevice(const std::string &device) const;

  const runtime::Plan &plan() const { return *planPtr; }
  const CompiledGraph &graph() const { return compiled; }
  size_t numArguments() const { return planPtr->arguments.size(); }

  /// Sets argument `i` from doubles (converted to its dtype).
  void setArgument(size_t i, const std::vector<double> &values);
  std::vector<double> argument(size_t i) const;
  /// Fills every argument: float values uniform in [-1, 1], integer ones as
  /// the graph's ArgumentInit allows (labels, ids), from `seed`.
  void randomize(uint64_t seed);

  void run(uint64_t step = 0);
  std::vector<double> result(size_t i) const;
  void applyUpdates() { executor->applyUpdates(); }

private:
  CompiledGraph compiled;
  std::shared_ptr<const runtime::Plan> planPtr;
  std::unique_ptr<runtime::Executor> executor;
};

/// Compiles `source` as it is (the forward graph, returning the loss) and
/// with `gradientPipeline` (which must return the loss and then every
/// parameter's gradient, as `memopt-autodiff{optimizer=none}` does), both
/// with arguments drawn from `seed`, and checks that the losses are equal
/// and every gradient element is within 1e-6 + 1e-5·|fd| of the central
/// difference (h = 1e-6). Failures name `label` and the element.
void expectGradientsMatchFiniteDifferences(const std::string &source,
                                           const std::string &gradientPipeline,
                                           uint64_t seed,
                                           const std::string &label);

/// Checks `grad` (d loss / d argument `arg` of `forward`, whose result 0 is
/// the loss) element by element against the central difference (h = 1e-6)
/// within 1e-6 + 1e-5·|fd|, and restores the argument.
void expectGradientMatchesFiniteDifferences(CompiledStep &forward, size_t arg,
                                            const std::vector<double> &grad,
                                            const std::string &label);

/// Starts `base` and `other` (two compilations of one graph) from the same
/// arguments (drawn from `seed`), runs `steps` training steps applying the
/// updates, and asserts that every result and every argument is bit for bit
/// the same after each step. For transformations that change only order or
/// storage.
void expectStepsBitIdentical(CompiledStep &base, CompiledStep &other, int steps,
                             uint64_t seed);

/// Runs `base` and `other` (two compilations of one graph whose results
/// should agree to rounding, as a fused op's and the unfused ops') once on
/// the same arguments, drawn from `seed`, and asserts that every element of
/// every result is within `tolerance` times the largest magnitude of its
/// result in `base` (which must not be all zeros).
void expectResultsCloseToRounding(CompiledStep &base, CompiledStep &other,
                                  uint64_t seed, double tolerance);

/// The number of steps of `step`'s plan that call `kind`.
size_t countKernels(const CompiledStep &step, runtime::KernelKind kind);

/// The text of examples/<name> in the source tree.
std::string exampleSource(const std::string &name);
/// The text of a suite model generated for the tests at build time
/// (unittests/Training/CMakeLists.txt); fails the current test if missing.
std::string suiteModelSource(const std::string &name);
/// A biased LM head as the ONNX exporters write a linear layer (Transpose,
/// MatMul, Add, Reshape) over 2x67x16 hidden states: 134 rows, 300
/// classes, the bias a parameter.
extern const char *const kBiasedOnnxHead;
/// Runs `pipeline` on `source` and counts the ops `pred` accepts; fails the
/// current test on a parse or pass error. Passes must be registered (any
/// CompiledStep::compile registers them).
size_t countOpsAfter(const std::string &source, const std::string &pipeline,
                     const std::function<bool(mlir::Operation *)> &pred);

} // namespace memopt::testing

#endif // MEMOPT_UNITTESTS_TRAINING_TRAININGTESTUTIL_H
