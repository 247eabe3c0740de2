//===- AnnotateCost.cpp - the cost model's estimates, in the IR -----------===//

#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Analysis/CostModel.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREANNOTATECOST
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {
struct SpyreAnnotateCostPass
    : mlir::spyre::impl::SpyreAnnotateCostBase<SpyreAnnotateCostPass> {
  using SpyreAnnotateCostBase::SpyreAnnotateCostBase;

  void runOnOperation() override {
    std::optional<::spyre::Arch> arch = getArch(getOperation());
    if (!arch)
      return signalPassFailure();
    CostModel model(*arch);
    Builder b(&getContext());
    auto annotate = [&](Operation *op, const OpCost &cost) {
      op->setAttr("spyre.cost",
                  b.getDictionaryAttr({
                      // Counts are integers; only times are fractional.
                      b.getNamedAttr("flops", b.getI64IntegerAttr(std::llround(cost.flops))),
                      b.getNamedAttr("vector_ops",
                                     b.getI64IntegerAttr(std::llround(cost.vectorOps))),
                      b.getNamedAttr("device_bytes",
                                     b.getI64IntegerAttr(std::llround(cost.deviceBytes))),
                      b.getNamedAttr("compute_cycles", b.getF64FloatAttr(cost.computeCycles)),
                      b.getNamedAttr("memory_cycles", b.getF64FloatAttr(cost.memoryCycles)),
                      b.getNamedAttr("bound_cycles", b.getF64FloatAttr(cost.boundCycles())),
                      b.getNamedAttr("floor_cycles", b.getF64FloatAttr(cost.floorCycles())),
                      b.getNamedAttr("written_bytes",
                                     b.getI64IntegerAttr(std::llround(cost.writtenBytes))),
                  }));
    };
    getOperation().walk([&](KernelOp kernel) {
      for (Operation &op : kernel.getBody().front().without_terminator()) {
        if (isa<AllocOp, DeallocOp, DimOp, ConstantOp>(op))
          continue;
        std::string why;
        std::optional<OpCost> cost = model.estimate(&op, why);
        if (!cost) {
          if (reportUnknown)
            op.emitRemark() << "no cost estimate: " << why;
          continue;
        }
        annotate(&op, *cost);
      }
      std::string why;
      if (std::optional<OpCost> cost = model.estimateKernel(kernel, why))
        annotate(kernel, *cost);
      else if (reportUnknown)
        kernel.emitRemark() << "no cost estimate for the kernel: " << why;
    });
  }
};
} // namespace
