//===- DataFeed.cpp - the data a training run sees each step --------------===//

#include "DataFeed.h"

#include "HostTensor.h"

#include "memopt/runtime/Error.h"

using namespace memopt;
using namespace memopt::run;
using runtime::concat;
using runtime::Error;
using runtime::ErrorCode;

namespace {

/// Samples a synthetic dataset holds: enough batches that an epoch is not a
/// handful of steps, bounded so that start-up stays instant.
constexpr int64_t kSyntheticBatches = 16;

} // namespace

DataFeed::DataFeed(const runtime::Plan &plan, const CompiledGraph &graph,
                   const std::string &spec, const std::string &split,
                   uint64_t seed, int rank, int ranks)
    : plan(plan), rank(rank), ranks(ranks) {
  // The classifier's float input and labels, if the graph has exactly one
  // of each and they agree on the batch size.
  std::vector<size_t> floats, labels;
  for (size_t i = 0; i < plan.arguments.size(); ++i) {
    if (plan.arguments[i].role != runtime::ArgumentRole::Data)
      continue;
    const runtime::TensorInfo &t = plan.argumentTensor(i);
    if (runtime::isFloatDType(t.dtype) && t.shape.size() >= 2)
      floats.push_back(i);
    else if (graph.argumentInit[i].classLabels && t.shape.size() == 1)
      labels.push_back(i);
  }
  bool classifier = floats.size() == 1 && labels.size() == 1 &&
                    plan.argumentTensor(floats[0]).shape[0] ==
                        plan.argumentTensor(labels[0]).shape[0];
  if (!classifier || spec == "fixed") {
    if (spec != "synthetic" && spec != "fixed")
      throw Error(ErrorCode::InvalidArgument,
                  concat("--data=", spec,
                         ": the model is not a classifier with one batched "
                         "float input and one vector of class labels"));
    description = "a fixed seeded synthetic batch";
    return;
  }
  inputArg = floats[0];
  labelArg = labels[0];
  const runtime::TensorInfo &input = plan.argumentTensor(*inputArg);
  // The global batch: every rank's share.
  int64_t batch = input.shape[0] * ranks;
  runtime::Shape sample(input.shape.begin() + 1, input.shape.end());
  int64_t classes = graph.argumentInit[*labelArg].limit;

  if (spec == "synthetic") {
    dataset = std::make_unique<data::SyntheticDataset>(
        sample, classes, batch * kSyntheticBatches, seed);
  } else if (spec.rfind("mnist:", 0) == 0) {
    dataset = std::make_unique<data::MnistDataset>(
        data::MnistDataset::open(spec.substr(6), split));
  } else if (spec.rfind("cifar10:", 0) == 0) {
    dataset = std::make_unique<data::Cifar10Dataset>(
        data::Cifar10Dataset::open(spec.substr(8), split));
  } else {
    throw Error(ErrorCode::InvalidArgument,
                concat("--data=", spec,
                       ": expected synthetic, mnist:<dir> or cifar10:<dir>"));
  }
  if (dataset->sampleElements() != runtime::numElements(sample))
    throw Error(ErrorCode::InvalidArgument,
                concat(dataset->name(), " samples are ",
                       runtime::formatShape(dataset->sampleShape()),
                       " but the model's input takes ",
                       runtime::formatShape(sample), " per sample"));
  if (dataset->numClasses() != classes)
    throw Error(ErrorCode::InvalidArgument,
                concat(dataset->name(), " has ", dataset->numClasses(),
                       " classes but the model's cross-entropy has ", classes));
  if (dataset->size() < batch)
    throw Error(ErrorCode::InvalidArgument,
                concat(dataset->name(), " has ", dataset->size(),
                       " samples, fewer than one batch of ", batch));
  batcher = std::make_unique<data::Batcher>(*dataset, batch, seed);
  description =
      concat(dataset->name(), " (", dataset->size(), " samples, ",
             batcher->batchesPerEpoch(), " shuffled batches per epoch)");
}

DataFeed::~DataFeed() = default;

void DataFeed::next(runtime::Executor &executor, bool prefetch) {
  if (!batcher)
    return;
  const runtime::TensorInfo &input = plan.argumentTensor(*inputArg);
  const runtime::TensorInfo &labels = plan.argumentTensor(*labelArg);
  // The global batch's samples, of which this rank reads its rows.
  std::vector<float> x(input.numElements);
  std::vector<int64_t> y(labels.numElements);
  data::IndexSpan global = batcher->nextIndices();
  const size_t share = global.size() / static_cast<size_t>(ranks);
  batcher->dataset().fill(
      data::IndexSpan(global.data() + share * static_cast<size_t>(rank), share),
      x.data(), y.data());
  HostTensor inputs(input.dtype, input.shape),
      classes(labels.dtype, labels.shape);
  for (size_t i = 0; i < x.size(); ++i)
    inputs.set(static_cast<int64_t>(i), x[i]);
  for (size_t i = 0; i < y.size(); ++i)
    classes.set(static_cast<int64_t>(i), static_cast<double>(y[i]));
  if (prefetch) {
    executor.prefetchArgument(*inputArg, input.dtype, input.shape,
                              inputs.bytes.data(), inputs.bytes.size());
    executor.prefetchArgument(*labelArg, labels.dtype, labels.shape,
                              classes.bytes.data(), classes.bytes.size());
    return;
  }
  executor.setArgument(*inputArg, input.dtype, input.shape, inputs.bytes.data(),
                       inputs.bytes.size());
  executor.setArgument(*labelArg, labels.dtype, labels.shape,
                       classes.bytes.data(), classes.bytes.size());
}
