//===- InitAll.cpp - everything a Spyre tool registers --------------------===//

#include "spyre-mlir/InitAll.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "spyre-mlir/Pipelines/Pipelines.h"
#include "spyre-mlir/Target/SpyreBinary/Passes.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::spyre::registerAllDialects(DialectRegistry &registry) {
  registry.insert<SpyreDialect, affine::AffineDialect, arith::ArithDialect,
                  math::MathDialect>();
}

void mlir::spyre::registerAllPasses() {
  // Registration is global to the process; a second call must not re-add.
  static bool registered = [] {
    registerSpyrePasses();
    registerSpyreTargetPasses();
    registerSpyrePipelines();
    registerCanonicalizerPass();
    registerCSEPass();
    registerSymbolDCEPass();
    registerInlinerPass();
    return true;
  }();
  (void)registered;
}
