//===- Dataset.h - training data: MNIST, CIFAR-10, synthetic ----*- C++ -*-===//
//
// What a training loop feeds the runtime: a batch of inputs (f32, row-major
// N x sample dims) and class labels (i64). A Dataset gives random access to
// its samples; a Batcher walks one in shuffled batches, one permutation per
// epoch.
//
// The readers take the files exactly as distributed (MNIST IDX, CIFAR-10
// binary version), check every size before touching the data, and report
// anything malformed as an Error naming the file and what was expected, so
// a bad download never becomes an out-of-bounds read. Pixels are scaled to
// [0, 1] and normalised with torchvision's usual constants, so a model
// trained here sees the same inputs as its PyTorch reference.
//
// Shuffling and the synthetic data use only fully specified generators
// (std::mt19937_64's raw output, SplitMix64) and our own range reduction and
// Box-Muller transform rather than std::*_distribution, whose algorithms the
// standard leaves to the library: the same seed gives the same order and the
// same data with libstdc++ and libc++ alike.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DATA_DATASET_H
#define MEMOPT_DATA_DATASET_H

#include "memopt/runtime/Shape.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memopt::data {

/// A non-owning view of sample indices (std::span<const int64_t> for C++17).
/// Like std::span it must not outlive what it views.
class IndexSpan {
public:
  IndexSpan() = default;
  IndexSpan(const int64_t *data, size_t size) : ptr(data), count(size) {}
  IndexSpan(const std::vector<int64_t> &indices)
      : ptr(indices.data()), count(indices.size()) {}

  const int64_t *data() const { return ptr; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  const int64_t *begin() const { return ptr; }
  const int64_t *end() const { return ptr + count; }
  int64_t operator[](size_t i) const { return ptr[i]; }

private:
  const int64_t *ptr = nullptr;
  size_t count = 0;
};

/// A labelled classification dataset with random access to its samples.
/// Subclasses provide one sample at a time; `fill` does the batching and
/// the argument checks once for all of them.
class Dataset {
public:
  virtual ~Dataset();

  /// Number of samples.
  int64_t size() const { return numSamples; }
  /// Dimensions of one sample, e.g. {1, 28, 28} or {3, 32, 32}.
  const runtime::Shape &sampleShape() const { return shape; }
  /// Elements of one sample (the product of sampleShape()).
  int64_t sampleElements() const { return elements; }
  /// Labels lie in [0, numClasses()).
  int64_t numClasses() const { return classes; }
  /// What messages call it: "mnist train", "cifar10 test", "synthetic".
  const std::string &name() const { return displayName; }

  /// Writes samples `indices[0..n)` to `inputs` (n x sampleElements() f32,
  /// row-major) and their labels to `labels` (n i64). Every index is checked
  /// before anything is written; throws Error(InvalidArgument) for an index
  /// outside [0, size()) or a null buffer when n > 0.
  void fill(IndexSpan indices, float *inputs, int64_t *labels) const;

  /// The label of sample `index` (checked like `fill`).
  int64_t labelAt(int64_t index) const;

protected:
  /// Validates the shape and the class count; throws Error(InvalidArgument).
  Dataset(std::string name, runtime::Shape sampleShape, int64_t numClasses,
          int64_t numSamples);
  Dataset(const Dataset &) = default;
  Dataset(Dataset &&) = default;
  Dataset &operator=(const Dataset &) = default;
  Dataset &operator=(Dataset &&) = default;

  /// Writes sample `index` (in range) to `out` (sampleElements() floats).
  virtual void writeSample(int64_t index, float *out) const = 0;
  /// The label of sample `index` (in range).
  virtual int64_t label(int64_t index) const = 0;

private:
  std::string displayName;
  runtime::Shape shape;
  int64_t elements = 0;
  int64_t classes = 0;
  int64_t numSamples = 0;
};

/// MNIST (and any other IDX set of 8-bit images with labels < 10, such as
/// Fashion-MNIST with its own mean and std): samples are 1 x rows x cols.
class MnistDataset : public Dataset {
public:
  /// torchvision's customary MNIST normalisation.
  static constexpr float kMean = 0.1307f;
  static constexpr float kStd = 0.3081f;

  /// Reads split "train" (train-images-idx3-ubyte, train-labels-idx1-ubyte)
  /// or "test" (t10k-*) from `dir`, or from `dir`/MNIST/raw as torchvision
  /// lays it out. The names may also be spelled with `.idx3-ubyte` /
  /// `.idx1-ubyte` (Kaggle). Pixels become (p / 255 - mean) / stddev in f32.
  ///
  /// Checks the magic numbers (2051 images, 2049 labels), that both files
  /// hold the same number of items, that each file's size is exactly what
  /// its header implies, and that every label is below 10. Throws
  /// Error(Io) for a missing directory or file or a read failure and
  /// Error(InvalidArgument) for a bad split, mean or stddev, or a malformed
  /// file; messages start with `mnist: <path>: `.
  static MnistDataset open(const std::string &dir, const std::string &split,
                           float mean = kMean, float stddev = kStd);

  /// Files the data came from.
  const std::string &imagesPath() const { return imagesFile; }
  const std::string &labelsPath() const { return labelsFile; }

protected:
  void writeSample(int64_t index, float *out) const override;
  int64_t label(int64_t index) const override;

private:
  MnistDataset(std::string name, int64_t rows, int64_t cols, int64_t count);

