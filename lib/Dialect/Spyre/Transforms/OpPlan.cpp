//===- OpPlan.cpp - what the schedule passes share ------------------------===//

#include "OpPlan.h"
#include "PlanKinds.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::spyre;

OpPlan::~OpPlan() = default;

SmallVector<SmallVector<int64_t>> OpPlan::tileCandidates(int64_t cores, int64_t lxBytes,
                                                        int64_t count) const {
  SmallVector<int64_t> tile = chooseTile(cores, lxBytes);
  if (tile.empty() || count < 1)
    return {};
  return {tile};
}

FailureOr<std::unique_ptr<OpPlan>> OpPlan::get(Operation *op, const ::spyre::Arch &arch) {
  if (auto generic = dyn_cast<GenericOp>(op))
    return makeGenericPlan(generic, arch);
  if (isa<MatmulOp, BatchMatmulOp>(op))
    return makeMatmulPlan(op, arch);
  if (auto gather = dyn_cast<GatherOp>(op))
    return makeGatherPlan(gather, arch);
  if (auto scatter = dyn_cast<ScatterOp>(op))
    return makeScatterPlan(scatter, arch);
  if (auto attention = dyn_cast<AttentionOp>(op))
    return makeAttentionPlan(attention, arch);
  if (auto conv = dyn_cast<Conv2dOp>(op))
    return makeConvPlan(conv, arch);
  if (auto fused = dyn_cast<FusedOp>(op)) {
    // A matmul with its epilogue, two products in a chain, or generics
    // sharing row tiles.
    auto matmuls = llvm::to_vector(fused.getBody().front().getOps<MatmulOp>());
    if (matmuls.size() == 2 && matmuls[0].getLhs() != matmuls[1].getLhs())
      return makeChainPlan(fused, arch);
    if (!matmuls.empty())
      return makeMatmulPlan(fused, arch);
    return makeFusedPlan(fused, arch);
  }
  if (isa<CopyOp, PermuteOp, BroadcastOp, SliceOp, ConcatOp, FillOp, ConstantOp>(op))
    return op->emitError() << "'" << op->getName()
                           << "' must be rewritten as spyre.generic (spyre-generalize) first";
  return std::unique_ptr<OpPlan>();
}


LogicalResult mlir::spyre::forEachPlan(ModuleOp module, const ::spyre::Arch &arch,
                                       function_ref<LogicalResult(OpPlan &)> fn) {
  WalkResult result = module.walk([&](KernelOp kernel) {
    if (failed(checkBuffersFit(kernel, arch)))
      return WalkResult::interrupt();
    for (Operation &op : kernel.getBody().front()) {
      FailureOr<std::unique_ptr<OpPlan>> plan = OpPlan::get(&op, arch);
      if (failed(plan) || (*plan && failed(fn(**plan))))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

FailureOr<Schedule> mlir::spyre::readSchedule(const OpPlan &plan, unsigned parts) {
  Operation *op = plan.getOperation();
  const ::spyre::Arch &arch = plan.getArch();
  auto cores = op->getAttrOfType<IntegerAttr>(kCoresAttr);
  auto tile = op->getAttrOfType<DenseI64ArrayAttr>(kTileAttr);
  auto lx = op->getAttrOfType<DenseI64ArrayAttr>(kLxAttr);
  if (parts & kScheduleLx)
    parts |= kScheduleTile; // LX offsets are checked against the tile's slots
  bool missing = ((parts & kScheduleCores) && !cores) || ((parts & kScheduleTile) && !tile) ||
                 ((parts & kScheduleLx) && !lx);
  if (missing) {
    // Names every part asked for, and the passes that set them, in order.
    static const struct {
      SchedulePart part;
      const char *attr, *pass;
    } kParts[] = {{kScheduleCores, "spyre.cores", "spyre-divide-work"},
                  {kScheduleTile, "spyre.tile", "spyre-tile"},
                  {kScheduleLx, "spyre.lx", "spyre-plan-memory"}};
    SmallVector<StringRef> attrs, passes;
    for (const auto &p : kParts)
      if (parts & p.part) {
        attrs.push_back(p.attr);
        passes.push_back(p.pass);
      }
    InFlightDiagnostic diag = op->emitError() << "is not scheduled: it needs ";
    for (auto [i, attr] : llvm::enumerate(attrs))
      diag << (i == 0 ? "" : i + 1 == attrs.size() ? " and " : ", ") << attr;
    diag << " (" << llvm::join(passes, ", ") << ")";
    return failure();
  }
  Schedule schedule;
  if (parts & kScheduleCores) {
    schedule.cores = cores.getInt();
    if (schedule.cores < 1 || schedule.cores > arch.cores)
      return op->emitError() << "spyre.cores = " << schedule.cores << " is not in [1, "
                             << arch.cores << "]";
  }
  if (parts & kScheduleTile) {
    schedule.tile = tile.asArrayRef();
    if (failed(plan.verifyTile(schedule.tile)))
      return failure();
  }
  if (parts & kScheduleLx) {
    schedule.lx = lx.asArrayRef();
    if (failed(checkLx(op, plan.slots(schedule.tile), schedule.lx, arch.lxUsableBytes())))
      return failure();
  }
  return schedule;
}

std::string mlir::spyre::whyFusedCannotRun(FusedOp fused, const ::spyre::Arch &arch,
                                           StringRef noTile) {
  std::string why;
  ScopedDiagnosticHandler capture(fused.getContext(), [&](Diagnostic &d) {
    why = d.str();
    return success();
  });
  FailureOr<std::unique_ptr<OpPlan>> plan = OpPlan::get(fused, arch);
  if (failed(plan))
    return why;
  if ((*plan)->chooseTile(arch.cores, arch.lxUsableBytes()).empty())
    return noTile.str();
  return "";
}

void mlir::spyre::dissolve(FusedOp fused) {
  for (Operation &op : llvm::make_early_inc_range(fused.getBody().front()))
    op.moveBefore(fused);
  fused.erase();
}

FailureOr<int64_t> mlir::spyre::coresToUse(ModuleOp module, const ::spyre::Arch &arch,
                                           int64_t cores) {
  if (cores < 0 || cores > arch.cores)
    return module.emitError() << "cores = " << cores << " is not in [0, " << arch.cores
                              << "] (the card's cores)";
  return cores ? cores : arch.cores;
}
