//===- memopt-run.cpp - compile a memopt graph and execute it -------------===//
//
// `memopt-run model.mlir`: parses the graph, compiles it in process down to a
// plan, initialises parameters as PyTorch does (or loads them), makes seeded
// synthetic data, and executes the step on the chosen device.
//
//===----------------------------------------------------------------------===//

#include "DataFeed.h"
#include "HostTensor.h"
#include "Progress.h"
#include "Trace.h"

#include "memopt/Contract/CollectiveShapes.h"
#include "memopt/Dialect/MemOpt/Transforms/Passes.h"
#include "memopt/Driver/Compile.h"
#include "memopt/InitAll.h"
#include "memopt/Support/InputLimits.h"
#include "memopt/runtime/Backend.h"
#include "memopt/runtime/BlasCore.h"
#include "memopt/runtime/Collectives.h"
#include "memopt/runtime/CpuThreads.h"
#include "memopt/runtime/Error.h"
#include "memopt/runtime/Executor.h"
#ifdef MEMOPT_HAVE_MPI
#include "memopt/runtime/MpiCollectives.h"
#endif
#ifdef MEMOPT_HAVE_NCCL
#include "memopt/runtime/NcclCollectives.h"
#endif
#include "memopt/runtime/Plan.h"
#include "memopt/runtime/Safetensors.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Regex.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include <tuple>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace memopt;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("memopt-run options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string>
    functionName("function",
                 cl::desc("Function to run (default: the module's only one)"),
                 cl::init(""), cl::cat(category));
cl::opt<std::string> device("device",
                            cl::desc("Where to run: auto, cpu or cuda"),
                            cl::init("auto"), cl::cat(category));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed for parameter initialisation and "
                                "synthetic data"),
                       cl::init(0), cl::cat(category));
cl::opt<std::string>
    emitPlanFile("emit-plan",
                 cl::desc("Also write the compiled plan to this file"),
                 cl::init(""), cl::cat(category));
cl::opt<std::string> reportFile(
    "report",
    cl::desc("Write the memory report (JSON, DESIGN.md section 4) of the "
             "function after the pipeline, before lowering, to this file "
             "('-' for stdout)"),
    cl::value_desc("file|-"), cl::init(""), cl::cat(category));
