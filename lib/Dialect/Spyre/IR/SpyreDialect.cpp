//===- SpyreDialect.cpp - Spyre dialect registration ----------------------===//

#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::spyre;

#include "spyre-mlir/Dialect/Spyre/IR/SpyreDialect.cpp.inc"

/// Folded `spyre.dim` sizes become `arith.constant`s.
Operation *SpyreDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value);
      typed && arith::ConstantOp::isBuildableWith(typed, type))
    return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

void SpyreDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.cpp.inc"
      >();
}
