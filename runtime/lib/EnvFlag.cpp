//===- EnvFlag.cpp - on/off switches read from the environment ------------===//

#include "memopt/runtime/EnvFlag.h"

#include "memopt/runtime/Error.h"

#include <cstdlib>
#include <string>

namespace memopt::runtime {

bool envFlag(const char *name, bool fallback) {
  const char *value = std::getenv(name);
  if (!value)
    return fallback;
  const std::string text(value);
  if (text == "1")
    return true;
  if (text == "0")
    return false;
  throw Error(ErrorCode::InvalidArgument,
              concat(name, " must be 0 or 1, got '", text, "'"));
}

} // namespace memopt::runtime
