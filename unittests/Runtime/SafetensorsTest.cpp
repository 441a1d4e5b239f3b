//===- SafetensorsTest.cpp - safetensors reader and writer ----------------===//
//
// Round trips, and every malformed file a reader must refuse with a message
// naming the problem rather than crash or read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "memopt/runtime/Safetensors.h"
#include "memopt/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

using namespace memopt::runtime;

namespace {

/// A file image: little-endian header length, header text, data bytes.
std::vector<uint8_t> image(const std::string &header, size_t dataBytes) {
  std::vector<uint8_t> bytes(8);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<uint8_t>(n >> (8 * i));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.resize(bytes.size() + dataBytes, 0x3f);
  return bytes;
}

std::string errorOf(const std::vector<uint8_t> &bytes) {
  try {
    parseSafetensors(bytes, "w.safetensors");
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    return e.what();
  }
  return "";
}

TEST(Safetensors, RoundTripKeepsOrderDataAndMetadata) {
  SafetensorsFile file;
  file.metadata = {{"format", "pt"}};
  file.tensors.push_back(
      {"w", DType::F32, {2, 3}, std::vector<uint8_t>(24, 1)});
  file.tensors.push_back({"ids", DType::I64, {2}, std::vector<uint8_t>(16, 2)});
  file.tensors.push_back({"h", DType::BF16, {}, std::vector<uint8_t>(2, 3)});
  std::string path = ::testing::TempDir() + "/roundtrip.safetensors";
  writeSafetensors(path, file);
  SafetensorsFile back = readSafetensors(path);
  ASSERT_EQ(back.tensors.size(), 3u);
  EXPECT_EQ(back.tensors[0].name, "w");
  EXPECT_EQ(back.tensors[0].shape, (Shape{2, 3}));
  EXPECT_EQ(back.tensors[1].dtype, DType::I64);
  EXPECT_EQ(back.tensors[2].data, std::vector<uint8_t>(2, 3));
  EXPECT_EQ(back.metadata.at("format"), "pt");
  EXPECT_NE(back.find("ids"), nullptr);
  EXPECT_EQ(back.find("nope"), nullptr);
  std::remove(path.c_str());
}

TEST(Safetensors, HeaderIsPaddedToEightBytes) {
  SafetensorsFile file;
  file.tensors.push_back({"x", DType::F32, {1}, std::vector<uint8_t>(4, 0)});
  std::string path = ::testing::TempDir() + "/pad.safetensors";
  writeSafetensors(path, file);
  std::FILE *f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  uint8_t len[8];
  ASSERT_EQ(std::fread(len, 1, 8, f), 8u);
  std::fclose(f);
  EXPECT_EQ(len[0] % 8, 0);
  std::remove(path.c_str());
}

TEST(Safetensors, RefusesMalformedFiles) {
  EXPECT_NE(errorOf({1, 2, 3}).find("too short"), std::string::npos);
  std::vector<uint8_t> huge = image("{}", 0);
  huge[0] = 0xff;
  huge[1] = 0xff;
  EXPECT_NE(errorOf(huge).find("exceeds the file"), std::string::npos);
  EXPECT_NE(errorOf(image("{\"a\":", 0)).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(
      errorOf(
          image(R"({"a":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}})", 1))
          .find("tensor 'a': unsupported dtype \"F8\""),
      std::string::npos);
  EXPECT_NE(
      errorOf(
          image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})",
                8))
          .find("outside the data section"),
      std::string::npos);
  EXPECT_NE(
      errorOf(
          image(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8))
          .find("cover 8 bytes but F32 3 needs 12"),
      std::string::npos);
  EXPECT_NE(
      errorOf(image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                    8))
          .find("overlap"),
      std::string::npos);
  EXPECT_NE(
      errorOf(
          image(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                4))
          .find("bad dimension"),
      std::string::npos);
  EXPECT_NE(errorOf(image(R"({"a":{"dtype":"F32"}})", 0))
                .find("expected an object with dtype, shape and data_offsets"),
            std::string::npos);
}

TEST(Safetensors, MissingFileIsAnIoError) {
  try {
    readSafetensors("/nonexistent/dir/w.safetensors");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::Io);
  }
}

} // namespace