  std::string imagesFile, labelsFile;
  std::vector<uint8_t> pixels;    // count x rows x cols
  std::vector<uint8_t> labels;    // count
  std::array<float, 256> table{}; // normalised value of each byte
};

/// CIFAR-10, binary version (cifar-10-binary.tar.gz): samples are 3 x 32 x 32
/// in the file's own R, G, B plane order.
class Cifar10Dataset : public Dataset {
public:
  static constexpr int64_t kRecordBytes = 1 + 3 * 32 * 32;
  /// The customary per-channel normalisation (R, G, B).
  static constexpr std::array<float, 3> kMean = {0.4914f, 0.4822f, 0.4465f};
  static constexpr std::array<float, 3> kStd = {0.2470f, 0.2435f, 0.2616f};

  /// Reads split "train" (those of data_batch_1.bin ... data_batch_5.bin
  /// that exist, in that order; at least one) or "test" (test_batch.bin)
  /// from `dir`, or from `dir`/cifar-10-batches-bin as the archive unpacks.
  /// Pixels become (p / 255 - mean[c]) / stddev[c] in f32.
  ///
  /// Checks that each file is a non-empty whole number of 3073-byte records
  /// and that every label is below 10. Throws Error(Io) for a missing
  /// directory or file or a read failure and Error(InvalidArgument) for a
  /// bad split, mean or stddev, or a malformed file; messages start with
  /// `cifar10: <path>: `.
  static Cifar10Dataset open(const std::string &dir, const std::string &split,
                             const std::array<float, 3> &mean = kMean,
                             const std::array<float, 3> &stddev = kStd);

  /// Files the data came from, in sample order.
  const std::vector<std::string> &paths() const { return files; }

protected:
  void writeSample(int64_t index, float *out) const override;
  int64_t label(int64_t index) const override;

private:
  Cifar10Dataset(std::string name, int64_t count);

  std::vector<std::string> files;
  std::vector<uint8_t> records; // count x kRecordBytes, as in the files
  std::array<std::array<float, 256>, 3> tables{}; // per channel
};

/// A learnable synthetic task, for smoke tests and benchmarks without
/// downloads: each class has a fixed prototype with N(0, 1) elements, and a
/// sample is its class's prototype plus 0.5 * N(0, 1) noise, so even a
/// linear model's loss falls quickly. Labels are balanced (sample counts per
/// class differ by at most one) and shuffled. Everything derives from
/// `seed`: the same seed gives the same data bit for bit. Samples are
/// generated on demand from (seed, index), so memory is only the prototypes
/// and the labels.
class SyntheticDataset : public Dataset {
public:
  /// Throws Error(InvalidArgument) for an empty or non-positive shape, fewer
  /// than 1 class or sample, or more samples than labels it can hold.
  SyntheticDataset(runtime::Shape sampleDims, int64_t classes, int64_t samples,
                   uint64_t seed);

protected:
  void writeSample(int64_t index, float *out) const override;
  int64_t label(int64_t index) const override;

private:
  uint64_t seed;
  std::vector<int64_t> labels; // samples
};

/// A permutation of [0, count): Fisher-Yates driven by std::mt19937_64
/// seeded with `seed`, with unbiased rejection-based range reduction.
std::vector<int64_t> shuffledOrder(int64_t count, uint64_t seed);

/// The seed of epoch `epoch`'s permutation in a Batcher seeded with `seed`:
/// mix(mix(seed) ^ epoch) with SplitMix64's output function `mix`, so
/// neighbouring seeds and epochs give unrelated orders.
uint64_t epochSeed(uint64_t seed, int64_t epoch);

/// Walks a dataset in batches of a fixed size, epoch after epoch. Epoch e
/// visits the samples in the order shuffledOrder(size, epochSeed(seed, e))
/// (or 0, 1, 2, ... without shuffling) and drops the last incomplete batch
/// (PyTorch's drop_last=True), so every batch is full and, within an epoch,
/// no sample repeats. The dataset must outlive the Batcher.
class Batcher {
public:
  /// Throws Error(InvalidArgument) unless 1 <= batchSize <= dataset.size().
  Batcher(const Dataset &dataset, int64_t batchSize, uint64_t seed,
          bool shuffle = true);

  const Dataset &dataset() const { return *source; }
  int64_t batchSize() const { return batch; }
  /// floor(dataset.size() / batchSize).
  int64_t batchesPerEpoch() const { return perEpoch; }
  /// The epoch the next batch belongs to (0 first). After the last batch of
  /// an epoch this already names the next one.
  int64_t epoch() const { return currentEpoch; }
  /// The index of the next batch within its epoch, in [0, batchesPerEpoch).
  int64_t position() const { return currentPosition; }
  /// Batches handed out so far: epoch() * batchesPerEpoch() + position().
  int64_t step() const { return currentEpoch * perEpoch + currentPosition; }

  /// The sample indices of the next batch, and advances. The view stays
  /// valid until the next call of nextIndices, next or seek.
  IndexSpan nextIndices();
  /// Fills the next batch (inputs: batchSize() x sampleElements() floats,
  /// labels: batchSize()) and advances.
  void next(float *inputs, int64_t *labels);
  /// Continues at batch `position` of epoch `epoch`, e.g. when resuming
  /// from a checkpoint; throws Error(InvalidArgument) when out of range.
  void seek(int64_t epoch, int64_t position);

private:
  const Dataset *source;
  int64_t batch;
  int64_t perEpoch;
  uint64_t seed;
  bool shuffle;
  int64_t currentEpoch = 0;
  int64_t currentPosition = 0;
  /// The epoch `order` belongs to; -1 before the first batch.
  int64_t orderEpoch = -1;
  std::vector<int64_t> order;
};

} // namespace memopt::data

#endif // MEMOPT_DATA_DATASET_H
