//===- Passes.h - Spyre passes ----------------------------------*- C++ -*-===//

#ifndef SPYRE_TRANSFORMS_PASSES_H
#define SPYRE_TRANSFORMS_PASSES_H

#include "Spyre/IR/SpyreOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>

namespace spyre {
struct Arch;
}

namespace mlir {
class RewritePatternSet;
namespace spyre {

/// The architecture description a pass works for: `path` if not empty, else
/// ::spyre::Arch::defaultPath(). Emits an error on `anchor` if it cannot be
/// read.
std::optional<::spyre::Arch> loadArch(Operation *anchor, StringRef path);

#define GEN_PASS_DECL
#include "Spyre/Transforms/Passes.h.inc"

/// Patterns that rewrite data-movement ops as `spyre.generic`.
void populateGeneralizePatterns(RewritePatternSet &patterns, bool copies);

/// The stages of the compile pipeline, in order.
enum class CompileStage { generalize, fuse, divideWork, tile, planMemory, lower };

struct CompileStageInfo {
  CompileStage stage;
  const char *name, *result, *passes;
};
/// The stage table: what each stage leaves in the IR and the passes it runs.
ArrayRef<CompileStageInfo> compileStages();

struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Architecture description file (TOML)"),
                           llvm::cl::init("")};
  Option<int64_t> cores{*this, "cores", llvm::cl::desc("Cores to use (0: all of the card's)"),
                        llvm::cl::init(0)};
  Option<CompileStage> stopAfter{
      *this, "stop-after", llvm::cl::desc("The last stage to run"),
      llvm::cl::init(CompileStage::lower),
      llvm::cl::values(clEnumValN(CompileStage::generalize, "generalize", ""),
                       clEnumValN(CompileStage::fuse, "fuse", ""),
                       clEnumValN(CompileStage::divideWork, "divide-work", ""),
                       clEnumValN(CompileStage::tile, "tile", ""),
                       clEnumValN(CompileStage::planMemory, "plan-memory", ""),
                       clEnumValN(CompileStage::lower, "lower", ""))};
};

/// Kernel-level IR to hardware-level programs, up to `options.stopAfter`.
void buildCompilePipeline(OpPassManager &pm, const CompileOptions &options);
/// Registers `spyre-compile`.
void registerSpyrePipelines();

#define GEN_PASS_REGISTRATION
#include "Spyre/Transforms/Passes.h.inc"

} // namespace spyre
} // namespace mlir

#endif // SPYRE_TRANSFORMS_PASSES_H
