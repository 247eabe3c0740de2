//===- Pipelines.cpp - the compile pipeline and its stages ----------------===//

#include "spyre-mlir/Pipelines/Pipelines.h"
#include "spyre-mlir/Target/SpyreBinary/Passes.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::spyre;

ArrayRef<CompileStageInfo> mlir::spyre::compileStages() {
  static const CompileStageInfo stages[] = {
      {"generalize", "data movement as spyre.generic",
       [](OpPassManager &pm, const CompileOptions &) { pm.addPass(createSpyreGeneralize()); }},
      {"fuse",
       "elementwise producers fused into their consumers; matmul epilogues and generics over "
       "the same rows grouped in spyre.fused",
       [](OpPassManager &pm, const CompileOptions &options) {
         // Canonicalization merges a generic's repeated inputs, CSE what its
         // body computes from them: before fusion, so that it plans with
         // the inputs that remain; after, for what inlining repeated.
         pm.addPass(createCanonicalizerPass());
         pm.addPass(createCSEPass());
         pm.addPass(createSpyreFuseElementwise());
         pm.addPass(createCanonicalizerPass());
         pm.addPass(createCSEPass());
         pm.addPass(createSpyreFuseEpilogue());
         if (options.fuseRows)
           pm.addPass(createSpyreFuseRows());
       }},
      {"divide-work",
       "reductions with too few outputs cut in parts; spyre.cores on every compute op",
       [](OpPassManager &pm, const CompileOptions &options) {
         pm.addPass(createSpyreSplitReductions({options.cores}));
         pm.addPass(createSpyreDivideWork({options.cores}));
       }},
      {"tile", "spyre.tile on every compute op",
       [](OpPassManager &pm, const CompileOptions &) { pm.addPass(createSpyreTile()); }},
      {"plan-memory", "spyre.lx on every compute op, device offsets of temporaries, checked",
       [](OpPassManager &pm, const CompileOptions &) {
         pm.addPass(createSpyrePlanMemory());
         pm.addPass(createSpyreCheckLx());
       }},
      {"lower", "spyre.hw.program per kernel, checked",
       [](OpPassManager &pm, const CompileOptions &) {
         pm.addPass(createSpyreLowerToHw());
         pm.addPass(createSpyreCheckHw());
       }},
  };
  return stages;
}

void mlir::spyre::buildCompilePipeline(OpPassManager &pm, const CompileOptions &options) {
  // The card description is looked up here, once; later passes read it
  // from the module. A module compiled in steps keeps what its first step
  // attached (unless `arch` names one).
  pm.addPass(createSpyreAttachArch({options.arch}));
  ArrayRef<CompileStageInfo> stages = compileStages();
  for (unsigned i = unsigned(options.startBefore.getValue());
       i <= unsigned(options.stopAfter.getValue()) && i < stages.size(); ++i)
    stages[i].addPasses(pm, options);
}

void mlir::spyre::registerSpyrePipelines() {
  // The description names the stages from the table; the registry keeps a
  // reference to it, so it lives as long as the process.
  static const std::string description = [] {
    std::string names;
    for (const CompileStageInfo &stage : compileStages())
      names += (names.empty() ? "" : ", ") + std::string(stage.name);
    return "Kernel-level Spyre IR to hardware-level programs; stop-after=<stage> ends at a "
           "stage (" +
           names + ") to see its IR, start-before=<stage> continues from the previous one";
  }();
  PassPipelineRegistration<CompileOptions>("spyre-compile", description, buildCompilePipeline);
}
