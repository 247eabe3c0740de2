//===- PlanKinds.h - the OpPlan of each compute op -------------*- C++ -*-===//

#ifndef SPYRE_TRANSFORMS_PLANKINDS_H
#define SPYRE_TRANSFORMS_PLANKINDS_H

#include "OpPlan.h"

namespace mlir::spyre {

FailureOr<std::unique_ptr<OpPlan>> makeGenericPlan(GenericOp op, const ::spyre::Arch &arch);
/// `op` is a spyre.matmul or spyre.batch_matmul, or a spyre.fused holding a
/// spyre.matmul and its epilogue.
FailureOr<std::unique_ptr<OpPlan>> makeMatmulPlan(Operation *op, const ::spyre::Arch &arch);
FailureOr<std::unique_ptr<OpPlan>> makeGatherPlan(GatherOp op, const ::spyre::Arch &arch);
FailureOr<std::unique_ptr<OpPlan>> makeScatterPlan(ScatterOp op, const ::spyre::Arch &arch);
FailureOr<std::unique_ptr<OpPlan>> makeFusedPlan(FusedOp op, const ::spyre::Arch &arch);
/// `op` holds a product, its epilogue, a product of that epilogue's output
/// and its epilogue (a multilayer perceptron, spyre-fuse-epilogue).
FailureOr<std::unique_ptr<OpPlan>> makeChainPlan(FusedOp op, const ::spyre::Arch &arch);
FailureOr<std::unique_ptr<OpPlan>> makeAttentionPlan(AttentionOp op, const ::spyre::Arch &arch);
FailureOr<std::unique_ptr<OpPlan>> makeConvPlan(Conv2dOp op, const ::spyre::Arch &arch);

/// A plan of type `Plan` for `op` (its constructor also taking `extra`),
/// analysed (errors reported on the op).
template <typename Plan, typename OpT, typename... Extra>
FailureOr<std::unique_ptr<OpPlan>> analyzedPlan(OpT op, const ::spyre::Arch &arch,
                                                Extra... extra) {
  auto plan = std::make_unique<Plan>(op, arch, extra...);
  if (failed(plan->analyze()))
    return failure();
  return std::unique_ptr<OpPlan>(std::move(plan));
}

} // namespace mlir::spyre

#endif // SPYRE_TRANSFORMS_PLANKINDS_H
