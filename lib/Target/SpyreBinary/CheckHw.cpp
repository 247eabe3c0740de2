//===- CheckHw.cpp - hardware-level programs against the card -------------===//
//
// The binary format's validator (lib/Isa, run by the simulator before every
// program) is the definition of a valid program; this pass applies it in a
// pipeline instead of re-implementing it. It writes the binary to validate
// it, which is why it lives with the writer and not with the transforms.
//
//===----------------------------------------------------------------------===//

#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreArch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "spyre-mlir/Target/SpyreBinary/Passes.h"
#include "spyre-mlir/Target/SpyreBinary/ToBinary.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYRECHECKHW
#include "spyre-mlir/Target/SpyreBinary/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {
struct SpyreCheckHwPass : mlir::spyre::impl::SpyreCheckHwBase<SpyreCheckHwPass> {
  using SpyreCheckHwBase::SpyreCheckHwBase;

  void runOnOperation() override {
    std::optional<::spyre::Arch> arch = getArch(getOperation());
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