cl::opt<std::string> loadWeights(
    "load-weights",
    cl::desc("Load parameters and state from this .safetensors file (by "
             "argument name) instead of initialising them"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> saveWeights(
    "save-weights",
    cl::desc("Save parameters and state to this .safetensors file after the "
             "run"),
    cl::init(""), cl::cat(category));
cl::opt<unsigned>
    steps("steps", cl::desc("Training steps (or evaluation batches) to run"),
          cl::init(10), cl::cat(category));
cl::opt<bool> evalMode(
    "eval",
    cl::desc("Evaluate instead of training: forward graph only, batch norm "
             "with running statistics, dropout off"),
    cl::init(false), cl::cat(category));
cl::opt<Optimizer>
    optimizerName("optimizer", cl::desc("Optimizer"), cl::init(Optimizer::SGD),
                  choices(Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam,
                          Optimizer::AdamW, Optimizer::Adam8bit,
                          Optimizer::AdamW8bit, Optimizer::Adafactor),
                  cl::cat(category));
cl::opt<double> learningRate(
    "lr",
    cl::desc("Learning rate (default: 0.01 for SGD and momentum, 0.001 "
             "for the others)"),
    cl::init(-1.0), cl::cat(category));
cl::opt<double>
    momentumFactor("momentum",
                   cl::desc("Momentum factor (--optimizer=momentum)"),
                   cl::init(0.9), cl::cat(category));
cl::opt<double> weightDecay(
    "weight-decay",
    cl::desc("PyTorch's weight_decay: L2 penalty, or decoupled with "
             "--optimizer=adamw or adamw8bit (default 0; 0.01 for those)"),
    cl::init(0.0), cl::cat(category));
cl::opt<double> clipNorm(
    "clip-norm",
    cl::desc("Clip the gradients by their global 2-norm to at most this "
             "(torch.nn.utils.clip_grad_norm_; default: no clipping)"),
    cl::init(0.0), cl::cat(category));
cl::opt<std::string> stateDtype(
    "state-dtype",
    cl::desc("Element type of the momentum buffers and Adam's moments "
             "(--optimizer=momentum, adam, adamw): param (default) or bf16"),
    cl::init("param"), cl::cat(category));
cl::opt<std::string> dataSpec(
    "data",
    cl::desc("Training data: synthetic (a learnable seeded task), "
             "mnist:<dir> (IDX files) or cifar10:<dir> (binary batches)"),
    cl::init("synthetic"), cl::cat(category));
cl::opt<std::string> inputsFile(
    "inputs",
    cl::desc("Load data arguments by name from this .safetensors file; they "
             "stay the same every step"),
    cl::init(""), cl::cat(category));
cl::opt<unsigned> microbatches(
    "microbatches",
    cl::desc("Split each batch into this many micro-batches whose gradients "
             "accumulate into one update (--memopt-microbatch)"),
    cl::init(1), cl::cat(category));
cl::opt<CheckpointStrategy> checkpointStrategy(
    "checkpoint",
    cl::desc("Recompute activations in the backward pass "
             "(--memopt-checkpoint; default: none, budget when --budget is "
             "given)"),
    cl::init(CheckpointStrategy::None), cl::cat(category));
cl::opt<std::string> budget(
    "budget",
    cl::desc("Fit the whole step (arguments plus planned arena) in this many "
             "bytes, e.g. 512MiB, recomputing as little as possible"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> workspaceLimit(
    "workspace-limit",
    cl::desc("Most scratch bytes any one kernel reserves in the arena, e.g. "
             "4MiB (--memopt-workspace-limit): convolutions then work a "
             "chunk of output rows at a time; no cap by default"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> convWorkspace(
    "conv-workspace",
    cl::desc("Workspace bytes every convolution reserves at least, e.g. "
             "512MiB (--memopt-conv-workspace), so cuDNN may choose faster "
             "algorithms at the cost of planned memory; one image's im2col "
             "matrix by default"),
    cl::init(""), cl::cat(category));
/// Whether main shortened OpenBLAS's idle spin (runtime::shortenBlasSpin).
bool shortenedBlasSpin = false;
// Not --threads: libLLVM registers a hidden option of that name.
cl::opt<int>
    cpuThreads("cpu-threads",
               cl::desc("Threads the CPU backend uses, for its matrix products "
                        "(oneDNN, OpenBLAS in f64) and its own kernels; 0, the "
                        "default, keeps OpenMP's choice (one per core, or "
                        "OMP_NUM_THREADS)"),
               cl::init(0), cl::cat(category));
cl::opt<bool> partition(
    "partition",
    cl::desc("Choose what the backward pass keeps by a minimum cut and "
             "recompute cheap values in it, when the step's peak does not "
             "rise (--memopt-partition; on by default)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> fuseAttention(
    "fuse-attention",
    cl::desc("Fuse matmul → softmax → dropout → matmul attention chains into "
             "memory-efficient attention (--memopt-fuse-attention; on by "
             "default, =false to keep them)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> fuseLinearCrossEntropy(
    "fuse-linear-cross-entropy",
    cl::desc("Fuse a large-vocabulary linear → cross_entropy into the chunked "
             "linear_cross_entropy, which never holds the logits "
             "(--memopt-fuse-linear-cross-entropy; on by default)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> fuseLossGradient(
    "fuse-loss-gradient",
    cl::desc("Compute the chunked LM-head loss and its gradient in one op, "
             "each chunk's logits once (--memopt-fuse-loss-gradient; on by "
             "default)"),
    cl::init(true), cl::cat(category));
cl::opt<std::string> freezePattern(
    "freeze",
    cl::desc("Freeze the parameters whose names match this regular "
             "expression (the whole name): no gradient, no optimizer state, "
             "no update (memopt.frozen)"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> loraTargets(
    "lora-targets",
    cl::desc("LoRA (--memopt-lora): low-rank adapters beside the linear and "
             "matmul weights whose names match this regular expression (the "
             "whole name); every other parameter is frozen unless "
             "--lora-trainable names it; --save-weights writes the adapters "
             "as <weight>.lora_A and <weight>.lora_B"),
    cl::init(""), cl::cat(category));
cl::opt<int64_t> loraRank("lora-rank",
                          cl::desc("Rank of the LoRA adapters (default 8)"),
                          cl::init(8), cl::cat(category));
cl::opt<double>
    loraAlpha("lora-alpha",
              cl::desc("LoRA's alpha: updates scaled by alpha / rank "
                       "(default 16)"),
              cl::init(16.0), cl::cat(category));
cl::opt<std::string> loraTrainable(
    "lora-trainable",
    cl::desc("With --lora-targets: parameters that keep training beside the "
             "adapters (a regular expression over names)"),
    cl::init(""), cl::cat(category));
cl::opt<bool> inplace(
    "inplace",
    cl::desc("Run element-wise ops in place over operands that are dead "
             "afterwards, backward pass included (--memopt-inplace)"),
    cl::init(false), cl::cat(category));
cl::opt<bool>
    abn("abn",
        cl::desc("Fuse batch norm + leaky ReLU/ELU into InPlace-ABN, whose "
                 "backward needs only the output (--memopt-inplace=abn=true; "
                 "implies --inplace)"),
        cl::init(false), cl::cat(category));
cl::opt<Precision> precision(
    "precision",
    cl::desc("Compute convolutions and matrix products in half precision "
             "with f32 master weights (--memopt-mixed-precision)"),
    cl::init(Precision::FP32), cl::cat(category));
cl::opt<std::string> lossScale(
    "loss-scale",
    cl::desc("dynamic (GradScaler), none or a constant; default dynamic for "
             "fp16, none for bf16"),
    cl::init(""), cl::cat(category));
cl::opt<bool> noOptimize(
    "no-optimize",
    cl::desc("Baseline: no memory-aware schedule and no arena planning (every "
             "buffer its own slice)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Write a Chrome trace (Perfetto) of the last step's kernels and "
             "live bytes to this file, and print the per-kernel memory table"),
    cl::init(""), cl::cat(category));
cl::opt<bool> tf32(
    "tf32",
    cl::desc("On the GPU, let f32 convolutions and matrix products use TF32 "
             "tensor cores (PyTorch does for convolutions by default): "
             "faster, no longer within f32 rounding of the CPU (sets "
             "MEMOPT_CUDA_TF32=1; no effect on the CPU)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> stepTimes(
    "step-times",
    cl::desc("Also print each step's wall time and the median of the steps "
             "after the first (which warms up)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> compare(
    "compare",
    cl::desc("Run the baseline (no schedule, no planning) and the optimised "
             "step and print them side by side"),
    cl::init(false), cl::cat(category));
cl::opt<int> ranks(
    "ranks",
    cl::desc("Data-parallel training on this many ranks, one process each, "
             "launched by mpirun -np N (--memopt-data-parallel): the model's "
             "batch is each rank's share, gradients are averaged across "
             "ranks, rank 0 prints and saves"),
    cl::init(1), cl::cat(category));
cl::opt<int> zeroStage(
    "zero",
    cl::desc("With --ranks: ZeRO stage: 0 replicates the optimizer state on "
             "every rank, 1 shards it by parameter (each rank updates the "
             "parameters it owns and sends them to the others), 2 also "
             "the averaged gradients (each reduced to its owner only), 3 "
             "also the parameters (each op that reads one receives a copy "
             "from its owner)"),
    cl::init(0), cl::cat(category));
cl::opt<std::string>
    bucket("bucket",
           cl::desc("With --ranks: most gradient bytes one all-reduce carries "
                    "(default 25MiB, PyTorch DDP's bucket_cap_mb)"),
           cl::init(""), cl::cat(category));
cl::opt<std::string> divideParams(
    "divide",
    cl::desc("With --zero >= 1: the parameters divided among the ranks by "
             "rows instead of owned whole: auto (default: those larger than "
             "half a rank's even share), all, none, or a byte size"),
    cl::init(""), cl::cat(category));
cl::opt<bool> overlapCollectives(
    "overlap-collectives",
    cl::desc("With --ranks: run each collective on a thread of its own "
             "while the steps after it compute, until one reads its "
             "results or reuses its memory (the same bits either way)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> verbose("verbose",
                      cl::desc("Print how every argument is initialised"),
                      cl::init(false), cl::cat(category));

/// The other ranks of a data-parallel run (--ranks), and this one's.
runtime::Collectives *collectives = nullptr;
int rankIndex = 0;
/// Whether the job saves weights (only rank 0 writes them; under ZeRO
/// stage 3 every rank sends its own).
bool savingWeights = false;

/// The rows of a data argument this rank takes from a global batch of
/// `ranks` times its leading dimension.
std::vector<uint8_t> rankRows(const std::vector<uint8_t> &global) {
  size_t share = global.size() / static_cast<size_t>(ranks);
  auto first = global.begin() + static_cast<ptrdiff_t>(share * rankIndex);
  return std::vector<uint8_t>(first, first + static_cast<ptrdiff_t>(share));
}

/// A rank's plan arguments with, under ZeRO stage 3, the parameters other
/// ranks hold in their places: the source's one order, on every rank.
class SourceOrder {
public:
  explicit SourceOrder(const CompiledGraph &graph) : sharded(graph.sharded) {}
  /// Calls `visit` on each parameter other ranks hold that comes before
  /// plan argument `index` and was not visited yet (with index = the number
  /// of plan arguments: every one left).
  template <typename Visit> void before(size_t index, Visit visit) {
    for (; next < sharded.size() && sharded[next].sourceIndex <= index + next;
         ++next)
      visit(sharded[next]);
  }

private:
  const std::vector<CompiledGraph::ShardedParameter> &sharded;
  size_t next = 0;
};

/// Under ZeRO stage 3, the whole parameter of which plan argument `index`
/// holds this rank's rows, or null.
const CompiledGraph::RowParameter *rowParameter(const CompiledGraph &graph,
                                                size_t index) {
  for (const CompiledGraph::RowParameter &p : graph.rowParameters)
    if (p.argument == index)
      return &p;
  return nullptr;
}

/// This rank's rows of `whole` (a parameter's bytes, of shape `shape`).
std::vector<uint8_t> ownRows(const std::vector<uint8_t> &whole,
                             const std::vector<int64_t> &shape) {
  size_t rowBytes = whole.size() / static_cast<size_t>(shape[0]);
  auto first =
      whole.begin() +
      static_cast<ptrdiff_t>(rowBytes *
                             shapes::rowSliceStart(shape[0], ranks, rankIndex));
  return std::vector<uint8_t>(
      first,
      first + static_cast<ptrdiff_t>(
                  rowBytes * shapes::rowSliceRows(shape[0], ranks, rankIndex)));
}

/// What the ranks of a job must agree on: the parameters and the data
/// (names, types: one model at one per-rank batch) and the collectives in
/// order. Under ZeRO the ranks' plans differ elsewhere (each updates the
/// parameters it owns), so the plans themselves are not compared.
std::string rankSignature(const runtime::Plan &plan,
                          const CompiledGraph &graph) {
  std::string text;
  auto type = [&](const runtime::TensorInfo &t) {
    text += std::string(runtime::dtypeName(t.dtype)) +
            runtime::formatShape(t.shape) + " ";
  };
  // Under ZeRO stage 3 the parameters other ranks own, in their place.
  SourceOrder order(graph);
  auto sharded = [&](const CompiledGraph::ShardedParameter &p) {
    runtime::TensorInfo t;
    t.dtype = *runtime::parseDType(p.dtype);
    t.shape.assign(p.shape.begin(), p.shape.end());
    text += p.name + ":";
    type(t);
  };
  for (size_t i = 0; i < plan.arguments.size(); ++i) {
    order.before(i, sharded);
    runtime::ArgumentRole role = plan.arguments[i].role;
    if (role == runtime::ArgumentRole::OptimizerState)
      continue;
    text += plan.arguments[i].name + ":";
    // A parameter held by rows: the whole one (each rank has other rows).
    runtime::TensorInfo info = plan.argumentTensor(i);
    if (const CompiledGraph::RowParameter *whole = rowParameter(graph, i))
      info.shape.assign(whole->shape.begin(), whole->shape.end());
    type(info);
  }
  order.before(plan.arguments.size(), sharded);
  for (const runtime::Step &step : plan.steps) {
    // What every rank's collective has alike: its root, whether it sums,
    // the owners of a reduce-scatter's tensors (not the rank it is for).
    std::string how;
    if (step.kernel == runtime::KernelKind::Broadcast)
      how = std::to_string(step.get<runtime::BroadcastAttrs>().root);
    else if (step.kernel == runtime::KernelKind::AllReduce)
      how = step.get<runtime::AllReduceAttrs>().sum ? "sum" : "mean";
    else if (step.kernel == runtime::KernelKind::ReduceScatter)
      for (int64_t owner : step.get<runtime::ReduceScatterAttrs>().owners)
        how += std::to_string(owner) + ",";
    else if (step.kernel != runtime::KernelKind::AllGather)
      continue;
    text +=
        "\n" + std::string(runtime::kernelName(step.kernel)) + " " + how + " ";
    // What it carries: a broadcast's result (under ZeRO stage 3 only the
    // root has an input) and a gathered tensor (each rank has its own
    // rows), the others' inputs.
    bool byOutput = step.kernel == runtime::KernelKind::Broadcast ||
                    step.kernel == runtime::KernelKind::AllGather;
    for (int64_t id : byOutput ? step.outputs : step.inputs)
      type(plan.tensor(id));
  }
  return text;
}

/// "rank R: " on several ranks, for messages.
std::string rankPrefix() {
  return collectives ? "rank " + std::to_string(rankIndex) + ": " : "";
}

/// Prints `memopt-run: [rank R: ]<kind>: <what>` in one write: the ranks'
/// messages share mpirun's stream.
void printError(const char *kind, const char *what) {
  llvm::errs() << "memopt-run: " + rankPrefix() + kind + ": " + what + "\n";
}

/// Prints `memopt-run: error: <what>` in one write (llvm::errs() writes each
/// `<<` at once, and under mpirun another process's output can land between
/// two of them).
void printPlainError(const llvm::Twine &what) {
  llvm::errs() << ("memopt-run: error: " + what + "\n").str();
}

/// After a failure on this rank during the run: the others may be waiting
/// for it in a collective, so the whole job ends (MPI_Abort).
void endJob(int code) {
#ifdef MEMOPT_HAVE_MPI
  if (collectives) {
    llvm::errs().flush();
    runtime::abortMpiJob(code);
  }
#else
  (void)code;
#endif
}

/// `code`, for main to return, after ending the whole job if this rank is
/// one of several (a rank that fails alone must not leave the others
/// waiting for it).
int endRank(int code) {
  endJob(code);
  return code;
}

/// Chooses the backend: `auto` takes CUDA when it is built and a device
/// works, and says what it chose.
std::unique_ptr<runtime::Backend> chooseBackend(llvm::raw_ostream &log) {
  if (device != "auto")
    return runtime::createBackend(device);
  std::vector<std::string> built = runtime::availableBackends();
  if (std::find(built.begin(), built.end(), "cuda") != built.end()) {
    try {
      auto backend = runtime::createBackend("cuda");
      log << "device: cuda (auto)\n";
      return backend;
    } catch (const runtime::Error &e) {
      log << "device: cpu (auto: " << e.what() << ")\n";
      return runtime::createBackend("cpu");
    }
  }
  log << "device: cpu (auto: memopt was built without the CUDA backend)\n";
  return runtime::createBackend("cpu");
}

/// Fills `options` with the pipeline for the function being run: the
/// training step (autodiff, optimizer, the memory passes), evaluation
/// (--eval: the evaluation-mode rewrite) or, for a graph that is not a
/// training step, inference; buildMemOptPipeline owns the order.
LogicalResult fillPipelineOptions(ModuleOp module, bool optimize,
                                  MemOptPipelineOptions &options) {
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>())
    if (functionName.empty() || f.getSymName() == functionName)
      func = f;
  bool training = func && func.getNumResults() > 0;
  if (training) {
    auto loss = dyn_cast<RankedTensorType>(func.getResultTypes().front());
    training = loss && loss.getRank() == 0;
    bool hasParams = false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      hasParams |= bool(func.getArgAttr(i, MemOptDialect::kParamAttrName));
    training &= hasParams;
  }
  // Checkpointing recomputes in a backward pass: without one (evaluation,
  // inference, the unoptimised baseline) it would do nothing.
  if (checkpointStrategy != CheckpointStrategy::None &&
      (!training || evalMode || noOptimize)) {
    llvm::errs() << "memopt-run: error: --checkpoint="
                 << stringifyChoice<CheckpointStrategy>(checkpointStrategy)
                 << " has no effect "
                 << (noOptimize ? "with --no-optimize"
                     : evalMode ? "with --eval (no backward pass)"
                                : "on a graph that is not a training step "
                                  "(no scalar loss over parameters)")
                 << "\n";
    return failure();
  }
  options.mode = !training  ? PipelineMode::Inference
                 : evalMode ? PipelineMode::Eval
                            : PipelineMode::Train;
  options.optimize = optimize;
  options.precision = precision.getValue();
  options.inplace = inplace;
  options.abn = abn;
  options.partition = partition;
  options.fuseAttention = fuseAttention;
  options.fuseLinearCrossEntropy = fuseLinearCrossEntropy;
  options.fuseLossGradient = fuseLossGradient;
  if (!budget.empty())
    options.budget = budget;
  if (!workspaceLimit.empty())
    options.workspaceLimit = workspaceLimit;
  if (!convWorkspace.empty())
    options.convWorkspace = convWorkspace;
  if (!training || evalMode) {
    // Options of the backward pass and the optimizer have nothing to act on.
    for (const cl::Option *option : std::initializer_list<const cl::Option *>{
             &optimizerName, &learningRate, &momentumFactor, &weightDecay,
             &clipNorm, &stateDtype, &microbatches, &lossScale,
             static_cast<const cl::Option *>(&ranks), &zeroStage, &bucket,
             &divideParams, &overlapCollectives}) {
      if (!option->getNumOccurrences())
        continue;
      llvm::errs() << "memopt-run: error: --" << option->ArgStr
                   << " has no effect "
                   << (evalMode ? "with --eval (no backward pass)"
                                : "on a graph that is not a training step "
                                  "(no scalar loss over parameters)")
                   << "\n";
      return failure();
    }
    return success();
  }
  options.optimizer = optimizerName.getValue();
  if (learningRate.getNumOccurrences())
    options.lr =
        llvm::formatv("{0}", llvm::format("%.17g", learningRate.getValue()))
            .str();
  options.momentum = momentumFactor;
  options.stateDtype = stateDtype;
  if (clipNorm.getNumOccurrences())
    options.clipNorm =
        llvm::formatv("{0}", llvm::format("%.17g", clipNorm.getValue())).str();
  if (weightDecay.getNumOccurrences())
    options.weightDecay =
        llvm::formatv("{0}", llvm::format("%.17g", weightDecay.getValue()))
            .str();
  options.microbatches = microbatches;
  options.ranks = ranks;
  options.zero = zeroStage;
  options.rank = rankIndex;
  if (!bucket.empty())
    options.bucket = bucket;
  if (!divideParams.empty())
    options.divide = divideParams;
  if (!lossScale.empty())
    options.lossScale = lossScale;
  if (checkpointStrategy.getNumOccurrences())
    options.checkpoint = checkpointStrategy.getValue();
  return success();
}

/// What a run measured, for --compare.
struct RunSummary {
  uint64_t arenaBytes = 0, persistentBytes = 0, highWaterBytes = 0;
  double firstLoss = 0, lastLoss = 0, msPerStep = 0;
  size_t kernels = 0;
};

RunSummary runCompiled(std::shared_ptr<const runtime::Plan> plan,
                       const CompiledGraph &graph, llvm::raw_ostream &out) {
  // On several ranks the CUDA backend's collectives are NCCL's, on this
  // rank's GPU (one per process), which they make the current device
  // before the backend takes it. The host-side exchanges (the ranks'
  // signature, the mean loss, saving) stay on MPI.
  std::unique_ptr<runtime::Collectives> deviceCollectives;
  if (collectives && device == "cuda") {
#ifdef MEMOPT_HAVE_NCCL
    deviceCollectives = runtime::createNcclCollectives(
        *collectives, runtime::localDeviceIndex(rankIndex));
#else
    throw runtime::Error(
        runtime::ErrorCode::BackendUnavailable,
        "--device=cuda with --ranks needs NCCL, which this build does not "
        "have (CMake finds it in the CUDA toolkit or the nvidia-nccl-cu13 "
        "wheel); use --device=cpu");
#endif
  }
  // The step's collectives: NCCL's on CUDA, else the job's (MPI).
  runtime::Collectives *stepCollectives =
      deviceCollectives ? deviceCollectives.get() : collectives;
  // On several ranks `auto` is the CPU: the GPU needs one per rank, which
  // --device=cuda asks for.
  std::unique_ptr<runtime::Backend> backend;
  if (collectives && device == "auto") {
    out << "device: cpu (auto: several ranks run on the CPU unless "
           "--device=cuda)\n";
    backend = runtime::createBackend("cpu");
  } else {
    backend = chooseBackend(out);
  }
  std::string deviceName(backend->name());
  // Not when the user capped workspaces: they chose memory over speed.
  if (deviceName == "cuda" && convWorkspace.empty() && workspaceLimit.empty() &&
      llvm::any_of(plan->steps, [](const runtime::Step &step) {
        return step.kernel == runtime::KernelKind::Conv2D;
      }))
    out << "note: convolutions get one image's im2col matrix of workspace; "
           "--conv-workspace=1GiB lets cuDNN use its faster algorithms "
           "(MEMOPT_CUDNN_LOG=1 shows each choice)\n";
  // The driver's view of device memory (CUDA): before the plan's memory,
  // and the most seen after any step.
  std::optional<uint64_t> deviceBefore = backend->deviceBytesInUse();
  uint64_t deviceHigh = deviceBefore.value_or(0);
  runtime::Executor executor(plan, std::move(backend));

  std::optional<runtime::SafetensorsFile> weights, inputs;
  if (!loadWeights.empty())
    weights = runtime::readSafetensors(loadWeights);
  if (!inputsFile.empty())
    inputs = runtime::readSafetensors(inputsFile);
  std::mt19937_64 rng(seed);
  // ZeRO stage 3: the parameters other ranks own are drawn too, in their
  // place in the source's order, so that every parameter is drawn as one
  // process draws it; this rank keeps none of them.
  SourceOrder drawOrder(graph);
  auto drawAndDrop = [&](const CompiledGraph::ShardedParameter &p) {
    run::HostTensor skipped(*runtime::parseDType(p.dtype),
                            runtime::Shape(p.shape.begin(), p.shape.end()));
    run::initialize(skipped, p.init, rng);
    if (verbose)
      out << "  init " << p.name << ": " << p.init.reason << ", held by rank "
          << p.owner << "\n";
  };
  for (size_t i = 0; i < plan->arguments.size(); ++i) {
    drawOrder.before(i, drawAndDrop);
    const runtime::ArgumentInfo &arg = plan->arguments[i];
    const runtime::TensorInfo &info = plan->argumentTensor(i);
    // On several ranks a batched data argument is drawn for the global
    // batch, as one rank with the whole batch would, and this rank keeps
    // its rows.
    bool shared = ranks > 1 && arg.role == runtime::ArgumentRole::Data &&
                  !info.shape.empty();
    runtime::Shape shape = info.shape;
    if (shared)
      shape[0] *= ranks;
    // Under ZeRO stage 3 a parameter divided by rows is drawn (and loaded)
    // whole, and this rank keeps its rows.
    const CompiledGraph::RowParameter *whole = rowParameter(graph, i);
    if (whole)
      shape.assign(whole->shape.begin(), whole->shape.end());
    run::HostTensor tensor(info.dtype, shape);
    // Draw for every argument, loaded or not, so that data stays the same
    // whether or not weights come from a file.
    run::initialize(tensor, graph.argumentInit[i], rng);
    if (shared) {
      tensor.bytes = rankRows(tensor.bytes);
      tensor.shape = info.shape;
    }
    std::string how = graph.argumentInit[i].reason;
    if (weights && (arg.role == runtime::ArgumentRole::Param ||
                    arg.role == runtime::ArgumentRole::State)) {
      runtime::TensorInfo file = info;
      file.shape = shape;
      file.bytes = tensor.bytes.size();
      tensor.bytes = run::takeWeight(*weights, arg.name, file, loadWeights);
      how = "loaded from " + loadWeights;
    }
    if (whole) {
      int64_t firstRow =
          shapes::rowSliceStart(whole->shape[0], ranks, rankIndex);
      tensor.bytes = ownRows(tensor.bytes, whole->shape);
      tensor.shape = info.shape;
      how += llvm::formatv(", rows {0} to {1} of {2}", firstRow,
                           firstRow + info.shape[0] - 1, whole->shape[0])
                 .str();
    }
    if (inputs && arg.role == runtime::ArgumentRole::Data &&
        inputs->find(arg.name)) {
      // On several ranks the file holds the global batch.
      runtime::TensorInfo global = info;
      global.shape = shape;
      tensor.bytes = run::takeWeight(*inputs, arg.name, global, inputsFile);
      if (shared)
        tensor.bytes = rankRows(tensor.bytes);
      how = "loaded from " + inputsFile;
    }
    executor.setArgument(i, info.dtype, info.shape, tensor.bytes.data(),
                         tensor.bytes.size());
    if (verbose)
      out << "  init " << arg.name << ": " << how << "\n";
  }
  drawOrder.before(plan->arguments.size(), drawAndDrop);
  if (inputs)
    for (const runtime::NamedTensor &tensor : inputs->tensors) {
      int64_t index = plan->findArgument(tensor.name);
      if (index < 0 ||
          plan->arguments[index].role != runtime::ArgumentRole::Data)
        throw runtime::Error(runtime::ErrorCode::InvalidArgument,
                             inputsFile + ": tensor '" + tensor.name +
                                 "' matches no data argument");
    }
  if (weights)
    for (const runtime::NamedTensor &unused : weights->tensors)
      if (plan->findArgument(unused.name) < 0 &&
          llvm::none_of(graph.sharded,
                        [&](const auto &p) { return p.name == unused.name; }))
        llvm::errs() << "memopt-run: warning: " << loadWeights << ": tensor '"
                     << unused.name << "' matches no argument; ignored\n";

  // Data loaded from --inputs stays as loaded: no dataset overwrites it.
  run::DataFeed data(*plan, graph, inputs ? "fixed" : dataSpec.getValue(),
                     evalMode ? "test" : "train", seed, rankIndex, ranks);
  if (collectives) {
    executor.setCollectives(stepCollectives);
    executor.setOverlapCollectives(overlapCollectives);
    // Gradient buckets: averaged on every rank, or (ZeRO stage 2) each
    // gradient on its owner.
    size_t averaged = 0, scattered = 0;
    for (const runtime::Step &s : plan->steps) {
      averaged += s.kernel == runtime::KernelKind::AllReduce &&
                  !s.get<runtime::AllReduceAttrs>().sum;
      scattered += s.kernel == runtime::KernelKind::ReduceScatter;
    }
    out << "data parallel: " << ranks << " ranks over "
        << stepCollectives->describe() << ", "
        << (scattered ? scattered : averaged)
        << (scattered ? " reduce-scatter" : " all-reduce")
        << " buckets; each rank trains on its rows of the "
           "global batch, rank 0 prints the mean loss over ranks\n";
  }
  if (verbose) {
    out << "  data: " << data.describe() << "\n";
    std::string blas = runtime::blasCoreName();
    if (!blas.empty()) {
      out << "  blas: oneDNN for f32, OpenBLAS " << blas << " kernels for f64";
      if (const char *fallback = std::getenv("MEMOPT_OPENBLAS_FALLBACK"))
        out << " (OPENBLAS_CORETYPE set by memopt-run: OpenBLAS chose "
            << fallback << " for this CPU)";
      else if (std::getenv("OPENBLAS_CORETYPE"))
        out << " (OPENBLAS_CORETYPE)";
      int n = runtime::cpuThreads();
      out << ", " << n << (n == 1 ? " thread" : " threads");
      // The user's value as given: OpenBLAS interprets it (and ignores
      // one it cannot read).
      if (shortenedBlasSpin)
        out << ", idle workers spin 2^16 cycles (set by memopt-run)";
      else if (const char *timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT"))
        out << ", OPENBLAS_THREAD_TIMEOUT=" << timeout;
      out << "\n";
    }
  }

  out << "@" << graph.functionName << " on " << deviceName << ": "
      << plan->steps.size() << " kernels\n";
  out << "arena: " << executor.arenaBytes()
      << " bytes planned; arguments and constants: "
      << executor.persistentBytes() << " bytes\n";

  bool training = !plan->updates.empty() && !evalMode;
  bool hasLoss = !plan->results.empty() &&
                 plan->resultTensor(0).shape.empty() &&
                 runtime::isFloatDType(plan->resultTensor(0).dtype);
  unsigned numSteps = hasLoss ? std::max(1u, unsigned(steps)) : 1u;
  // Under mpirun the output is a pseudo-terminal mpirun forwards, not the
  // user's terminal: one line per step.
  run::Progress progress(out, numSteps, training ? "step" : "batch",
                         /*redraw=*/!collectives);
  double lossSum = 0;
  RunSummary summary;
  summary.kernels = plan->steps.size();
  std::vector<double> stepSeconds(plan->steps.size(), 0.0);
  // Dynamic loss scaling: the scale is state of the step; a step whose
  // gradients overflowed was skipped and lowered it.
  int64_t scaleArg = training ? plan->findArgument("loss_scale") : -1;
  auto readScale = [&]() {
    run::HostTensor scale(plan->argumentTensor(scaleArg).dtype, {});
    executor.getArgument(scaleArg, scale.bytes.data(), scale.bytes.size());
    return scale.get(0);
  };
  double initialScale = scaleArg >= 0 ? readScale() : 0, scale = initialScale;
  unsigned skippedSteps = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<double> stepMs;
  data.next(executor);
  for (unsigned step = 0; step < numSteps; ++step) {
    auto stepStart = std::chrono::steady_clock::now();
    if (!traceFile.empty() && step + 1 == numSteps)
      executor.setStepObserver(
          [&](size_t i, double seconds) { stepSeconds[i] = seconds; });
    // The next batch is read, decoded and copied while this step runs.
    executor.start(step);
    if (step + 1 < numSteps)
      data.next(executor, /*prefetch=*/true);
    executor.finish();
    if (hasLoss) {
      run::HostTensor loss(plan->resultTensor(0).dtype, {});
      executor.getResult(0, loss.bytes.data(), loss.bytes.size());
      double value = loss.get(0);
      if (collectives) {
        // The global batch's loss: the mean of the ranks' (equal shares of
        // a mean-reduced loss), summed in rank order.
        std::vector<double> all(collectives->size());
        collectives->allGather(&value, all.data(), sizeof(double));
        value = 0;
        for (double v : all)
          value += v;
        value /= static_cast<double>(all.size());
      }
      lossSum += value;
      progress.report(step, value);
      if (step == 0)
        summary.firstLoss = value;
      summary.lastLoss = value;
    }
    if (deviceBefore)
      deviceHigh = std::max(deviceHigh,
                            executor.backend().deviceBytesInUse().value_or(0));
    if (training)
      executor.applyUpdates();
    if (scaleArg >= 0) {
      double next = readScale();
      skippedSteps += next < scale;
      scale = next;
    }
    stepMs.push_back(1000 * std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - stepStart)
                                .count());
  }
  summary.msPerStep =
      1000 *
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count() /
      numSteps;
  progress.finish();
  if (stepTimes)
    run::printStepTimes(out, stepMs);
  if (collectives && overlapCollectives)
    out << "overlap: " << executor.getStepsBesideCollectives()
        << " steps of the last step ran while a collective was in flight\n";
  if (scaleArg >= 0)
    out << "loss scale: " << llvm::format("%g", initialScale) << " -> "
        << llvm::format("%g", scale) << ", " << skippedSteps << " of "
        << numSteps << " steps skipped (inf/NaN gradients)\n";
  summary.arenaBytes = executor.arenaBytes();
  summary.persistentBytes = executor.persistentBytes();
  summary.highWaterBytes = executor.backend().memoryStats().peakBytes;
  out << "memory: measured high-water " << summary.highWaterBytes
      << " bytes = arena " << summary.arenaBytes
      << " + arguments and constants " << summary.persistentBytes
      << " + alignment "
      << executor.allocatedBytes() - summary.arenaBytes -
             summary.persistentBytes
      << "\n";
  if (deviceBefore)
    out << "device memory (cudaMemGetInfo): " << *deviceBefore
        << " bytes in use before the plan (CUDA context, libraries), "
           "high-water "
        << deviceHigh << " after steps, " << deviceHigh - *deviceBefore
        << " more\n";
  if (!traceFile.empty()) {
    run::StepTrace trace{*plan, stepSeconds, executor.persistentBytes()};
    std::string error;
    if (!trace.writeChromeTrace(traceFile, error))
      throw runtime::Error(runtime::ErrorCode::Io, error);
    trace.printTable(out);
    out << "trace written to " << traceFile << "\n";
  }
  if (hasLoss && !training && numSteps > 1)
    out << "mean loss over " << numSteps << " batches: " << lossSum / numSteps
        << "\n";
  if (!training)
    for (size_t i = 0; i < plan->results.size(); ++i) {
      const runtime::TensorInfo &info = plan->resultTensor(i);
      run::HostTensor result(info.dtype, info.shape);
      executor.getResult(i, result.bytes.data(), result.bytes.size());
      out << "result #" << i << ": " << run::summarize(result) << "\n";
    }

  // Every rank holds the same parameters; rank 0 writes them (and its
  // batch-norm statistics). Under ZeRO stage 3 each parameter is its
  // owner's: every rank takes part as the owners send them to rank 0, in
  // the source's order.
  const bool sharded = collectives && zeroStage == 3;
  if (savingWeights && (rankIndex == 0 || sharded)) {
    runtime::SafetensorsFile file;
    file.metadata = {{"format", "pt"}, {"producer", "memopt-run"}};
    // A parameter another rank owns: received from it.
    auto gather = [&](const CompiledGraph::ShardedParameter &p) {
      runtime::DType dtype = *runtime::parseDType(p.dtype);
      runtime::Shape shape(p.shape.begin(), p.shape.end());
      runtime::NamedTensor tensor{p.name, dtype, shape, {}};
      tensor.data.resize(runtime::dtypeSize(dtype) *
                         static_cast<size_t>(runtime::numElements(shape)));
      runtime::TensorRef data{tensor.data.data(), dtype, &shape,
                              runtime::numElements(shape)};
      runtime::broadcastFrom(*collectives, nullptr, data, p.owner);
      file.tensors.push_back(std::move(tensor));
    };
    // The parameters this rank updates: under stage 3 its own, sent.
    std::vector<bool> updated(plan->arguments.size(), false);
    for (const runtime::UpdateInfo &u : plan->updates)
      updated[u.argument] = true;
    SourceOrder order(graph);
    for (size_t i = 0; i < plan->arguments.size(); ++i) {
      order.before(i, gather);
      // Like a state_dict: parameters and buffers, not optimizer state.
      runtime::ArgumentRole role = plan->arguments[i].role;
      if (role != runtime::ArgumentRole::Param &&
          role != runtime::ArgumentRole::State)
        continue;
      const runtime::TensorInfo &info = plan->argumentTensor(i);
      runtime::NamedTensor tensor{
          plan->arguments[i].name, info.dtype, info.shape, {}};
      tensor.data.resize(info.bytes);
      executor.getArgument(i, tensor.data.data(), tensor.data.size());
      if (const CompiledGraph::RowParameter *whole = rowParameter(graph, i)) {
        // Every rank's rows, put together.
        runtime::NamedTensor gathered{
            tensor.name,
            info.dtype,
            runtime::Shape(whole->shape.begin(), whole->shape.end()),
            {}};
        gathered.data.resize(
            runtime::dtypeSize(info.dtype) *
            static_cast<size_t>(runtime::numElements(gathered.shape)));
        runtime::TensorRef rows{tensor.data.data(), info.dtype, &info.shape,
                                runtime::numElements(info.shape)};
        runtime::TensorRef all{gathered.data.data(), info.dtype,
                               &gathered.shape,
                               runtime::numElements(gathered.shape)};
        runtime::allGatherRows(*collectives, rows, all);
        tensor = std::move(gathered);
      } else if (sharded && role == runtime::ArgumentRole::Param &&
                 updated[i]) {
        runtime::TensorRef data{tensor.data.data(), info.dtype, &info.shape,
                                runtime::numElements(info.shape)};
        runtime::broadcastFrom(*collectives, &data, data, rankIndex);
      }
      file.tensors.push_back(std::move(tensor));
    }
    order.before(plan->arguments.size(), gather);
    if (rankIndex == 0)
      runtime::writeSafetensors(saveWeights, file);
    out << "saved " << file.tensors.size() << " tensors to " << saveWeights
        << "\n";
  }
  return summary;
}

/// --freeze: marks the parameters of the function being run whose source
/// names match the pattern `memopt.frozen`. An invalid pattern, or one that
/// matches no parameter, is an error (a typo must not train everything).
LogicalResult freezeParameters(ModuleOp module, llvm::SourceMgr &sources) {
  if (freezePattern.empty())
    return success();
  llvm::Regex regex("^(" + freezePattern + ")$");
  std::string why;
  if (!regex.isValid(why)) {
    llvm::errs() << "memopt-run: error: --freeze: invalid regular expression '"
                 << freezePattern << "': " << why << "\n";
    return failure();
  }
  size_t frozen = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() ||
        (!functionName.empty() && func.getSymName() != functionName))
      continue;
    std::vector<std::string> names = sourceArgumentNames(func, sources);
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (func.getArgAttr(i, MemOptDialect::kParamAttrName) &&
          regex.match(names[i])) {
        func.setArgAttr(i, MemOptDialect::kFrozenAttrName,
                        UnitAttr::get(module.getContext()));
        ++frozen;
      }
  }
  if (frozen == 0) {
    llvm::errs() << "memopt-run: error: --freeze: '" << freezePattern
                 << "' matches no parameter's name\n";
    return failure();
  }
  return success();
}

/// --lora-targets: names every argument of the function being run from the
/// source (the names --memopt-lora matches and the adapters' names derive
/// from) and runs --memopt-lora on the forward graph.
LogicalResult applyLora(ModuleOp module, llvm::SourceMgr &sources) {
  if (loraTargets.empty()) {
    for (const cl::Option *option :
         {static_cast<const cl::Option *>(&loraRank),
          static_cast<const cl::Option *>(&loraAlpha),
          static_cast<const cl::Option *>(&loraTrainable)})
      if (option->getNumOccurrences()) {
        llvm::errs() << "memopt-run: error: --" << option->ArgStr
                     << " needs --lora-targets\n";
        return failure();
      }
    return success();
  }
  MLIRContext *ctx = module.getContext();
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() ||
        (!functionName.empty() && func.getSymName() != functionName))
      continue;
    std::vector<std::string> names = sourceArgumentNames(func, sources);
    for (BlockArgument arg : func.getArguments())
      if (!isa<NameLoc>(arg.getLoc()))
        arg.setLoc(NameLoc::get(StringAttr::get(ctx, names[arg.getArgNumber()]),
                                arg.getLoc()));
  }
  PassManager pm(ctx);
  MemOptLoraOptions options;
  options.rank = loraRank;
  options.alpha = loraAlpha;
  options.targets = loraTargets;
  options.trainable = loraTrainable;
  options.function = functionName;
  pm.addPass(createMemOptLora(options));
  return pm.run(module);
}

/// Parses and compiles the input; `optimize` adds the schedule and the plan,
/// `withReport` the --report pass.
FailureOr<CompiledGraph> compileInput(MLIRContext &context,
                                      llvm::SourceMgr &sources, bool optimize,
                                      bool withReport) {
  if (failed(checkBracketNesting(sources, sources.getMainFileID())))
    return failure();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return failure();
  if (failed(freezeParameters(*module, sources)) ||
      failed(applyLora(*module, sources)))
    return failure();
  CompileOptions options;
  options.function = functionName;
  MemOptPipelineOptions pipeline;
  if (failed(fillPipelineOptions(*module, optimize, pipeline)))
    return failure();
  std::string error;
  if (failed(verifyMemOptPipelineOptions(pipeline, [&](const Twine &message) {
        error = message.str();
        return failure();
      }))) {
    printPlainError(error);
    return failure();
  }
  options.passes = [&](OpPassManager &pm) {
    buildMemOptPipeline(pm, pipeline);
    // The report sees the step exactly as it will run: after the
    // pipeline's rewrites, before lowering to memrt.
    if (withReport && !reportFile.empty()) {
      MemOptReportOptions report;
      report.file = reportFile;
      report.function = functionName;
      pm.addPass(createMemOptReport(report));
    }
  };
  return compileToPlan(*module, sources, options);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  // OpenBLAS picks its kernels when it loads, before main: where it fell
  // back to generic ones on this CPU, run again with the right ones.
  if (auto core = runtime::betterBlasCore()) {
    ::setenv("OPENBLAS_CORETYPE", core->c_str(), /*overwrite=*/1);
    ::setenv("MEMOPT_OPENBLAS_FALLBACK", runtime::blasCoreName().c_str(), 1);
    ::execv("/proc/self/exe", argv);
    // exec failed: go on as loaded, claiming no choice.
    ::unsetenv("OPENBLAS_CORETYPE");
    ::unsetenv("MEMOPT_OPENBLAS_FALLBACK");
  }
  // Before any product: OpenBLAS's idle workers spin for a tenth of a
  // second by default, which starves the CPU kernels' own threads.
  shortenedBlasSpin = runtime::shortenBlasSpin();
  cl::ParseCommandLineOptions(
      argc, argv, "memopt-run: compile a memopt graph and run it\n");
  // The CUDA backend reads it when it starts.
  if (tf32)
    ::setenv("MEMOPT_CUDA_TF32", "1", /*overwrite=*/1);

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  MLIRContext context(registry);
  // Diagnostics name the op and its location; a dump of the whole function
  // would bury them.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();

  // Options that cannot do what they say are errors, never ignored.
  if (steps.getNumOccurrences() && steps == 0) {
    llvm::errs() << "memopt-run: error: --steps must be at least 1\n";
    return 1;
  }
  if (microbatches.getNumOccurrences() && microbatches == 0) {
    llvm::errs() << "memopt-run: error: --microbatches must be at least 1\n";
    return 1;
  }
  if (cpuThreads < 0) {
    printPlainError("--cpu-threads must be at least 1 (0 keeps OpenMP's "
                    "choice), got " +
                    llvm::Twine(static_cast<int>(cpuThreads)));
    return 1;
  }
  if (ranks < 1) {
    printPlainError("--ranks must be at least 1, got " +
                    llvm::Twine(static_cast<int>(ranks)));
    return 1;
  }
  if (ranks == 1)
    for (const cl::Option *option :
         {static_cast<const cl::Option *>(&zeroStage),
          static_cast<const cl::Option *>(&bucket),
          static_cast<const cl::Option *>(&divideParams),
          static_cast<const cl::Option *>(&overlapCollectives)})
      if (option->getNumOccurrences()) {
        printPlainError("--" + option->ArgStr + " needs --ranks=N with N > 1");
        return 1;
      }
  savingWeights = !saveWeights.empty();
  std::unique_ptr<runtime::Collectives> world;
  if (ranks > 1) {
    if (compare) {
      llvm::errs() << "memopt-run: error: --compare runs one rank; drop "
                      "--ranks\n";
      return 1;
    }
#ifdef MEMOPT_HAVE_MPI
    try {
      world = runtime::createMpiCollectives();
    } catch (const runtime::Error &e) {
      printPlainError(e.what());
      return 1;
    }
    if (world->size() != ranks) {
      std::string count = std::to_string(ranks);
      printPlainError(
          "--ranks=" + count + " but " + llvm::Twine(world->size()) +
          (world->size() == 1 ? " process runs" : " processes run") +
          " (start it as mpirun -np " + count +
          " memopt-run ... --ranks=" + count + ")");
      return 1;
    }
    collectives = world.get();
    rankIndex = world->rank();
    // One file per job: rank 0 writes the report, plan, trace and weights.
    if (rankIndex != 0) {
      reportFile.setValue("");
      emitPlanFile.setValue("");
      traceFile.setValue("");
      saveWeights.setValue("");
    }
    // The ranks on this machine share its cores.
    if (cpuThreads == 0) {
      int local = ranks;
      if (const char *size = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
        local = std::max(1, std::atoi(size));
      int cores = static_cast<int>(std::thread::hardware_concurrency());
      runtime::setCpuThreads(std::max(1, cores / local));
    }
#else
    llvm::errs() << "memopt-run: error: --ranks needs MPI, and this "
                    "memopt-run was built without it (install openmpi-bin "
                    "and libopenmpi-dev, then configure and build again)\n";
    return endRank(1);
#endif
  }
  if (cpuThreads > 0)
    runtime::setCpuThreads(cpuThreads);
  if (noOptimize && !budget.empty()) {
    llvm::errs()
        << "memopt-run: error: --budget has no effect with --no-optimize "
           "(the baseline plans no arena to fit in it)\n";
    return endRank(1);
  }
  if (noOptimize && (abn || inplace)) {
    printPlainError(llvm::Twine("--") + (abn ? "abn" : "inplace") +
                    " has no effect with --no-optimize (the baseline runs no "
                    "memory pass)");
    return endRank(1);
  }
  // Files are checked before anything is compiled or trained: a directory
  // where a file is expected is an error now, not after the run.
  for (auto [flag, path, output] : {std::tuple<const char *, std::string, bool>{
                                        "--load-weights", loadWeights, false},
                                    {"--inputs", inputsFile, false},
                                    {"--save-weights", saveWeights, true}}) {
    if (path.empty())
      continue;
    if (llvm::sys::fs::is_directory(path)) {
      printPlainError(llvm::Twine(flag) + "=" + path +
                      ": is a directory, not a .safetensors file");
      return endRank(1);
    }
    if (!output && !llvm::sys::fs::exists(path)) {
      printPlainError(llvm::Twine(flag) + "=" + path + ": no such file");
      return endRank(1);
    }
  }

  if (!lossScale.empty() && precision == Precision::FP32) {
    printPlainError("--loss-scale needs --precision=fp16 or bf16 (f32 "
                    "gradients do not underflow)");
    return endRank(1);
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFile, &error);
  if (!file) {
    printPlainError(error);
    return endRank(1);
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  FailureOr<CompiledGraph> graph = compileInput(context, sources, !noOptimize,
                                                /*withReport=*/true);
  if (failed(graph))
    return endRank(1);

  if (!emitPlanFile.empty()) {
    std::unique_ptr<llvm::ToolOutputFile> planOut =
        openOutputFile(emitPlanFile, &error);
    if (!planOut) {
      printPlainError(error);
      return endRank(1);
    }
    planOut->os() << graph->planJson << "\n";
    planOut->keep();
  }

  try {
    auto plan = runtime::Plan::parse(graph->planJson);
    if (collectives) {
      // Ranks that ran different steps would wait on each other's
      // collectives for ever, or average tensors that do not match. Every
      // rank finds a difference at once: each says so and ends by itself.
      try {
        runtime::checkSameOnEveryRank(*collectives,
                                      rankSignature(*plan, *graph),
                                      "model, batch or collectives");
      } catch (const runtime::Error &e) {
        printError("error", e.what());
        return 1;
      }
    }
    if (!compare) {
      runCompiled(plan, *graph, rankIndex == 0 ? llvm::outs() : llvm::nulls());
      return 0;
    }
    FailureOr<CompiledGraph> baseline =
        compileInput(context, sources, /*optimize=*/false,
                     /*withReport=*/false);
    if (failed(baseline))
      return endRank(1);
    std::string log;
    llvm::raw_string_ostream quiet(log);
    RunSummary base =
        runCompiled(runtime::Plan::parse(baseline->planJson), *baseline, quiet);
    RunSummary opt = runCompiled(plan, *graph, quiet);
    auto mib = [](uint64_t bytes) { return bytes / (1024.0 * 1024.0); };
    llvm::outs() << llvm::format("%-34s %14s %14s %8s\n", "", "baseline",
                                 "optimised", "ratio");
    auto row = [&](const char *name, double b, double o, const char *unit) {
      llvm::outs() << llvm::format("%-34s %11.2f %s %11.2f %s %7.2fx\n", name,
                                   b, unit, o, unit, o != 0 ? b / o : 0.0);
    };
    row("arena (planned)", mib(base.arenaBytes), mib(opt.arenaBytes), "MiB");
    row("measured high-water", mib(base.highWaterBytes),
        mib(opt.highWaterBytes), "MiB");
    row("step time", base.msPerStep, opt.msPerStep, " ms");
    llvm::outs() << llvm::format("%-34s %14zu %14zu\n", "kernels", base.kernels,
                                 opt.kernels);
    llvm::outs() << llvm::format("%-34s %14.6f %14.6f\n", "loss, first step",
                                 base.firstLoss, opt.firstLoss);
    llvm::outs() << llvm::format("%-34s %14.6f %14.6f\n", "loss, last step",
                                 base.lastLoss, opt.lastLoss);
    return 0;
  } catch (const runtime::Error &e) {
    printError("error", e.what());
    return endRank(1);
  } catch (const std::exception &e) {
    printError("internal error", e.what());
    return endRank(2);
  }
}
