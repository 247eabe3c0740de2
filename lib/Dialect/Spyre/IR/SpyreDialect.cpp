//===- SpyreDialect.cpp - Spyre dialect registration ----------------------===//

#include "Spyre/IR/SpyreDialect.h"
#include "Spyre/IR/SpyreOps.h"

using namespace mlir;
using namespace mlir::spyre;

#include "Spyre/IR/SpyreDialect.cpp.inc"

void SpyreDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "Spyre/IR/SpyreOps.cpp.inc"
      >();
}
