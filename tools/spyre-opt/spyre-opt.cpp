//===- spyre-opt.cpp - the Spyre optimizer driver -------------------------===//
//
// mlir-opt with the Spyre dialect and passes, plus the upstream dialects and
// passes that Spyre pipelines use. Unlike mlir-opt, it refuses input nested
// too deeply for the parser's recursion instead of overflowing the stack
// (spyre-mlir/Nesting.h): it reads the input itself, checks it, and hands the
// buffer to MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/InitAll.h"
#include "spyre-mlir/Nesting.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::spyre::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::spyre::registerAllDialects(registry);
  auto [inputFile, outputFile] =
      mlir::registerAndParseCLIOptions(argc, argv, "Spyre optimizer driver\n", registry);
  auto config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << message << "\n";
    return 1;
  }
  std::string tooDeep = mlir::spyre::checkNesting(input->getBuffer());
  if (!tooDeep.empty()) {
    llvm::errs() << input->getBufferIdentifier() << ": error: " << tooDeep << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFile, &message);
  if (!output) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
