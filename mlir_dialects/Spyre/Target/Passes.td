//===- Passes.td - passes over hardware-level programs -----*- tablegen -*-===//
//
// Passes that need the program binary format (lib/Isa) and the writer of
// lib/Target: they live with the target so that the transforms library never
// depends on it.
//
//===----------------------------------------------------------------------===//

#ifndef SPYRE_TARGET_PASSES_TD
#define SPYRE_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpyreCheckHw : Pass<"spyre-check-hw", "::mlir::ModuleOp"> {
  let summary = "Check hardware-level programs against the card";
  let description = [{
    Writes every `spyre.hw.program` as a binary and runs the binary format's
    validator on it (lib/Isa, the one the simulator runs before a program):
    every access of every instruction, over every iteration of its hardware
    loops, must stay inside its buffer or the core's usable LX, cores and
    semaphores must exist, and operands must be of the kinds the instructions
    take. The card is the module's `spyre.arch` (see `spyre-attach-arch`).
    Passes that lower to the hardware level run it on their output; it
    changes nothing.
  }];
}

#endif // SPYRE_TARGET_PASSES_TD
