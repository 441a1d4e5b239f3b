//===- Internal.h - helpers shared by the data readers ----------*- C++ -*-===//
//
// File access with every size checked and errors in the `<reader>: <path>:`
// form, the pixel normalisation tables, and the portable random functions
// behind shuffling and the synthetic data.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_DATA_LIB_INTERNAL_H
#define MEMOPT_DATA_LIB_INTERNAL_H

#include "memopt/runtime/Error.h"

#include <array>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace memopt::data::detail {

/// Throws Error(code, "<reader>: <what>: <message>").
[[noreturn]] void fail(runtime::ErrorCode code, const std::string &reader,
                       const std::string &what, const std::string &message);

/// Throws Error(Io) unless `dir` names an existing directory.
void requireDirectory(const std::string &reader, const std::string &dir);

/// `dir`/`name` when that is a regular file (or a link to one), else "".
std::string existingFile(const std::string &dir, const std::string &name);

/// Joins path components with '/'.
std::string joinPath(const std::string &dir, const std::string &name);

/// A binary file read sequentially, its size known up front so headers can
/// be checked against it before any data is read or allocated.
class InputFile {
public:
  /// Throws Error(Io) when the file cannot be opened or sized.
  InputFile(std::string reader, std::string path);

  const std::string &path() const { return filePath; }
  uint64_t size() const { return fileSize; }

  /// Reads the next `bytes` bytes; throws Error(Io) on a short read (the
  /// file changed under us, or a device error).
  void read(void *dst, uint64_t bytes);

  /// Throws Error(InvalidArgument, "<reader>: <path>: <message>").
  [[noreturn]] void malformed(const std::string &message) const;

private:
  std::string reader, filePath;
  std::ifstream stream;
  uint64_t fileSize = 0;
};

/// The f32 value of each byte: (b / 255 - mean) / stddev, computed as
/// torchvision's ToTensor and Normalize do (f32 throughout).
std::array<float, 256> normalisationTable(float mean, float stddev);

/// Throws Error(InvalidArgument) unless mean is finite and stddev finite
/// and positive.
void checkNormalisation(const std::string &reader, float mean, float stddev);

/// SplitMix64's output function (the same `mix` as Dropout.h).
constexpr uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A standard normal deviate, a pure function of (key, counter): Box-Muller
/// on two SplitMix64 outputs, keeping the cosine branch only so every
/// counter is independent of its neighbours (random access).
double normalAt(uint64_t key, uint64_t counter);

} // namespace memopt::data::detail

#endif // MEMOPT_DATA_LIB_INTERNAL_H
