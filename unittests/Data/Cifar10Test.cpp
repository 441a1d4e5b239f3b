//===- Cifar10Test.cpp - the CIFAR-10 binary reader -----------------------===//
//
// Small batch files written here: decoding of the R, G, B planes, per-
// channel normalisation, file order, and every malformed file.
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

constexpr int kRecord = 3073, kPlane = 1024;
constexpr float kMean[3] = {0.4914f, 0.4822f, 0.4465f};
constexpr float kStd[3] = {0.2470f, 0.2435f, 0.2616f};

/// Pixel `i` of channel `c` of record `r` (distinct per record and
/// channel, covering all byte values).
uint8_t pixel(int r, int c, int i) {
  return static_cast<uint8_t>((r * 31 + c * 101 + i * 3) % 256);
}

std::vector<uint8_t> batchFile(const std::vector<uint8_t> &labels,
                               int firstRecord = 0) {
  std::vector<uint8_t> bytes;
  for (size_t n = 0; n < labels.size(); ++n) {
    bytes.push_back(labels[n]);
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < kPlane; ++i)
        bytes.push_back(pixel(firstRecord + int(n), c, i));
  }
  return bytes;
}

std::string openError(const std::string &dir, const std::string &split,
                      ErrorCode code = ErrorCode::InvalidArgument) {
  return errorOf([&] { Cifar10Dataset::open(dir, split); }, code);
}

TEST(Cifar10, DecodesPlanesAndNormalisesPerChannel) {
  TempDir dir;
  std::string path = dir.file("test_batch.bin");
  writeBytes(path, batchFile({6, 9, 9, 4, 1}));
  Cifar10Dataset ds = Cifar10Dataset::open(dir.path, "test");
  EXPECT_EQ(ds.size(), 5);
  EXPECT_EQ(ds.sampleShape(), (Shape{3, 32, 32}));
  EXPECT_EQ(ds.numClasses(), 10);
  EXPECT_EQ(ds.name(), "cifar10 test");
  EXPECT_EQ(ds.paths(), std::vector<std::string>{path});

  std::vector<int64_t> indices = {3, 0, 4};
  std::vector<float> x(indices.size() * 3 * kPlane);
  std::vector<int64_t> y(indices.size());
  ds.fill(indices, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{4, 6, 1}));
  for (size_t n = 0; n < indices.size(); ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < kPlane; ++i)
        ASSERT_EQ(x[(n * 3 + c) * kPlane + i],
                  normalised(pixel(int(indices[n]), c, i), kMean[c], kStd[c]))
            << "sample " << n << " channel " << c << " pixel " << i;
}

TEST(Cifar10, ExtremePixelsMatchTheConstants) {
  TempDir dir;
  std::vector<uint8_t> bytes(kRecord, 0);
  for (int c = 0; c < 3; ++c)
    bytes[1 + c * kPlane + 1] = 255;
  writeBytes(dir.file("test_batch.bin"), bytes);
  Cifar10Dataset ds = Cifar10Dataset::open(dir.path, "test");
  std::vector<float> x(3 * kPlane);
  int64_t y;
  ds.fill(std::vector<int64_t>{0}, x.data(), &y);
  const double mean[3] = {0.4914, 0.4822, 0.4465};
  const double stddev[3] = {0.2470, 0.2435, 0.2616};
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(x[c * kPlane], -mean[c] / stddev[c], 1e-6);
    EXPECT_NEAR(x[c * kPlane + 1], (1 - mean[c]) / stddev[c], 1e-6);
  }
  EXPECT_EQ(y, 0);
}

TEST(Cifar10, TrainConcatenatesTheBatchesThatExistInOrder) {
  TempDir dir;
  std::string third = dir.file("data_batch_3.bin");
  std::string first = dir.file("data_batch_1.bin");
  writeBytes(third, batchFile({7, 8, 9}, 2));
  writeBytes(first, batchFile({0, 1}, 0));
  writeBytes(dir.file("test_batch.bin"), batchFile({5}));
  Cifar10Dataset ds = Cifar10Dataset::open(dir.path, "train");
  EXPECT_EQ(ds.paths(), (std::vector<std::string>{first, third}));
  ASSERT_EQ(ds.size(), 5);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(ds.labelAt(i), (std::vector<int64_t>{0, 1, 7, 8, 9})[i]);
  std::vector<float> x(3 * kPlane);
  int64_t y;
  ds.fill(std::vector<int64_t>{3}, x.data(), &y);
  EXPECT_EQ(y, 8);
  EXPECT_EQ(x[2 * kPlane + 5], normalised(pixel(3, 2, 5), kMean[2], kStd[2]));
}

