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
#include "llvm/Support/Compiler.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace {

/// What a character is to the scan; most are nothing, and one table load
/// says so (a chain of compares per character was 4% of parsing and
/// printing a 30 MB graph).
enum class Kind : uint8_t { None, Quote, Slash, Open, Close, AngleClose };

struct KindTable {
  Kind kinds[256] = {};
  constexpr KindTable() {
    kinds[static_cast<unsigned char>('"')] = Kind::Quote;
    kinds[static_cast<unsigned char>('/')] = Kind::Slash;
    for (char c : {'(', '[', '{', '<'})
      kinds[static_cast<unsigned char>(c)] = Kind::Open;
    for (char c : {')', ']', '}'})
      kinds[static_cast<unsigned char>(c)] = Kind::Close;
    kinds[static_cast<unsigned char>('>')] = Kind::AngleClose;
  }
};

constexpr KindTable kKinds;

} // namespace

LogicalResult memopt::checkBracketNesting(SourceMgr &sources,
                                          unsigned bufferId) {
  StringRef text = sources.getMemoryBuffer(bufferId)->getBuffer();
  int depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    Kind kind = kKinds.kinds[static_cast<unsigned char>(text[i])];
    if (LLVM_LIKELY(kind == Kind::None))
      continue;
    switch (kind) {
    case Kind::Quote:
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case Kind::Slash:
      if (i + 1 < e && text[i + 1] == '/')
        while (i < e && text[i] != '\n')
          ++i;
      break;
    case Kind::Open:
      if (++depth > kMaxBracketNesting) {
        sources.PrintMessage(
            SMLoc::getFromPointer(text.data() + i), SourceMgr::DK_Error,
            Twine("brackets nest more than ") + Twine(kMaxBracketNesting) +
                " levels deep here; memopt refuses such input rather than "
                "parse it");
        return failure();
      }
      break;
    case Kind::AngleClose:
      // `->` is an arrow, not a closing bracket.
      if (i > 0 && text[i - 1] == '-')
        break;
      [[fallthrough]];
    case Kind::Close:
      if (depth > 0)
        --depth;
      break;
    case Kind::None:
      break;
    }
  }
  return success();
}
