//===- CheckHw.cpp - hardware-level programs against the card -------------===//
//
// The simulator's validator is the definition of a valid program; this pass
// applies it in a pipeline instead of re-implementing it.
//
//===----------------------------------------------------------------------===//

#include "Arch/Arch.h"
#include "Spyre/Target/SpyreBinary.h"
#include "Spyre/Transforms/Passes.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYRECHECKHW
#include "Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {
struct SpyreCheckHwPass : mlir::spyre::impl::SpyreCheckHwBase<SpyreCheckHwPass> {
  using SpyreCheckHwBase::SpyreCheckHwBase;

  void runOnOperation() override {
    std::optional<::spyre::Arch> arch = loadArch(getOperation(), archPath);
    if (!arch)
      return signalPassFailure();
    getOperation().walk([&](HwProgramOp program) {
      std::vector<uint8_t> binary;
      if (failed(writeProgram(program, *arch, binary)))
        signalPassFailure();
    });
  }
};
} // namespace
