//===- GenericLoops.h - a generic's loops, saved and put back ---*- C++ -*-===//
//
// Fusion passes rewrite a generic's loops on trial (spyre-fuse-rows gives a
// flat op its reader's loops, spyre-fuse-epilogue merges an epilogue's
// column loops) and put them back where the group does not form.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_TRANSFORMS_GENERICLOOPS_H
#define SPYRE_TRANSFORMS_GENERICLOOPS_H

#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"

namespace mlir::spyre {

/// A generic's loops: its domain, maps and iterators, and the maps of its
/// body's index expressions.
struct GenericLoops {
  DenseI64ArrayAttr domain;
  ArrayAttr maps, iterators;
  SmallVector<std::pair<IndexExprOp, AffineMapAttr>> indices;

  static GenericLoops of(GenericOp op) {
    GenericLoops loops{op.getStaticDomainAttr(), op.getIndexingMaps(), op.getIteratorTypes(),
                       {}};
    op.getBody().walk(
        [&](IndexExprOp index) { loops.indices.push_back({index, index.getMapAttr()}); });
    return loops;
  }
  void restore(GenericOp op) const {
    op.setStaticDomainAttr(domain);
    op.setIndexingMapsAttr(maps);
    op.setIteratorTypesAttr(iterators);
    for (auto [index, map] : indices)
      index.setMapAttr(map);
  }
};

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_GENERICLOOPS_H
