//===- CostModel.h - what kernel-level ops cost on the card ----*- C++ -*-===//
//
// The one place that turns the architecture description into costs of
// kernel-level ops: the roofline bound that fusion decisions and the
// benchmark reports use. Everything is derived from ::spyre::Arch.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_ANALYSIS_COSTMODEL_H
#define SPYRE_ANALYSIS_COSTMODEL_H

#include "spyre-mlir/Arch/Arch.h"
#include "spyre-mlir/Dialect/Spyre/IR/SpyreOps.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace mlir::spyre {

struct OpCost {
  double flops = 0;       ///< matrix-unit FLOPs (a MAC is two)
  double vectorOps = 0;   ///< vector-unit element operations, weighted by rate
  double deviceBytes = 0; ///< compulsory traffic: inputs read once, outputs written once
  double computeCycles = 0, memoryCycles = 0;
  /// The roofline bound: no schedule on the card can be faster.
  double boundCycles() const { return computeCycles > memoryCycles ? computeCycles : memoryCycles; }
};

/// SFU passes a generic's body op takes per element: none for a constant
/// or a conversion (an immediate; the SFU converts as it reads and rounds
/// on store), the transcendental divisor for the functions the vector unit
/// runs at its transcendental rate (docs/isa.md), else one.
double sfuPasses(Operation &op, const ::spyre::Arch &arch);

class CostModel {
public:
  explicit CostModel(const ::spyre::Arch &arch) : arch(arch) {}

  /// The cost of one kernel-level op on all of the card's cores, or nothing
  /// (with the reason in `why`) where it cannot be known statically.
  std::optional<OpCost> estimate(Operation *op, std::string &why) const;

  /// The roofline bound of a whole kernel: the compute of all its ops, and
  /// its arguments moved once (temporaries may stay on chip). Nothing, with
  /// `why`, if an op cannot be estimated.
  std::optional<OpCost> estimateKernel(KernelOp kernel, std::string &why) const;

private:
  ::spyre::Arch arch;
};

} // namespace mlir::spyre

#endif // SPYRE_ANALYSIS_COSTMODEL_H
