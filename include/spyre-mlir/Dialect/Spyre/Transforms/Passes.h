//===- Passes.h - Spyre passes ----------------------------------*- C++ -*-===//

#ifndef SPYRE_TRANSFORMS_PASSES_H
#define SPYRE_TRANSFORMS_PASSES_H

#include "spyre-mlir/Dialect/Spyre/IR/SpyreArch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace spyre {

#define GEN_PASS_DECL
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"

/// Patterns that rewrite data-movement ops as `spyre.generic`.
void populateGeneralizePatterns(RewritePatternSet &patterns, bool copies);

#define GEN_PASS_REGISTRATION
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"

} // namespace spyre
} // namespace mlir

#endif // SPYRE_TRANSFORMS_PASSES_H
