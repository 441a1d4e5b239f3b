//===- Cifar10.cpp - CIFAR-10, binary version -----------------------------===//
//
// Each file is a sequence of 3073-byte records: the label byte, then the
// 32x32 red, green and blue planes, row-major, which is already the CHW
// layout of a 3x32x32 sample.
//
//===----------------------------------------------------------------------===//

#include "memopt/data/Dataset.h"

#include "Internal.h"

#include <filesystem>

using namespace memopt::runtime;
using namespace memopt::data::detail;

namespace memopt::data {

namespace {

constexpr const char *kReader = "cifar10";
constexpr int kClasses = 10;
constexpr int64_t kPlane = 32 * 32;
constexpr int kTrainBatches = 5;

/// The existing files of `split` in `dir` or `dir`/cifar-10-batches-bin
/// (the first of the two that has any), in sample order.
std::vector<std::string> findFiles(const std::string &dir, bool train) {
  requireDirectory(kReader, dir);
  std::vector<std::string> names;
  if (train)
    for (int i = 1; i <= kTrainBatches; ++i)
      names.push_back(concat("data_batch_", i, ".bin"));
  else
    names.push_back("test_batch.bin");
  for (const std::string &d : {dir, joinPath(dir, "cifar-10-batches-bin")}) {
    std::vector<std::string> found;
    for (const std::string &name : names)
      if (std::string path = existingFile(d, name); !path.empty())
        found.push_back(path);
    if (!found.empty())
      return found;
  }
  std::string hint;
  std::error_code ec;
  if (std::filesystem::exists(joinPath(dir, "cifar-10-batches-py"), ec) ||
      !existingFile(dir, train ? "data_batch_1" : "test_batch").empty())
    hint = "; that looks like the Python (pickle) version, memopt reads the "
           "binary version (cifar-10-binary.tar.gz)";
  fail(ErrorCode::Io, kReader, dir,
       concat(train ? "none of data_batch_1.bin ... data_batch_5.bin found"
                    : "test_batch.bin not found",
              " (nor in cifar-10-batches-bin)", hint));
}

} // namespace

Cifar10Dataset::Cifar10Dataset(std::string name, int64_t count)
    : Dataset(std::move(name), {3, 32, 32}, kClasses, count) {}

Cifar10Dataset Cifar10Dataset::open(const std::string &dir,
                                    const std::string &split,
                                    const std::array<float, 3> &mean,
                                    const std::array<float, 3> &stddev) {
  if (split != "train" && split != "test")
    throw Error(ErrorCode::InvalidArgument,
                concat(kReader, ": unknown split '", split,
                       "' (expected 'train' or 'test')"));
  for (int c = 0; c < 3; ++c)
    checkNormalisation(kReader, mean[c], stddev[c]);
  std::vector<std::string> paths = findFiles(dir, split == "train");

  // Check every file's size before reading any of them.
  std::vector<InputFile> inputs;
  uint64_t totalBytes = 0;
  for (const std::string &path : paths) {
    InputFile &file = inputs.emplace_back(kReader, path);
    if (file.size() == 0)
      file.malformed("empty file; expected 3073-byte records (1 label + "
                     "3072 pixels)");
    if (file.size() % kRecordBytes != 0)
      file.malformed(concat(file.size(),
                            " bytes is not a whole number of 3073-byte "
                            "records (1 label + 3072 pixels); ",
                            file.size() / kRecordBytes, " records and ",
                            file.size() % kRecordBytes, " bytes left over"));
    totalBytes += file.size();
  }

  Cifar10Dataset dataset(concat("cifar10 ", split),
                         static_cast<int64_t>(totalBytes / kRecordBytes));
  dataset.files = paths;
  dataset.records.resize(static_cast<size_t>(totalBytes));
  uint8_t *dst = dataset.records.data();
  for (InputFile &file : inputs) {
    file.read(dst, file.size());
    for (uint64_t r = 0; r < file.size() / kRecordBytes; ++r)
      if (dst[r * kRecordBytes] >= kClasses)
        file.malformed(concat("label ", int(dst[r * kRecordBytes]),
                              " of record ", r, " is not below ", kClasses));
    dst += file.size();
  }
  for (int c = 0; c < 3; ++c)
    dataset.tables[c] = normalisationTable(mean[c], stddev[c]);
  return dataset;
}

void Cifar10Dataset::writeSample(int64_t index, float *out) const {
  const uint8_t *src =
      records.data() + static_cast<size_t>(index) * kRecordBytes + 1;
  for (int c = 0; c < 3; ++c) {
    const std::array<float, 256> &table = tables[c];
    for (int64_t i = 0; i < kPlane; ++i)
      out[c * kPlane + i] = table[src[c * kPlane + i]];
  }
}

int64_t Cifar10Dataset::label(int64_t index) const {
  return records[static_cast<size_t>(index) * kRecordBytes];
}

} // namespace memopt::data
