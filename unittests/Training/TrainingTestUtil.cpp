//===- TrainingTestUtil.cpp - compile and run graphs in tests -------------===//

#include "TrainingTestUtil.h"

#include "TestPasses.h"
#include "memopt/InitAll.h"
#include "memopt/runtime/Element.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace memopt;
using namespace memopt::testing;
using runtime::DType;

namespace {

std::vector<double> decode(const std::vector<uint8_t> &bytes, DType dtype) {
  size_t size = runtime::dtypeSize(dtype);
  std::vector<double> out(bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = runtime::readElement(bytes.data() + i * size, dtype);
  return out;
}

} // namespace

std::unique_ptr<CompiledStep> CompiledStep::compile(const std::string &source,
                                                    const std::string &pipeline,
                                                    const std::string &device) {
  static bool registered = [] {
    registerAllPasses();
    memopt::test::registerAllTestPasses();
    return true;
  }();
  (void)registered;
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source),
                             llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(sources, &context, os);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources, &context);
  if (!module) {
    ADD_FAILURE() << "parse failed:\n" << diagnostics;
    return nullptr;
  }
  CompileOptions options;
  options.pipeline = pipeline;
  llvm::FailureOr<CompiledGraph> graph =
      compileToPlan(*module, sources, options);
  if (mlir::failed(graph)) {
    ADD_FAILURE() << "compilation failed:\n" << diagnostics;
    return nullptr;
  }
  auto step = std::make_unique<CompiledStep>();
  step->compiled = std::move(*graph);
  step->planPtr = runtime::Plan::parse(step->compiled.planJson);
  step->executor = std::make_unique<runtime::Executor>(step->planPtr, device);
  return step;
}

std::unique_ptr<CompiledStep>
CompiledStep::onDevice(const std::string &device) const {
  auto step = std::make_unique<CompiledStep>();
  step->compiled = compiled;
  step->planPtr = planPtr;
  step->executor = std::make_unique<runtime::Executor>(planPtr, device);
  return step;
}

void CompiledStep::setArgument(size_t i, const std::vector<double> &values) {
  const runtime::TensorInfo &info = planPtr->argumentTensor(i);
  ASSERT_EQ(values.size(), static_cast<size_t>(info.numElements));
  std::vector<uint8_t> bytes(info.bytes);
  for (size_t k = 0; k < values.size(); ++k)
    runtime::writeElement(bytes.data() + k * runtime::dtypeSize(info.dtype),
                          info.dtype, values[k]);
  executor->setArgument(i, info.dtype, info.shape, bytes.data(), bytes.size());
}

std::vector<double> CompiledStep::argument(size_t i) const {
  const runtime::TensorInfo &info = planPtr->argumentTensor(i);
  std::vector<uint8_t> bytes(info.bytes);
  executor->getArgument(i, bytes.data(), bytes.size());
  return decode(bytes, info.dtype);
}

void CompiledStep::randomize(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (size_t i = 0; i < numArguments(); ++i) {
    const runtime::TensorInfo &info = planPtr->argumentTensor(i);
    const ArgumentInit &init = compiled.argumentInit[i];
    std::vector<double> values(info.numElements);
    for (double &v : values) {
      if (init.kind == ArgumentInit::Kind::RandomIndices)
        v = static_cast<double>(
            std::uniform_int_distribution<int64_t>(0, init.limit - 1)(rng));
      else if (init.kind == ArgumentInit::Kind::Constant &&
               planPtr->arguments[i].role != runtime::ArgumentRole::Param)
        v = init.value; // running statistics, optimizer state
      else
        v = uniform(rng);
    }
    setArgument(i, values);
  }
}

void CompiledStep::run(uint64_t step) { executor->run(step); }

std::vector<double> CompiledStep::result(size_t i) const {
  const runtime::TensorInfo &info = planPtr->resultTensor(i);
  std::vector<uint8_t> bytes(info.bytes);
  executor->getResult(i, bytes.data(), bytes.size());
  return decode(bytes, info.dtype);
}

namespace {
std::string readTextFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
} // namespace

const char *const memopt::testing::kBiasedOnnxHead = R"mlir(
func.func @head(%x: tensor<2x67x16xf32>, %w: tensor<16x16xf32> {memopt.param},
                %head: tensor<300x16xf32> {memopt.param},
                %b: tensor<300xf32> {memopt.param}, %labels: tensor<134xi64>)
    -> tensor<f32> {
  %h = memopt.linear %x, %w : tensor<2x67x16xf32>, tensor<16x16xf32>
  %t = memopt.tanh %h : tensor<2x67x16xf32>
  %wt = memopt.transpose %head {permutation = array<i64: 1, 0>} : tensor<300x16xf32>
  %m = memopt.matmul %t, %wt : tensor<2x67x16xf32>, tensor<16x300xf32>
  %a = memopt.add %m, %b : tensor<2x67x300xf32>, tensor<300xf32>
  %logits = memopt.reshape %a : tensor<2x67x300xf32> -> tensor<134x300xf32>
  %loss = memopt.cross_entropy %logits, %labels : tensor<134x300xf32>, tensor<134xi64>
  return %loss : tensor<f32>
}
)mlir";

