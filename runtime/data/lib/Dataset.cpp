//===- Dataset.cpp - the Dataset base, shuffling and the Batcher ----------===//

#include "memopt/data/Dataset.h"

#include "Internal.h"

#include <numeric>
#include <random>

using namespace memopt::runtime;

namespace memopt::data {

//===----------------------------------------------------------------------===//
// Dataset
//===----------------------------------------------------------------------===//

Dataset::~Dataset() = default;

Dataset::Dataset(std::string name, Shape sampleShape, int64_t numClasses,
                 int64_t samples)
    : displayName(std::move(name)), shape(std::move(sampleShape)),
      classes(numClasses), numSamples(samples) {
  std::optional<int64_t> count = checkedNumElements(shape);
  bool positive = !shape.empty();
  for (int64_t size : shape)
    positive = positive && size > 0;
  if (!positive || !count)
    throw Error(ErrorCode::InvalidArgument,
                concat(displayName, ": sample shape ", formatShape(shape),
                       " must have positive sizes and a representable "
                       "element count"));
  elements = *count;
  if (classes < 1)
    throw Error(
        ErrorCode::InvalidArgument,
        concat(displayName, ": ", classes, " classes; need at least 1"));
  if (numSamples < 0)
    throw Error(ErrorCode::InvalidArgument,
                concat(displayName, ": negative sample count ", numSamples));
}

int64_t Dataset::labelAt(int64_t index) const {
  if (index < 0 || index >= numSamples)
    throw Error(ErrorCode::InvalidArgument,
                concat(displayName, ": sample index ", index,
                       " is outside [0, ", numSamples, ")"));
  return label(index);
}

void Dataset::fill(IndexSpan indices, float *inputs, int64_t *labels) const {
  if (indices.empty())
    return;
  if (!indices.data() || !inputs || !labels)
    throw Error(ErrorCode::InvalidArgument,
                concat(displayName, ": fill of ", indices.size(),
                       " samples given a null indices, inputs or labels "
                       "pointer"));
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] < 0 || indices[i] >= numSamples)
      throw Error(ErrorCode::InvalidArgument,
                  concat(displayName, ": indices[", i, "] = ", indices[i],
                         " is outside [0, ", numSamples, ")"));
  size_t stride = static_cast<size_t>(elements);
  for (size_t i = 0; i < indices.size(); ++i) {
    writeSample(indices[i], inputs + i * stride);
    labels[i] = label(indices[i]);
  }
}

//===----------------------------------------------------------------------===//
// Shuffling
//===----------------------------------------------------------------------===//

namespace {

/// Uniform in [0, n) for n >= 1 without modulo bias: rejects the lowest
/// 2^64 mod n raw values so the rest are a whole number of copies of
/// [0, n). Unlike std::uniform_int_distribution, this is the same with
/// every standard library.
uint64_t uniformBelow(std::mt19937_64 &engine, uint64_t n) {
  uint64_t reject = (0 - n) % n; // 2^64 mod n
  uint64_t x;
  do
    x = engine();
  while (x < reject);
  return x % n;
}

} // namespace

std::vector<int64_t> shuffledOrder(int64_t count, uint64_t seed) {
  if (count < 0)
    throw Error(ErrorCode::InvalidArgument,
                concat("shuffle: negative count ", count));
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::mt19937_64 engine(seed);
  for (int64_t i = count - 1; i > 0; --i) {
    auto j = static_cast<int64_t>(
        uniformBelow(engine, static_cast<uint64_t>(i) + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

uint64_t epochSeed(uint64_t seed, int64_t epoch) {
  return detail::mix(detail::mix(seed) ^ static_cast<uint64_t>(epoch));
}

//===----------------------------------------------------------------------===//
// Batcher
//===----------------------------------------------------------------------===//

Batcher::Batcher(const Dataset &dataset, int64_t batchSize, uint64_t seed,
                 bool shuffle)
    : source(&dataset), batch(batchSize), perEpoch(0), seed(seed),
      shuffle(shuffle) {
  if (batchSize < 1 || batchSize > dataset.size())
    throw Error(ErrorCode::InvalidArgument,
                concat("batcher: batch size ", batchSize, " must be in [1, ",
                       dataset.size(), "] for ", dataset.name(), " of ",
                       dataset.size(),
                       " samples (incomplete batches are dropped)"));
  perEpoch = dataset.size() / batchSize;
}

IndexSpan Batcher::nextIndices() {
  if (orderEpoch != currentEpoch) {
    if (shuffle) {
      order = shuffledOrder(source->size(), epochSeed(seed, currentEpoch));
    } else if (order.empty()) {
      order.resize(static_cast<size_t>(source->size()));
      std::iota(order.begin(), order.end(), int64_t(0));
    }
    orderEpoch = currentEpoch;
  }
  IndexSpan span(order.data() + currentPosition * batch,
                 static_cast<size_t>(batch));
  if (++currentPosition == perEpoch) {
    ++currentEpoch;
    currentPosition = 0;
  }
  return span;
}

void Batcher::next(float *inputs, int64_t *labels) {
  // Checked here too so that a bad call does not skip a batch.
  if (!inputs || !labels)
    throw Error(ErrorCode::InvalidArgument,
                "batcher: next given a null inputs or labels pointer");
  source->fill(nextIndices(), inputs, labels);
}

void Batcher::seek(int64_t epoch, int64_t position) {
  if (epoch < 0 || position < 0 || position >= perEpoch)
    throw Error(ErrorCode::InvalidArgument,
                concat("batcher: cannot seek to batch ", position, " of epoch ",
                       epoch, "; an epoch has ", perEpoch, " batches"));
  currentEpoch = epoch;
  currentPosition = position;
}

} // namespace memopt::data
