//===- AppendedArguments.cpp - arguments appended to a function at once ---===//
//
// See Transforms.h: the block gets each argument as it is appended, the
// function type and the argument attributes all of them at once.
//
//===----------------------------------------------------------------------===//

#include "memopt/Dialect/MemOpt/Transforms/Transforms.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace memopt;

BlockArgument AppendedArguments::append(Type type, DictionaryAttr attrs,
                                        Location loc) {
  pending.push_back(attrs);
  return func.getBody().front().addArgument(type, loc);
}

void AppendedArguments::commit() {
  if (pending.empty())
    return;
  SmallVector<DictionaryAttr> attrs;
  func.getAllArgAttrs(attrs);
  llvm::append_range(attrs, pending);
  pending.clear();
  Block &body = func.getBody().front();
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 func.getResultTypes()));
  func.setAllArgAttrs(attrs);
}
