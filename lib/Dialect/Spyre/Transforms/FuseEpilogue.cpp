//===- FuseEpilogue.cpp - elementwise consumers on a matmul's output tile -===//
//
// A spyre.matmul writing a temporary of its kernel that one elementwise
// spyre.generic reads (bias, activation, residual, scale, cast) is grouped
// with that generic in a spyre.fused: MatmulPlan then runs the generic's
// body on each output tile in LX after its last K step, and the product
// never reaches device memory.
//
//===----------------------------------------------------------------------===//

#include "OpPlan.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREFUSEEPILOGUE
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {

struct FuseEpilogue : mlir::spyre::impl::SpyreFuseEpilogueBase<FuseEpilogue> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<::spyre::Arch> arch = getArch(getOperation());
    if (!arch)
      return signalPassFailure();
    getOperation().walk([&](KernelOp kernel) {
      for (auto matmul : llvm::to_vector(kernel.getBody().front().getOps<MatmulOp>()))
        fuse(matmul, *arch);
    });
  }

  /// The generic that is the only reader of `matmul`'s output, a temporary
  /// of the kernel, when nothing but allocations lies between them; else
  /// the reason in `why`.
  static GenericOp epilogueOf(MatmulOp matmul, std::string &why) {
    auto alloc = matmul.getInit().getDefiningOp<AllocOp>();
    if (!alloc || alloc->getBlock() != matmul->getBlock()) {
      why = "its output is not a temporary of the kernel";
      return {};
    }
    GenericOp reader;
    for (Operation *user : alloc->getUsers()) {
      if (user == matmul.getOperation() || user == reader.getOperation() ||
          isa<DeallocOp>(user))
        continue;
      if (reader || !isa<GenericOp>(user)) {
        why = "its output is read by more than one op";
        return {};
      }
      reader = cast<GenericOp>(user);
    }
    if (!reader) {
      why = "its output is not read";
      return {};
    }
    if (!matmul->isBeforeInBlock(reader)) {
      why = "its output is read before it is written";
      return {};
    }
    for (Operation *op = matmul->getNextNode(); op != reader; op = op->getNextNode())
      if (!isa<AllocOp, DeallocOp>(op)) {
        why = "'" + op->getName().getStringRef().str() + "' runs between it and its reader";
        return {};
      }
    return reader;
  }

  void fuse(MatmulOp matmul, const ::spyre::Arch &arch) {
    std::string why;
    GenericOp epilogue = epilogueOf(matmul, why);
    if (!epilogue) {
      if (reportMissed)
        matmul.emitRemark() << "no epilogue fused: " << why;
      return;
    }
    auto alloc = matmul.getInit().getDefiningOp<AllocOp>();
    OpBuilder b(matmul);
    auto fused = FusedOp::create(b, matmul.getLoc());
    Block *body = b.createBlock(&fused.getBody());
    for (Operation *op : {alloc.getOperation(), matmul.getOperation(), epilogue.getOperation()})
      op->moveBefore(body, body->end());
    // Keep the group only if the plan takes the epilogue and a tile fits LX.
    why = whyFusedCannotRun(fused, arch, "no tile with the epilogue's slots fits the usable LX");
    if (!why.empty()) {
      dissolve(fused);
      if (reportMissed)
        matmul.emitRemark() << "epilogue not fused: " << why;
      return;
    }
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<DeallocOp>(user))
        user->erase();
  }
};

} // namespace
