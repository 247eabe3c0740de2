//===- spyre-opt.cpp - the Spyre optimizer driver -------------------------===//
//
// mlir-opt with the Spyre dialect and passes, plus the upstream dialects and
// passes that Spyre pipelines use.
//
//===----------------------------------------------------------------------===//

#include "Spyre/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::spyre::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::spyre::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Spyre optimizer driver\n", registry));
}
