//===- FunctionDedup.cpp - functions that differ only in buffer offsets ---===//
#include "oflow/Codegen/FunctionDedup.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

using namespace mlir;

namespace oflow {

std::optional<SmallVector<int64_t>> parameterizeViewOffsets(FunctionOpInterface fn,
                                                            unsigned maxParams) {
  SmallVector<std::pair<memref::ViewOp, arith::ConstantIndexOp>> views;
  fn.walk([&](memref::ViewOp view) {
    if (auto c = view.getByteShift().getDefiningOp<arith::ConstantIndexOp>())
      views.push_back({view, c});
  });
  if (views.empty() || views.size() > maxParams)
    return std::nullopt;
  SmallVector<int64_t> offsets;
  IndexType index = IndexType::get(fn->getContext());
  for (auto [view, offset] : views) {
    unsigned position = fn.getNumArguments();
    if (failed(fn.insertArgument(position, index, {}, view.getLoc())))
      return std::nullopt;
    view.getByteShiftMutable().assign(fn.getArgument(position));
    offsets.push_back(offset.value());
  }
  llvm::SmallPtrSet<Operation *, 8> constants;
  for (auto [view, offset] : views)
    constants.insert(offset);
  for (Operation *c : constants)
    if (c->use_empty())
      c->erase(); // its text would tell the functions apart
  return offsets;
}

std::string functionBodyKey(FunctionOpInterface fn) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Local scope: without it each print numbers the whole module's values.
  // Every flag the command line could change is set: elided constants
  // would make different functions equal, locations equal ones different.
  OpPrintingFlags flags;
  flags.useLocalScope()
      .enableDebugInfo(false)
      .printNameLocAsPrefix(false)
      .printGenericOpForm(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .elideLargeResourceString(std::numeric_limits<int64_t>::max());
  fn->print(os, flags);
  std::string name = "@" + fn.getName().str() + "(";
  if (size_t at = text.find(name); at != std::string::npos)
    text.replace(at, name.size(), "@(");
  return text;
}

} // namespace oflow
