//===- Pipelines.cpp - the compile pipeline and its stages ----------------===//

#include "Spyre/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::spyre;

ArrayRef<CompileStageInfo> mlir::spyre::compileStages() {
  static const CompileStageInfo stages[] = {
      {CompileStage::generalize, "generalize", "data movement as spyre.generic",
       "spyre-generalize"},
      {CompileStage::fuse, "fuse",
       "elementwise producers fused into their consumers; generics over the same rows grouped "
       "in spyre.fused",
       "spyre-fuse-elementwise, canonicalize, spyre-fuse-rows"},
      {CompileStage::divideWork, "divide-work", "spyre.cores on every compute op",
       "spyre-divide-work"},
      {CompileStage::tile, "tile", "spyre.tile on every compute op", "spyre-tile"},
      {CompileStage::planMemory, "plan-memory",
       "spyre.lx on every compute op, device offsets of temporaries, checked",
       "spyre-plan-memory, spyre-check-lx"},
      {CompileStage::lower, "lower", "spyre.hw.program per kernel, checked",
       "spyre-lower-to-hw, spyre-check-hw"},
  };
  return stages;
}

void mlir::spyre::buildCompilePipeline(OpPassManager &pm, const CompileOptions &options) {
  std::string arch = options.arch;
  auto reached = [&](CompileStage stage) { return options.stopAfter >= stage; };
  pm.addPass(createSpyreGeneralize());
  if (!reached(CompileStage::fuse))
    return;
  pm.addPass(createSpyreFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createSpyreFuseRows({arch, false}));
  if (!reached(CompileStage::divideWork))
    return;
  pm.addPass(createSpyreDivideWork({arch, options.cores}));
  if (!reached(CompileStage::tile))
    return;
  pm.addPass(createSpyreTile({arch}));
  if (!reached(CompileStage::planMemory))
    return;
  pm.addPass(createSpyrePlanMemory({arch}));
  pm.addPass(createSpyreCheckLx({arch}));
  if (!reached(CompileStage::lower))
    return;
  pm.addPass(createSpyreLowerToHw({arch}));
  pm.addPass(createSpyreCheckHw({arch}));
}

void mlir::spyre::registerSpyrePipelines() {
  PassPipelineRegistration<CompileOptions>(
      "spyre-compile",
      "Kernel-level Spyre IR to hardware-level programs; stop-after=<stage> ends at a stage "
      "(generalize, fuse, divide-work, tile, plan-memory, lower) to see its IR",
      buildCompilePipeline);
}
