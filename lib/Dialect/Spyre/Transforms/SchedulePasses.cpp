//===- SchedulePasses.cpp - work division, tiling, memory planning --------===//
//
// The passes that build the tiled level: each reads the op through its
// OpPlan and records one decision as an attribute (docs/lowering.md).
//
//===----------------------------------------------------------------------===//

#include "OpPlan.h"
#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h"

namespace mlir::spyre {
#define GEN_PASS_DEF_SPYREDIVIDEWORK
#define GEN_PASS_DEF_SPYRETILE
#define GEN_PASS_DEF_SPYREPLANMEMORY
#define GEN_PASS_DEF_SPYRECHECKLX
#include "spyre-mlir/Dialect/Spyre/Transforms/Passes.h.inc"
} // namespace mlir::spyre

using namespace mlir;
using namespace mlir::spyre;

namespace {

struct DivideWork : mlir::spyre::impl::SpyreDivideWorkBase<DivideWork> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::spyre::Arch> arch = getArch(module);
    if (!arch)
      return signalPassFailure();
    FailureOr<int64_t> available = coresToUse(module, *arch, cores);
    if (failed(available))
      return signalPassFailure();
    Builder b(module.getContext());
    if (failed(forEachPlan(module, *arch, [&](OpPlan &plan) {
          Operation *op = plan.getOperation();
          if (!op->hasAttr(kCoresAttr))
            op->setAttr(kCoresAttr, b.getI64IntegerAttr(
                                        std::max<int64_t>(1, std::min(*available,
                                                                      plan.parallelUnits()))));
          return success();
        })))
      signalPassFailure();
  }
};

struct Tile : mlir::spyre::impl::SpyreTileBase<Tile> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::spyre::Arch> arch = getArch(module);
    if (!arch)
      return signalPassFailure();
    int64_t lxBytes = arch->lxUsableBytes();
    Builder b(module.getContext());
    if (failed(forEachPlan(module, *arch, [&](OpPlan &plan) -> LogicalResult {
          Operation *op = plan.getOperation();
          FailureOr<Schedule> schedule = readSchedule(plan, kScheduleCores);
          if (failed(schedule))
            return failure();
          if (op->hasAttr(kTileAttr)) {
            // A tile already given is checked, not replaced.
            FailureOr<Schedule> given = readSchedule(plan, kScheduleTile);
            if (failed(given))
              return failure();
            int64_t total;
            assignLx(plan.slots(given->tile), arch->stickBytes, total);
            if (total > lxBytes)
              return op->emitError() << "spyre.tile needs " << total
                                     << " bytes of LX, more than the usable " << lxBytes;
            return success();
          }
          SmallVector<int64_t> tile = plan.chooseTile(schedule->cores, lxBytes);
          if (tile.empty())
            return op->emitError() << "no tile of this op fits in the usable LX of " << lxBytes
                                   << " bytes";
          op->setAttr(kTileAttr, b.getDenseI64ArrayAttr(tile));
          if (candidates > 0) {
            SmallVector<Attribute> listed;
            for (ArrayRef<int64_t> candidate :
                 plan.tileCandidates(schedule->cores, lxBytes, candidates))
              listed.push_back(b.getDenseI64ArrayAttr(candidate));
            op->setAttr(kTileCandidatesAttr, b.getArrayAttr(listed));
          }
          return success();
        })))
      signalPassFailure();
  }
};

/// Device-memory slots of a kernel's temporaries: live from their first use
/// to their last, in op positions (allocs are often hoisted to the top).
SmallVector<LxSlot> temporaries(KernelOp kernel, SmallVectorImpl<AllocOp> &allocs) {
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(kernel.getBody().front()))
    position[&op] = int64_t(i);
  SmallVector<LxSlot> slots;
  for (auto alloc : kernel.getBody().front().getOps<AllocOp>()) {
    auto type = cast<BufferType>(alloc.getType());
    int64_t first = INT64_MAX, last = position[alloc];
    for (Operation *user : alloc->getUsers()) {
      // A use inside a spyre.fused group counts at the group's position.
      Operation *top = kernel.getBody().front().findAncestorOpInBlock(*user);
      first = std::min(first, position.lookup(top));
      last = std::max(last, position.lookup(top));
    }
    slots.push_back({"temporary", type.getNumElements() *
                                      deviceDTypeBytes(deviceDType(type.getElementType())),
                     1, std::min(first, last), last + 1});
    allocs.push_back(alloc);
  }
  return slots;
}

struct PlanMemory : mlir::spyre::impl::SpyrePlanMemoryBase<PlanMemory> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::spyre::Arch> arch = getArch(module);
    if (!arch)
      return signalPassFailure();
    Builder b(module.getContext());
    if (failed(forEachPlan(module, *arch, [&](OpPlan &plan) -> LogicalResult {
          FailureOr<Schedule> schedule = readSchedule(plan, kScheduleTile);
          if (failed(schedule))
            return failure();
          int64_t total;
          SmallVector<int64_t> offsets =
              assignLx(plan.slots(schedule->tile), arch->stickBytes, total);
          plan.getOperation()->setAttr(kLxAttr, b.getDenseI64ArrayAttr(offsets));
          return success();
        })))
      return signalPassFailure();
    WalkResult result = module.walk([&](KernelOp kernel) {
      SmallVector<AllocOp> allocs;
      for (auto alloc : kernel.getBody().front().getOps<AllocOp>())
        if (!cast<BufferType>(alloc.getType()).hasStaticShape()) {
          alloc.emitError() << "cannot place a temporary of dynamic shape in device memory";
          return WalkResult::interrupt();
        }
      SmallVector<LxSlot> slots = temporaries(kernel, allocs);
      int64_t total;
      SmallVector<int64_t> offsets = assignLx(slots, arch->stickBytes, total);
      for (auto [alloc, offset] : llvm::zip(allocs, offsets))
        alloc->setAttr(kDeviceOffsetAttr, b.getI64IntegerAttr(offset));
      kernel->setAttr(kScratchBytesAttr, b.getI64IntegerAttr(total));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

struct CheckLx : mlir::spyre::impl::SpyreCheckLxBase<CheckLx> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<::spyre::Arch> arch = getArch(module);
    if (!arch)
      return signalPassFailure();
    if (failed(forEachPlan(module, *arch, [&](OpPlan &plan) -> LogicalResult {
          if (!plan.getOperation()->hasAttr(kLxAttr))
            return success(); // not planned yet: nothing to check
          return readSchedule(plan, kScheduleLx);
        })))
      signalPassFailure();
  }
};

} // namespace
