//===- SbpRules.cpp - what an nd-SBP may be, stated once ------------------===//
#include "oflow/Support/SbpRules.h"

#include <cassert>

namespace oflow::sbp_rules {

Finding checkLayout(llvm::ArrayRef<int64_t> meshShape, llvm::ArrayRef<int64_t> shape,
                    llvm::ArrayRef<Entry> entries) {
  Finding found;
  if (entries.size() != meshShape.size()) {
    found.problem = Problem::EntryCount;
    return found;
  }
  llvm::SmallVector<int64_t> factor(shape.size(), 1);
  bool sum = false, max = false;
  for (auto [meshAxis, entry] : llvm::enumerate(entries)) {
    found.meshAxis = static_cast<int64_t>(meshAxis);
    if (entry.kind == EntryKind::PartialSum || entry.kind == EntryKind::PartialMax) {
      (entry.kind == EntryKind::PartialSum ? sum : max) = true;
      if (sum && max) {
        found.problem = Problem::MixedPartials;
        return found;
      }
      continue;
    }
    if (entry.kind != EntryKind::Split)
      continue;
    found.tensorAxis = entry.axis;
    if (entry.axis < 0 || entry.axis >= static_cast<int64_t>(shape.size())) {
      found.problem = Problem::SplitAxisOutOfRange;
      return found;
    }
    factor[entry.axis] *= meshShape[meshAxis];
    if (shape[entry.axis] % factor[entry.axis] != 0) {
      found.problem = Problem::NotDivisible;
      found.factor = factor[entry.axis];
      return found;
    }
  }
  return Finding{};
}

int64_t splitFactor(llvm::ArrayRef<int64_t> meshShape, llvm::ArrayRef<Entry> entries,
                    int64_t axis) {
  int64_t factor = 1;
  for (size_t a = 0; a < entries.size() && a < meshShape.size(); ++a)
    if (entries[a].kind == EntryKind::Split && entries[a].axis == axis)
      factor *= meshShape[a];
  return factor;
}

llvm::SmallVector<int64_t> localShape(llvm::ArrayRef<int64_t> meshShape,
                                      llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<Entry> entries) {
  assert(!checkLayout(meshShape, shape, entries) && "localShape of an invalid layout");
  llvm::SmallVector<int64_t> local(shape.begin(), shape.end());
  for (int64_t i = 0, e = shape.size(); i < e; ++i)
    local[i] /= splitFactor(meshShape, entries, i);
  return local;
}

} // namespace oflow::sbp_rules
