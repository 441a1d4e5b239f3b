//===- InputLimits.cpp - input the MLIR parser must not see --------------===//
//
// See InputLimits.h. The scan is a lexer's view of MLIR's brackets only:
// string literals (with escapes) and line comments are skipped, `->` is an
// arrow and not a closing angle bracket, and a stray closing bracket never
// makes the depth negative. It may count a few brackets the parser would
// not nest (that only matters 256 levels deep); it never misses a nesting
// the parser recurses on.
//
//===----------------------------------------------------------------------===//

#include "memopt/Support/InputLimits.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

LogicalResult memopt::checkBracketNesting(SourceMgr &sources,
                                          unsigned bufferId) {
  StringRef text = sources.getMemoryBuffer(bufferId)->getBuffer();
  int depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i < e && text[i] != '\n')
        ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxBracketNesting) {
        sources.PrintMessage(
            SMLoc::getFromPointer(text.data() + i), SourceMgr::DK_Error,
            Twine("brackets nest more than ") + Twine(kMaxBracketNesting) +
                " levels deep here; memopt refuses such input rather than "
                "parse it");
        return failure();
      }
    } else if ((c == ')' || c == ']' || c == '}' ||
                (c == '>' && (i == 0 || text[i - 1] != '-'))) &&
               depth > 0) {
      --depth;
    }
  }
  return success();
}
