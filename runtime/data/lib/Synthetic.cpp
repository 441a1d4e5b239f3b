//===- Synthetic.cpp - a learnable seeded classification task -------------===//
//
// Every value is a pure function of the seed: prototypes from one key,
// each sample's noise from a key derived from (seed, index), the labels
// from a seeded shuffle. Domain constants keep the streams apart.
//
//===----------------------------------------------------------------------===//

#include "memopt/data/Dataset.h"

#include "Internal.h"

using namespace memopt::runtime;
using namespace memopt::data::detail;

namespace memopt::data {

namespace {

constexpr uint64_t kPrototypeDomain = 0x70726f746f747970ull; // "prototyp"
constexpr uint64_t kNoiseDomain = 0x6e6f697365000000ull;     // "noise"
constexpr uint64_t kLabelDomain = 0x6c6162656c730000ull;     // "labels"
constexpr float kNoiseScale = 0.5f;
/// Bounds the labels held in memory: 2^31 entries.
constexpr int64_t kMaxEntries = int64_t(1) << 31;

uint64_t streamKey(uint64_t seed, uint64_t domain, uint64_t index) {
  return mix(mix(seed ^ domain) ^ index);
}

} // namespace

SyntheticDataset::SyntheticDataset(Shape sampleDims, int64_t classes,
                                   int64_t samples, uint64_t seed)
    : Dataset("synthetic", std::move(sampleDims), classes, samples),
      seed(seed) {
  if (samples < 1 || samples > kMaxEntries)
    throw Error(ErrorCode::InvalidArgument,
                concat("synthetic: ", samples,
                       " samples; need at least 1 and at most ", kMaxEntries));
  // Balanced: sample i of the unshuffled list has class i mod classes.
  std::vector<int64_t> order = shuffledOrder(samples, mix(seed ^ kLabelDomain));
  labels.resize(static_cast<size_t>(samples));
  for (int64_t i = 0; i < samples; ++i)
    labels[size_t(order[size_t(i)])] = i % classes;
}

void SyntheticDataset::writeSample(int64_t index, float *out) const {
  // Prototypes are computed where they are needed rather than held: a
  // thousand ImageNet-sized prototypes would take 600 MB.
  size_t n = static_cast<size_t>(sampleElements());
  uint64_t prototypeKey =
      streamKey(seed, kPrototypeDomain, uint64_t(labels[size_t(index)]));
  uint64_t noiseKey = streamKey(seed, kNoiseDomain, uint64_t(index));
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(normalAt(prototypeKey, i)) +
             kNoiseScale * static_cast<float>(normalAt(noiseKey, i));
}

int64_t SyntheticDataset::label(int64_t index) const {
  return labels[static_cast<size_t>(index)];
}

} // namespace memopt::data
