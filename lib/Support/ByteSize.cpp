//===- ByteSize.cpp - byte counts in options and messages -----------------===//
//
// See ByteSize.h.
//
//===----------------------------------------------------------------------===//

#include "memopt/Support/ByteSize.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <utility>

using namespace llvm;

/// "123", "1.5GiB", "512 MiB", "64KB": bytes (binary and decimal units).
std::optional<int64_t> memopt::parseByteSize(StringRef text) {
  text = text.trim();
  size_t digits = 0;
  while (digits < text.size() &&
         (llvm::isDigit(text[digits]) || text[digits] == '.'))
    ++digits;
  StringRef number = text.take_front(digits);
  StringRef unit = text.drop_front(digits).trim();
  double value = 0;
  if (number.empty() || number.getAsDouble(value) || value < 0)
    return std::nullopt;
  static const std::pair<StringRef, double> units[] = {{"", 1.0},
                                                       {"B", 1.0},
                                                       {"KiB", 1024.0},
                                                       {"MiB", 1048576.0},
                                                       {"GiB", 1073741824.0},
                                                       {"TiB", 1099511627776.0},
                                                       {"KB", 1e3},
                                                       {"MB", 1e6},
                                                       {"GB", 1e9},
                                                       {"TB", 1e12}};
  for (auto [name, scale] : units)
    if (unit == name) {
      double bytes = std::floor(value * scale);
      if (bytes > 9.0e18)
        return std::nullopt;
      return static_cast<int64_t>(bytes);
    }
  return std::nullopt;
}

std::string memopt::formatByteSize(int64_t bytes) {
  if (bytes < 1024)
    return llvm::formatv("{0} bytes", bytes).str();
  double value = static_cast<double>(bytes) / 1024.0;
  const char *unit = "KiB";
  for (const char *next : {"MiB", "GiB", "TiB", "PiB", "EiB"}) {
    if (value < 1024.0)
      break;
    value /= 1024.0;
    unit = next;
  }
  return llvm::formatv("{0} bytes ({1:F2} {2})", bytes, value, unit).str();
}
