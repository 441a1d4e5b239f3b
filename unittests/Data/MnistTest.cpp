//===- MnistTest.cpp - the MNIST IDX reader -------------------------------===//
//
// Small IDX files written here: decoding, normalisation, label order, the
// file name variants, and every malformed file, which must be an Error
// naming the file rather than a crash.
//
//===----------------------------------------------------------------------===//

#include "memopt/data/Dataset.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

using namespace memopt::data;
using namespace memopt::data::test;
using memopt::runtime::ErrorCode;
using memopt::runtime::Shape;

namespace {

constexpr int kCount = 5, kRows = 28, kCols = 28;
const std::vector<uint8_t> kLabels = {3, 1, 4, 1, 5};

void appendBigEndian32(std::vector<uint8_t> &bytes, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    bytes.push_back(static_cast<uint8_t>(v >> shift));
}

uint8_t pixel(int image, int i) {
  return static_cast<uint8_t>((image * 53 + i * 7) % 256);
}

std::vector<uint8_t> imagesFile(uint32_t count = kCount, uint32_t rows = kRows,
                                uint32_t cols = kCols, uint32_t magic = 2051) {
  std::vector<uint8_t> bytes;
  appendBigEndian32(bytes, magic);
  appendBigEndian32(bytes, count);
  appendBigEndian32(bytes, rows);
  appendBigEndian32(bytes, cols);
  for (uint32_t n = 0; n < count; ++n)
    for (uint32_t i = 0; i < rows * cols; ++i)
      bytes.push_back(pixel(n, i));
  return bytes;
}

std::vector<uint8_t> labelsFile(const std::vector<uint8_t> &labels = kLabels,
                                uint32_t magic = 2049) {
  std::vector<uint8_t> bytes;
  appendBigEndian32(bytes, magic);
  appendBigEndian32(bytes, static_cast<uint32_t>(labels.size()));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

/// A directory with a valid train split, its files replaceable.
struct MnistDir {
  TempDir dir;
  std::string images = dir.file("train-images-idx3-ubyte");
  std::string labels = dir.file("train-labels-idx1-ubyte");
  MnistDir() {
    writeBytes(images, imagesFile());
    writeBytes(labels, labelsFile());
  }
  std::string error(ErrorCode code = ErrorCode::InvalidArgument) {
    return errorOf([&] { MnistDataset::open(dir.path, "train"); }, code);
  }
};

TEST(Mnist, DecodesAndNormalisesPixelsAndLabels) {
  MnistDir d;
  MnistDataset ds = MnistDataset::open(d.dir.path, "train");
  EXPECT_EQ(ds.size(), kCount);
  EXPECT_EQ(ds.sampleShape(), (Shape{1, kRows, kCols}));
  EXPECT_EQ(ds.sampleElements(), kRows * kCols);
  EXPECT_EQ(ds.numClasses(), 10);
  EXPECT_EQ(ds.name(), "mnist train");
  EXPECT_EQ(ds.imagesPath(), d.images);
  EXPECT_EQ(ds.labelsPath(), d.labels);

  std::vector<int64_t> indices = {4, 0, 2, 4};
  std::vector<float> x(indices.size() * kRows * kCols, -99.0f);
  std::vector<int64_t> y(indices.size(), -1);
  ds.fill(indices, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{5, 3, 4, 5}));
  for (size_t n = 0; n < indices.size(); ++n)
    for (int i = 0; i < kRows * kCols; ++i)
      ASSERT_EQ(x[n * kRows * kCols + i],
                normalised(pixel(indices[n], i), 0.1307f, 0.3081f))
          << "sample " << n << " element " << i;
  for (int64_t i = 0; i < kCount; ++i)
    EXPECT_EQ(ds.labelAt(i), kLabels[i]);
}

TEST(Mnist, ExtremePixelsMatchTorchvisionConstants) {
  TempDir dir;
  std::vector<uint8_t> bytes = imagesFile(1, 1, 2);
  bytes[16] = 0;
  bytes[17] = 255;
  writeBytes(dir.file("t10k-images-idx3-ubyte"), bytes);
  writeBytes(dir.file("t10k-labels-idx1-ubyte"), labelsFile({9}));
  MnistDataset ds = MnistDataset::open(dir.path, "test");
  EXPECT_EQ(ds.name(), "mnist test");
  EXPECT_EQ(ds.sampleShape(), (Shape{1, 1, 2}));
  float x[2];
  int64_t y;
  ds.fill(std::vector<int64_t>{0}, x, &y);
  EXPECT_NEAR(x[0], -0.1307 / 0.3081, 1e-6);
  EXPECT_NEAR(x[1], (1 - 0.1307) / 0.3081, 1e-6);
  EXPECT_EQ(y, 9);
}

TEST(Mnist, CustomNormalisation) {
  MnistDir d;
  MnistDataset ds = MnistDataset::open(d.dir.path, "train", 0.5f, 0.25f);
  std::vector<float> x(kRows * kCols);
  int64_t y;
  ds.fill(std::vector<int64_t>{1}, x.data(), &y);
  for (int i = 0; i < kRows * kCols; ++i)
    ASSERT_EQ(x[i], normalised(pixel(1, i), 0.5f, 0.25f));
}

TEST(Mnist, AcceptsKaggleSpellingAndTorchvisionLayout) {
  TempDir kaggle;
  writeBytes(kaggle.file("t10k-images.idx3-ubyte"), imagesFile());
  writeBytes(kaggle.file("t10k-labels.idx1-ubyte"), labelsFile());
  EXPECT_EQ(MnistDataset::open(kaggle.path, "test").size(), kCount);

  TempDir torchvision;
  writeBytes(torchvision.file("MNIST/raw/train-images-idx3-ubyte"),
             imagesFile(2));
  writeBytes(torchvision.file("MNIST/raw/train-labels-idx1-ubyte"),
             labelsFile({7, 8}));
  MnistDataset ds = MnistDataset::open(torchvision.path, "train");
  EXPECT_EQ(ds.size(), 2);
  EXPECT_EQ(ds.labelAt(1), 8);
}

TEST(Mnist, BadImagesMagic) {
  MnistDir d;
  writeBytes(d.images, imagesFile(kCount, kRows, kCols, 2049));
  std::string msg = d.error();
  EXPECT_NE(msg.find("mnist: " + d.images + ": bad magic number 2049"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("expected 2051"), std::string::npos) << msg;
}

TEST(Mnist, BadLabelsMagic) {
  MnistDir d;
  writeBytes(d.labels, labelsFile(kLabels, 0x01080000));
  std::string msg = d.error();
  EXPECT_NE(msg.find("mnist: " + d.labels + ": bad magic number"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("expected 2049"), std::string::npos) << msg;
}

TEST(Mnist, CountMismatch) {
  MnistDir d;
  writeBytes(d.labels, labelsFile({1, 2, 3, 4}));
  std::string msg = d.error();
  EXPECT_NE(msg.find("mnist: " + d.labels + ": 4 labels, but " + d.images +
                     " holds 5 images"),
            std::string::npos)
      << msg;
}

TEST(Mnist, TruncatedImages) {
  MnistDir d;
  std::vector<uint8_t> bytes = imagesFile();
  bytes.pop_back();
  writeBytes(d.images, bytes);
  std::string msg = d.error();
  EXPECT_NE(msg.find("mnist: " + d.images +
                     ": 5 images of 28x28 need 16 + 3920 bytes, but the "
                     "file has 3935 (truncated)"),
            std::string::npos)
      << msg;
}

TEST(Mnist, OversizedImages) {
  MnistDir d;
  std::vector<uint8_t> bytes = imagesFile();
  bytes.push_back(0);
  writeBytes(d.images, bytes);
  std::string msg = d.error();
  EXPECT_NE(msg.find("file has 3937 (oversized)"), std::string::npos) << msg;
  EXPECT_NE(msg.find(d.images), std::string::npos) << msg;
}

TEST(Mnist, TruncatedAndOversizedLabels) {
  MnistDir d;
  std::vector<uint8_t> bytes = labelsFile();
  bytes.pop_back();
  writeBytes(d.labels, bytes);
  std::string msg = d.error();
  EXPECT_NE(msg.find("mnist: " + d.labels +
                     ": 5 labels need 8 + 5 bytes, but the file has 12 "
                     "(truncated)"),
            std::string::npos)
      << msg;
  bytes.push_back(1);
  bytes.push_back(1);
  writeBytes(d.labels, bytes);
  msg = d.error();
  EXPECT_NE(msg.find("file has 14 (oversized)"), std::string::npos) << msg;
}

TEST(Mnist, HeaderTooShort) {
  MnistDir d;
  writeBytes(d.images, {0, 0, 8, 3, 0, 0});
  std::string msg = d.error();
  EXPECT_NE(msg.find("mnist: " + d.images +
                     ": file of 6 bytes is too short for the 16-byte IDX "
                     "header of images"),
            std::string::npos)
      << msg;
  writeBytes(d.images, imagesFile());
  writeBytes(d.labels, {});
  msg = d.error();
  EXPECT_NE(msg.find(d.labels + ": file of 0 bytes is too short"),
            std::string::npos)
      << msg;
}

TEST(Mnist, HugeHeaderIsRefusedBeforeAllocating) {
  MnistDir d;
  std::vector<uint8_t> bytes = imagesFile(0);
  for (int i = 4; i < 16; ++i)
    bytes[i] = 0xff;
  writeBytes(d.images, bytes);
  std::string msg = d.error();
  EXPECT_NE(msg.find(d.images + ": header declares 4294967295 images of "
                                "4294967295x4294967295 pixels"),
            std::string::npos)
      << msg;
  // A product that fits but is far beyond the file: no allocation either.
  bytes.clear();
  for (uint32_t v : {2051u, 1u << 31, 1u << 16, 1u})
    appendBigEndian32(bytes, v);
  writeBytes(d.images, bytes);
  msg = d.error();
  EXPECT_NE(msg.find("(truncated)"), std::string::npos) << msg;
}

TEST(Mnist, EmptyImages) {
  MnistDir d;
  writeBytes(d.images, imagesFile(0));
  writeBytes(d.labels, labelsFile({}));
  std::string msg = d.error();
  EXPECT_NE(msg.find(d.images + ": header declares 0 images"),
            std::string::npos)
      << msg;
}

TEST(Mnist, LabelTenIsRefused) {
  MnistDir d;
  writeBytes(d.labels, labelsFile({3, 1, 4, 10, 5}));
  std::string msg = d.error();
  EXPECT_NE(
      msg.find("mnist: " + d.labels + ": label 10 of item 3 is not below 10"),
      std::string::npos)
      << msg;
}

TEST(Mnist, MissingDirectoryAndFiles) {
  TempDir dir;
  std::string missing = dir.path + "/nope";
  std::string msg =
      errorOf([&] { MnistDataset::open(missing, "train"); }, ErrorCode::Io);
  EXPECT_EQ(msg, "mnist: " + missing + ": no such directory");

  std::string plain = dir.file("plain");
  writeBytes(plain, {1});
  msg = errorOf([&] { MnistDataset::open(plain, "train"); }, ErrorCode::Io);
  EXPECT_EQ(msg, "mnist: " + plain + ": not a directory");

  msg = errorOf([&] { MnistDataset::open(dir.path, "train"); }, ErrorCode::Io);
  EXPECT_NE(msg.find("mnist: " + dir.path +
                     ": train-images-idx3-ubyte and train-labels-idx1-ubyte "
                     "not found"),
            std::string::npos)
      << msg;

  writeBytes(dir.file("train-images-idx3-ubyte.gz"), {0x1f, 0x8b});
  msg = errorOf([&] { MnistDataset::open(dir.path, "train"); }, ErrorCode::Io);
  EXPECT_NE(msg.find("decompress it first"), std::string::npos) << msg;

  writeBytes(dir.file("train-images-idx3-ubyte"), imagesFile());
  msg = errorOf([&] { MnistDataset::open(dir.path, "train"); }, ErrorCode::Io);
  EXPECT_EQ(msg, "mnist: " + dir.path +
                     ": train-labels-idx1-ubyte not found (nor "
                     "train-labels.idx1-ubyte)");
  // The train files do not make a test split.
  writeBytes(dir.file("train-labels-idx1-ubyte"), labelsFile());
  EXPECT_NO_THROW(MnistDataset::open(dir.path, "train"));
  msg = errorOf([&] { MnistDataset::open(dir.path, "test"); }, ErrorCode::Io);
  EXPECT_NE(msg.find("t10k-images-idx3-ubyte"), std::string::npos) << msg;
}

TEST(Mnist, BadSplitAndNormalisation) {
  MnistDir d;
  std::string msg =
      errorOf([&] { MnistDataset::open(d.dir.path, "validation"); },
              ErrorCode::InvalidArgument);
  EXPECT_EQ(msg,
            "mnist: unknown split 'validation' (expected 'train' or 'test')");
  msg = errorOf([&] { MnistDataset::open(d.dir.path, "train", 0.1f, 0.0f); },
                ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("standard deviation 0"), std::string::npos) << msg;
}

TEST(Mnist, FillChecksIndicesBeforeWriting) {
  MnistDir d;
  MnistDataset ds = MnistDataset::open(d.dir.path, "train");
  std::vector<float> x(2 * kRows * kCols, 7.0f);
  std::vector<int64_t> y(2, 7);
  std::string msg = errorOf(
      [&] {
        ds.fill(std::vector<int64_t>{0, 5}, x.data(), y.data());
      },
      ErrorCode::InvalidArgument);
  EXPECT_EQ(msg, "mnist train: indices[1] = 5 is outside [0, 5)");
  EXPECT_EQ(x[0], 7.0f);
  EXPECT_EQ(y[0], 7);
  msg = errorOf([&] { ds.fill(std::vector<int64_t>{-1}, x.data(), y.data()); },
                ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("indices[0] = -1"), std::string::npos) << msg;
  msg = errorOf([&] { ds.fill(std::vector<int64_t>{0}, nullptr, y.data()); },
                ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("null"), std::string::npos) << msg;
  EXPECT_NO_THROW(ds.fill(IndexSpan(), nullptr, nullptr));
  msg = errorOf([&] { ds.labelAt(5); }, ErrorCode::InvalidArgument);
  EXPECT_EQ(msg, "mnist train: sample index 5 is outside [0, 5)");
}

} // namespace
