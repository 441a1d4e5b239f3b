//===- Mnist.cpp - MNIST in the IDX format --------------------------------===//
//
// IDX (http://yann.lecun.com/exdb/mnist/): a big-endian header of a magic
// number 0x000008NN (0x08: unsigned bytes, NN: number of dimensions) and NN
// big-endian u32 sizes, then the bytes. Images are 3-dimensional (count,
// rows, cols; magic 2051), labels 1-dimensional (count; magic 2049).
//
//===----------------------------------------------------------------------===//

#include "memopt/data/Dataset.h"

#include "Internal.h"

using namespace memopt::runtime;
using namespace memopt::data::detail;

namespace memopt::data {

namespace {

constexpr const char *kReader = "mnist";
constexpr uint32_t kImagesMagic = 2051; // 0x00000803
constexpr uint32_t kLabelsMagic = 2049; // 0x00000801
constexpr uint64_t kImagesHeaderBytes = 16;
constexpr uint64_t kLabelsHeaderBytes = 8;
constexpr int kClasses = 10;

uint32_t readBigEndian32(const uint8_t *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) |
         (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

/// Reads the header of `file`: the magic number, checked, and `dims` sizes.
std::vector<uint32_t> readHeader(InputFile &file, uint32_t magic, int dims,
                                 const char *what) {
  uint64_t headerBytes = 4 + 4 * uint64_t(dims);
  if (file.size() < headerBytes)
    file.malformed(concat("file of ", file.size(),
                          " bytes is too short for the ", headerBytes,
                          "-byte IDX header of ", what));
  uint8_t header[16];
  file.read(header, headerBytes);
  uint32_t found = readBigEndian32(header);
  if (found != magic)
    file.malformed(concat("bad magic number ", found, " (0x", std::hex, found,
                          std::dec, "), expected ", magic, " (0x", std::hex,
                          magic, std::dec, ") for IDX ", what));
  std::vector<uint32_t> sizes;
  for (int i = 0; i < dims; ++i)
    sizes.push_back(readBigEndian32(header + 4 + 4 * i));
  return sizes;
}

/// Throws unless the file is exactly `headerBytes` + `dataBytes` long.
void checkFileSize(const InputFile &file, uint64_t headerBytes,
                   uint64_t dataBytes, const std::string &contents) {
  uint64_t expected;
  if (__builtin_add_overflow(headerBytes, dataBytes, &expected) ||
      file.size() != expected)
    file.malformed(concat(contents, " need ", headerBytes, " + ", dataBytes,
                          " bytes, but the file has ", file.size(), " (",
                          file.size() < expected ? "truncated" : "oversized",
                          ")"));
}

struct SplitFiles {
  std::string images, labels;
};

/// Finds the images and labels files of `prefix` ("train" or "t10k") in
/// `dir` or `dir`/MNIST/raw, both in the same directory.
SplitFiles findFiles(const std::string &dir, const std::string &prefix) {
  requireDirectory(kReader, dir);
  const std::vector<std::string> imageNames = {prefix + "-images-idx3-ubyte",
                                               prefix + "-images.idx3-ubyte"};
  const std::vector<std::string> labelNames = {prefix + "-labels-idx1-ubyte",
                                               prefix + "-labels.idx1-ubyte"};
  const std::string dirs[] = {dir, joinPath(dir, "MNIST/raw")};
  auto first = [](const std::string &d, const std::vector<std::string> &names) {
    for (const std::string &name : names)
      if (std::string path = existingFile(d, name); !path.empty())
        return path;
    return std::string();
  };
  for (const std::string &d : dirs) {
    SplitFiles files{first(d, imageNames), first(d, labelNames)};
    if (!files.images.empty() && !files.labels.empty())
      return files;
    if (!files.images.empty() || !files.labels.empty()) {
      const std::vector<std::string> &missing =
          files.images.empty() ? imageNames : labelNames;
      fail(ErrorCode::Io, kReader, d,
           concat(missing[0], " not found (nor ", missing[1], ")"));
    }
  }
  std::string hint;
  for (const std::string &d : dirs)
    if (!existingFile(d, imageNames[0] + ".gz").empty())
      hint = concat("; ", joinPath(d, imageNames[0] + ".gz"),
                    " exists: decompress it first");
  fail(ErrorCode::Io, kReader, dir,
       concat(imageNames[0], " and ", labelNames[0], " not found (nor the ",
              ".idx3-ubyte/.idx1-ubyte spellings, nor in MNIST/raw)", hint));
}

} // namespace

MnistDataset::MnistDataset(std::string name, int64_t rows, int64_t cols,
                           int64_t count)
    : Dataset(std::move(name), {1, rows, cols}, kClasses, count) {}

MnistDataset MnistDataset::open(const std::string &dir,
                                const std::string &split, float mean,
                                float stddev) {
  std::string prefix;
  if (split == "train")
    prefix = "train";
  else if (split == "test")
    prefix = "t10k";
  else
    throw Error(ErrorCode::InvalidArgument,
                concat(kReader, ": unknown split '", split,
                       "' (expected 'train' or 'test')"));
  checkNormalisation(kReader, mean, stddev);
  SplitFiles paths = findFiles(dir, prefix);

  InputFile images(kReader, paths.images);
  std::vector<uint32_t> dims = readHeader(images, kImagesMagic, 3, "images");
  uint32_t count = dims[0], rows = dims[1], cols = dims[2];
  if (count == 0 || rows == 0 || cols == 0)
    images.malformed(concat("header declares ", count, " images of ", rows, "x",
                            cols, " pixels; need at least one pixel"));
  // Each factor is below 2^32, so count * rows fits; the product with cols
  // may not.
  uint64_t pixelBytes;
  bool overflow = __builtin_mul_overflow(uint64_t(count) * rows, uint64_t(cols),
                                         &pixelBytes);
  if (overflow)
    images.malformed(concat("header declares ", count, " images of ", rows, "x",
                            cols, " pixels, more than any file holds"));
  checkFileSize(images, kImagesHeaderBytes, pixelBytes,
                concat(count, " images of ", rows, "x", cols));

  InputFile labels(kReader, paths.labels);
  uint32_t labelCount = readHeader(labels, kLabelsMagic, 1, "labels")[0];
  checkFileSize(labels, kLabelsHeaderBytes, labelCount,
                concat(labelCount, " labels"));
  if (labelCount != count)
    labels.malformed(concat(labelCount, " labels, but ", images.path(),
                            " holds ", count, " images"));

  MnistDataset dataset(concat("mnist ", split), rows, cols, count);
  dataset.imagesFile = images.path();
  dataset.labelsFile = labels.path();
  dataset.labels.resize(labelCount);
  labels.read(dataset.labels.data(), labelCount);
  for (uint32_t i = 0; i < labelCount; ++i)
    if (dataset.labels[i] >= kClasses)
      labels.malformed(concat("label ", int(dataset.labels[i]), " of item ", i,
                              " is not below ", kClasses));
  dataset.pixels.resize(static_cast<size_t>(pixelBytes));
  images.read(dataset.pixels.data(), pixelBytes);
  dataset.table = normalisationTable(mean, stddev);
  return dataset;
}

void MnistDataset::writeSample(int64_t index, float *out) const {
  size_t n = static_cast<size_t>(sampleElements());
  const uint8_t *src = pixels.data() + static_cast<size_t>(index) * n;
  for (size_t i = 0; i < n; ++i)
    out[i] = table[src[i]];
}

int64_t MnistDataset::label(int64_t index) const {
  return labels[static_cast<size_t>(index)];
}

} // namespace memopt::data