std::string memopt::testing::exampleSource(const std::string &name) {
  std::string text =
      readTextFile(std::string(MEMOPT_SOURCE_DIR) + "/examples/" + name);
  EXPECT_FALSE(text.empty()) << "missing example " << name;
  return text;
}

std::string memopt::testing::suiteModelSource(const std::string &name) {
  std::string text =
      readTextFile(std::string(MEMOPT_MODEL_DIR) + "/" + name + ".mlir");
  EXPECT_FALSE(text.empty()) << "missing generated model " << name;
  return text;
}

size_t memopt::testing::countOpsAfter(
    const std::string &source, const std::string &pipeline,
    const std::function<bool(mlir::Operation *)> &pred) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  EXPECT_TRUE(module);
  if (!module)
    return 0;
  mlir::PassManager pm(&context);
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  EXPECT_TRUE(
      mlir::succeeded(mlir::parsePassPipeline(pipeline, pm, errorStream)))
      << error;
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  size_t count = 0;
  module->walk([&](mlir::Operation *op) { count += pred(op); });
  return count;
}

void memopt::testing::expectGradientsMatchFiniteDifferences(
    const std::string &source, const std::string &gradientPipeline,
    uint64_t seed, const std::string &label) {
  auto forward = CompiledStep::compile(source, "");
  auto gradient = CompiledStep::compile(source, gradientPipeline);
  ASSERT_TRUE(forward && gradient);
  forward->randomize(seed);
  gradient->randomize(seed);
  gradient->run();
  forward->run();
  ASSERT_EQ(gradient->result(0), forward->result(0))
      << label << ": the training graph's loss differs from the forward "
      << "graph's";

  std::vector<size_t> params;
  for (size_t i = 0; i < forward->numArguments(); ++i)
    if (forward->plan().arguments[i].role == runtime::ArgumentRole::Param)
      params.push_back(i);
  size_t firstGrad = gradient->plan().results.size() - params.size();
  for (size_t k = 0; k < params.size(); ++k)
    expectGradientMatchesFiniteDifferences(
        *forward, params[k], gradient->result(firstGrad + k), label);
}

void memopt::testing::expectGradientMatchesFiniteDifferences(
    CompiledStep &forward, size_t arg, const std::vector<double> &grad,
    const std::string &label) {
  const double h = 1e-6;
  std::vector<double> base = forward.argument(arg);
  ASSERT_EQ(grad.size(), base.size());
  for (size_t e = 0; e < base.size(); ++e) {
    std::vector<double> v = base;
    v[e] = base[e] + h;
    forward.setArgument(arg, v);
    forward.run();
    double plus = forward.result(0)[0];
    v[e] = base[e] - h;
    forward.setArgument(arg, v);
    forward.run();
    double minus = forward.result(0)[0];
    double fd = (plus - minus) / (2 * h);
    EXPECT_NEAR(grad[e], fd, 1e-6 + 1e-5 * std::fabs(fd))
        << label << ": d loss / d " << forward.plan().arguments[arg].name << "["
        << e << "]";
  }
  forward.setArgument(arg, base);
}

void memopt::testing::expectResultsCloseToRounding(CompiledStep &base,
                                                   CompiledStep &other,
                                                   uint64_t seed,
                                                   double tolerance) {
  ASSERT_EQ(base.plan().results.size(), other.plan().results.size());
  base.randomize(seed);
  other.randomize(seed);
  base.run(3);
  other.run(3);
  for (size_t r = 0; r < base.plan().results.size(); ++r) {
    std::vector<double> want = base.result(r), got = other.result(r);
    ASSERT_EQ(want.size(), got.size()) << "result " << r;
    double scale = 0;
    for (double w : want)
      scale = std::max(scale, std::fabs(w));
    ASSERT_GT(scale, 0) << "result " << r << " is all zeros";
    for (size_t e = 0; e < want.size(); ++e)
      ASSERT_LE(std::fabs(got[e] - want[e]), tolerance * scale)
          << "result " << r << "[" << e << "]: " << got[e] << ", expected "
          << want[e] << " (largest magnitude " << scale << ")";
  }
}

size_t memopt::testing::countKernels(const CompiledStep &step,
                                     runtime::KernelKind kind) {
  size_t n = 0;
  for (const runtime::Step &s : step.plan().steps)
    n += s.kernel == kind;
  return n;
}

void memopt::testing::expectStepsBitIdentical(CompiledStep &base,
                                              CompiledStep &other, int steps,
                                              uint64_t seed) {
  base.randomize(seed);
  other.randomize(seed);
  for (int step = 0; step < steps; ++step) {
    base.run(step);
    other.run(step);
    for (size_t r = 0; r < base.plan().results.size(); ++r)
      ASSERT_EQ(base.result(r), other.result(r))
          << "result " << r << " at step " << step;
    base.applyUpdates();
    other.applyUpdates();
    for (size_t arg = 0; arg < base.numArguments(); ++arg)
      ASSERT_EQ(base.argument(arg), other.argument(arg))
          << base.plan().arguments[arg].name << " after step " << step;
  }
}
