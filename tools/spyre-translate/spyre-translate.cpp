//===- spyre-translate.cpp - Spyre IR to and from other formats -----------===//
//
// mlir-translate with the Spyre translations: `--spyre-hw-to-binary` writes a
// hardware-level program as a binary for spyre-run and the simulator.
//
//===----------------------------------------------------------------------===//

#include "Spyre/Target/SpyreBinary.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::spyre::registerToBinaryTranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "Spyre translation driver\n")) ? 1 : 0;
}
