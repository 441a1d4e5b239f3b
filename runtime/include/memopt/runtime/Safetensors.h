//===- Safetensors.h - read and write .safetensors files --------*- C++ -*-===//
//
// The safetensors format (Hugging Face): an 8-byte little-endian header
// length, a JSON header mapping each tensor name to its dtype, shape and
// byte range, then the raw little-endian data. memopt saves and loads
// parameters and state in it, so weights move to and from PyTorch
// (`safetensors.torch.save_file` / `load_file`).
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_RUNTIME_SAFETENSORS_H
#define MEMOPT_RUNTIME_SAFETENSORS_H

#include "memopt/runtime/DType.h"
#include "memopt/runtime/Shape.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace memopt::runtime {

struct NamedTensor {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> data;
};

struct SafetensorsFile {
  /// In file order of their data.
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or nullptr.
  const NamedTensor *find(const std::string &name) const;
};

/// Reads and validates a safetensors file: header bounds, JSON syntax, known
/// dtypes, byte ranges inside the data section that match each tensor's size
/// and do not overlap. Throws Error(Io) for an unreadable file and
/// Error(InvalidArgument) naming the file and tensor for anything malformed.
SafetensorsFile readSafetensors(const std::string &path);

/// Same, from bytes in memory (`what` names them in messages).
SafetensorsFile parseSafetensors(const std::vector<uint8_t> &bytes,
                                 const std::string &what);

/// Writes `file` atomically: to a temporary file in the same directory,
/// renamed over `path` only once complete. Throws Error(Io).
void writeSafetensors(const std::string &path, const SafetensorsFile &file);

/// The safetensors dtype name of `dtype` (`F32`, `BF16`, `I64`, ...).
std::string safetensorsDTypeName(DType dtype);

} // namespace memopt::runtime

#endif // MEMOPT_RUNTIME_SAFETENSORS_H
