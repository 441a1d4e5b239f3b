//===- DataTestUtil.h - temporary directories and file images ---*- C++ -*-===//

#ifndef MEMOPT_UNITTESTS_DATA_DATATESTUTIL_H
#define MEMOPT_UNITTESTS_DATA_DATATESTUTIL_H

#include "memopt/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

namespace memopt::data::test {

/// A fresh directory per test (ctest may run tests in parallel), removed
/// with everything in it at the end of the test.
class TempDir {
public:
  TempDir() {
    const ::testing::TestInfo *info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    path = ::testing::TempDir() + "memopt-data-" + info->test_suite_name() +
           "." + info->name() + "-" + std::to_string(::getpid());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  /// `path`/`name`, creating the directories in between.
  std::string file(const std::string &name) const {
    std::filesystem::path p = std::filesystem::path(path) / name;
    std::filesystem::create_directories(p.parent_path());
    return p.string();
  }

  std::string path;
};

inline void writeBytes(const std::string &path,
                       const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

/// Runs `f`, expecting an Error with `code`; returns its message ("" and a
/// failure when nothing is thrown).
inline std::string errorOf(const std::function<void()> &f,
                           runtime::ErrorCode code) {
  try {
    f();
  } catch (const runtime::Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

/// The f32 value torchvision's ToTensor + Normalize give byte `b`.
inline float normalised(uint8_t b, float mean, float stddev) {
  float x = static_cast<float>(b) / 255.0f;
  return (x - mean) / stddev;
}

} // namespace memopt::data::test

#endif // MEMOPT_UNITTESTS_DATA_DATATESTUTIL_H
