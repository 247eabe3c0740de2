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
  double writtenBytes = 0; ///< of deviceBytes, those of buffers the op (or kernel) writes
  double computeCycles = 0, memoryCycles = 0;
  /// The bus's time for the compulsory traffic with its read/write
  /// turnaround (Arch::deviceCycles), which the card pays on the lesser
  /// direction whatever the schedule.
  double busCycles = 0;
  /// The roofline bound: compute at peak, traffic at full bandwidth.
  double boundCycles() const { return computeCycles > memoryCycles ? computeCycles : memoryCycles; }
  /// The roofline bound with the turnaround: no schedule on the card can be
  /// faster; what a schedule can still gain is measured against it.
  double floorCycles() const {
    double bound = boundCycles();
    return busCycles > bound ? busCycles : bound;
  }
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
  double busCycles(const OpCost &cost) const;
  ::spyre::Arch arch;
};

} // namespace mlir::spyre

#endif // SPYRE_ANALYSIS_COSTMODEL_H
