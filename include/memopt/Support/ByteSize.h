//===- ByteSize.h - byte counts in options and messages ---------*- C++ -*-===//
//
// Every byte-valued option (memopt-run's --budget and --workspace-limit,
// the passes' budget= and bytes=) is read by parseByteSize, and every byte
// count in a diagnostic is written by formatByteSize. LLVM Support only.
//
//===----------------------------------------------------------------------===//

#ifndef MEMOPT_SUPPORT_BYTESIZE_H
#define MEMOPT_SUPPORT_BYTESIZE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace memopt {

/// Bytes from "123", "1.5GiB", "512 MiB" or "64KB" (binary and decimal
/// units, B to TiB/TB; fractions round down); std::nullopt for anything
/// else, negative or above 9e18 bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// "1536 bytes (1.50 KiB)": a byte count for diagnostics.
std::string formatByteSize(int64_t bytes);

} // namespace memopt

#endif // MEMOPT_SUPPORT_BYTESIZE_H
