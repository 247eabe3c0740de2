//===- AttachArch.cpp - the card description, looked up once --------------===//

#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREATTACHARCH
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {
struct AttachArch : mlir::spyre::impl::SpyreAttachArchBase<AttachArch> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A description attached earlier (a module compiled in steps) stays,
    // unless one is named explicitly.
    if (archPath.empty() && module->hasAttr(kArchAttr))
      return;
    std::optional<::spyre::Arch> arch = loadArch(module, archPath);
    if (!arch)
      return signalPassFailure();
    module->setAttr(kArchAttr, getArchAttr(module.getContext(), *arch));
  }
};
} // namespace
