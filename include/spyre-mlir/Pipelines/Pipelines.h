//===- Pipelines.h - the compile pipeline and its stages --------*- C++ -*-===//
//
// `spyre-compile` is a sequence of stages, each a few passes whose result is
// worth looking at on its own. The stage table (compileStages()) is the one
// list of them: the pipeline, its `start-before`/`stop-after` values, its help
// text and Python's spyre_mlir.compiler.STAGES all come from it.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_PIPELINES_PIPELINES_H
#define SPYRE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace spyre {

/// A stage, as its position in the stage table. No enumerators: the table
/// names the stages.
enum class CompileStage : unsigned {};

struct CompileOptions;

struct CompileStageInfo {
  /// The value of `start-before` / `stop-after`.
  const char *name;
  /// What the IR has after the stage.
  const char *result;
  /// Adds the stage's passes.
  void (*addPasses)(OpPassManager &pm, const CompileOptions &options);
};
/// The stage table, in pipeline order.
ArrayRef<CompileStageInfo> compileStages();

/// Makes the stage table the values of a stage option (like llvm::cl::values).
struct CompileStageValues {
  template <typename Opt>
  void apply(Opt &option) const {
    for (auto [index, stage] : llvm::enumerate(compileStages()))
      option.getParser().addLiteralOption(stage.name, CompileStage(index), stage.result);
  }
};

struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Architecture description file (TOML)"),
                           llvm::cl::init("")};
  Option<int64_t> cores{*this, "cores", llvm::cl::desc("Cores to use (0: all of the card's)"),
                        llvm::cl::init(0)};
  // Off reproduces compilers without row fusion (each op of a softmax or a
  // norm keeps its temporaries in device memory): bench/bench_fidelity.py
  // builds the programs of device measurements made that way.
  Option<bool> fuseRows{*this, "fuse-rows",
                        llvm::cl::desc("Group generics over the same rows (spyre-fuse-rows)"),
                        llvm::cl::init(true)};
  Option<CompileStage> stopAfter{
      *this, "stop-after", llvm::cl::desc("The last stage to run"),
      llvm::cl::init(CompileStage(compileStages().size() - 1)), CompileStageValues()};
  Option<CompileStage> startBefore{
      *this, "start-before",
      llvm::cl::desc("The first stage to run (the IR is the previous stage's result)"),
      llvm::cl::init(CompileStage(0)), CompileStageValues()};
};

/// Kernel-level IR to hardware-level programs, the stages from
/// `options.startBefore` to `options.stopAfter`.
void buildCompilePipeline(OpPassManager &pm, const CompileOptions &options);
/// Registers `spyre-compile`.
void registerSpyrePipelines();

} // namespace spyre
} // namespace mlir

#endif // SPYRE_PIPELINES_PIPELINES_H
