//===- DataFeed.h - the data a training run sees each step ------*- C++ -*-===//
//
// For a classifier (one float input whose leading dimension is the batch, one
// vector of class labels for its cross-entropy) a dataset fills both every
// step: `synthetic` (a learnable seeded task), `mnist:<dir>` or
// `cifar10:<dir>`, in batches shuffled with the run's seed. Data arguments a
// dataset does not describe keep the seeded synthetic values they were
// initialised with, the same every step: a fixed batch the model can fit, so
// the loss of any model visibly falls.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_TOOLS_MEMOPT_RUN_DATAFEED_H
#define MEMOPT_TOOLS_MEMOPT_RUN_DATAFEED_H

#include "memopt/Driver/Compile.h"
#include "memopt/data/Dataset.h"
#include "memopt/runtime/Executor.h"
#include "memopt/runtime/Plan.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace memopt::run {

class DataFeed {
public:
  /// `spec` is `synthetic`, `mnist:<dir>`, `cifar10:<dir>` or `fixed` (keep
  /// the data arguments as initialised); `split` is
  /// `train` or `test`. Throws runtime::Error(InvalidArgument) when a dataset
  /// does not fit the model's input or classes. On `ranks` ranks, the
  /// plan's batch is the rank's share: the feed draws the global batch
  /// (`ranks` times as many samples, as one rank would with the whole
  /// batch) and gives rank `rank` its consecutive rows.
  DataFeed(const runtime::Plan &plan, const CompiledGraph &graph,
           const std::string &spec, const std::string &split, uint64_t seed,
           int rank = 0, int ranks = 1);
  ~DataFeed();

  /// Sets the batch of the next step (call before every step). With
  /// `prefetch`, the batch is for the step after the one in flight
  /// (Executor::prefetchArgument): its preparation and copy overlap that
  /// step.
  void next(runtime::Executor &executor, bool prefetch = false);
  /// What the feed provides, for the run's header.
  const std::string &describe() const { return description; }

private:
  const runtime::Plan &plan;
  std::unique_ptr<data::Dataset> dataset;
  std::unique_ptr<data::Batcher> batcher;
  std::optional<size_t> inputArg, labelArg;
  int rank = 0, ranks = 1;
  std::string description;
};

} // namespace memopt::run

#endif // MEMOPT_TOOLS_MEMOPT_RUN_DATAFEED_H