TEST(Cifar10, AcceptsTheArchiveDirectory) {
  TempDir dir;
  writeBytes(dir.file("cifar-10-batches-bin/test_batch.bin"), batchFile({2}));
  EXPECT_EQ(Cifar10Dataset::open(dir.path, "test").size(), 1);
}

TEST(Cifar10, SizeNotAWholeNumberOfRecords) {
  TempDir dir;
  std::string path = dir.file("test_batch.bin");
  std::vector<uint8_t> bytes = batchFile({1, 2});
  bytes.pop_back();
  writeBytes(path, bytes);
  std::string msg = openError(dir.path, "test");
  EXPECT_EQ(msg, "cifar10: " + path +
                     ": 6145 bytes is not a whole number of 3073-byte records "
                     "(1 label + 3072 pixels); 1 records and 3072 bytes left "
                     "over");
  bytes.push_back(0);
  bytes.push_back(0);
  writeBytes(path, bytes);
  msg = openError(dir.path, "test");
  EXPECT_NE(msg.find(path + ": 6147 bytes is not a whole number"),
            std::string::npos)
      << msg;
}

TEST(Cifar10, EmptyFile) {
  TempDir dir;
  writeBytes(dir.file("data_batch_1.bin"), batchFile({1}));
  std::string path = dir.file("data_batch_2.bin");
  writeBytes(path, {});
  std::string msg = openError(dir.path, "train");
  EXPECT_NE(msg.find("cifar10: " + path + ": empty file"), std::string::npos)
      << msg;
}

TEST(Cifar10, LabelTenIsRefused) {
  TempDir dir;
  writeBytes(dir.file("data_batch_1.bin"), batchFile({1, 2}));
  std::string path = dir.file("data_batch_2.bin");
  writeBytes(path, batchFile({0, 10}));
  std::string msg = openError(dir.path, "train");
  EXPECT_EQ(msg, "cifar10: " + path + ": label 10 of record 1 is not below 10");
}

TEST(Cifar10, MissingDirectoryAndFiles) {
  TempDir dir;
  std::string missing = dir.path + "/nope";
  EXPECT_EQ(openError(missing, "test", ErrorCode::Io),
            "cifar10: " + missing + ": no such directory");

  std::string msg = openError(dir.path, "train", ErrorCode::Io);
  EXPECT_EQ(msg, "cifar10: " + dir.path +
                     ": none of data_batch_1.bin ... data_batch_5.bin found "
                     "(nor in cifar-10-batches-bin)");
  writeBytes(dir.file("data_batch_1.bin"), batchFile({1}));
  msg = openError(dir.path, "test", ErrorCode::Io);
  EXPECT_EQ(msg, "cifar10: " + dir.path +
                     ": test_batch.bin not found (nor in "
                     "cifar-10-batches-bin)");

  TempDir python;
  writeBytes(python.file("cifar-10-batches-py/data_batch_1"), {0x80});
  msg = openError(python.path, "train", ErrorCode::Io);
  EXPECT_NE(msg.find("Python (pickle) version"), std::string::npos) << msg;
}

TEST(Cifar10, BadSplitAndNormalisation) {
  TempDir dir;
  writeBytes(dir.file("test_batch.bin"), batchFile({1}));
  EXPECT_EQ(openError(dir.path, "val"),
            "cifar10: unknown split 'val' (expected 'train' or 'test')");
  std::string msg = errorOf(
      [&] {
        Cifar10Dataset::open(dir.path, "test", {0.5f, 0.5f, 0.5f},
                             {0.5f, -1.0f, 0.5f});
      },
      ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("standard deviation -1"), std::string::npos) << msg;
}

} // namespace
