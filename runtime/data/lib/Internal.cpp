//===- Internal.cpp - helpers shared by the data readers ------------------===//

#include "Internal.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <system_error>

using namespace memopt::runtime;
namespace fs = std::filesystem;

namespace memopt::data::detail {

void fail(ErrorCode code, const std::string &reader, const std::string &what,
          const std::string &message) {
  throw Error(code, concat(reader, ": ", what, ": ", message));
}

void requireDirectory(const std::string &reader, const std::string &dir) {
  std::error_code ec;
  fs::file_status status = fs::status(dir, ec);
  if (ec || !fs::exists(status))
    fail(ErrorCode::Io, reader, dir, "no such directory");
  if (!fs::is_directory(status))
    fail(ErrorCode::Io, reader, dir, "not a directory");
}

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty() || dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

std::string existingFile(const std::string &dir, const std::string &name) {
  std::string path = joinPath(dir, name);
  std::error_code ec;
  return fs::is_regular_file(path, ec) ? path : std::string();
}

InputFile::InputFile(std::string readerName, std::string path)
    : reader(std::move(readerName)), filePath(std::move(path)) {
  std::error_code ec;
  uintmax_t bytes = fs::file_size(filePath, ec);
  if (ec)
    fail(ErrorCode::Io, reader, filePath,
         concat("cannot determine the size: ", ec.message()));
  fileSize = bytes;
  stream.open(filePath, std::ios::binary);
  if (!stream)
    fail(ErrorCode::Io, reader, filePath, "cannot open for reading");
}

void InputFile::read(void *dst, uint64_t bytes) {
  if (bytes == 0)
    return;
  if (bytes >
      static_cast<uint64_t>(std::numeric_limits<std::streamsize>::max()))
    malformed(concat("read of ", bytes, " bytes is too large"));
  stream.read(static_cast<char *>(dst), static_cast<std::streamsize>(bytes));
  if (!stream || static_cast<uint64_t>(stream.gcount()) != bytes)
    fail(ErrorCode::Io, reader, filePath,
         concat("read failed (wanted ", bytes, " bytes, got ", stream.gcount(),
                ")"));
}

void InputFile::malformed(const std::string &message) const {
  fail(ErrorCode::InvalidArgument, reader, filePath, message);
}

std::array<float, 256> normalisationTable(float mean, float stddev) {
  std::array<float, 256> table;
  for (int b = 0; b < 256; ++b) {
    float x = static_cast<float>(b) / 255.0f;
    table[b] = (x - mean) / stddev;
  }
  return table;
}

void checkNormalisation(const std::string &reader, float mean, float stddev) {
  if (!std::isfinite(mean))
    throw Error(ErrorCode::InvalidArgument,
                concat(reader, ": mean ", mean, " is not finite"));
  if (!std::isfinite(stddev) || !(stddev > 0))
    throw Error(ErrorCode::InvalidArgument,
                concat(reader, ": standard deviation ", stddev,
                       " is not finite and positive"));
}

double normalAt(uint64_t key, uint64_t counter) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  uint64_t a = mix(key ^ (2 * counter));
  uint64_t b = mix(key ^ (2 * counter + 1));
  // u1 in (0, 1] so the logarithm is finite; u2 in [0, 1).
  double u1 = static_cast<double>((a >> 11) + 1) * 0x1p-53;
  double u2 = static_cast<double>(b >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

} // namespace memopt::data::detail
