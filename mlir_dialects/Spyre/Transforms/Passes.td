//===- Passes.td - Spyre passes ----------------------------*- tablegen -*-===//

#ifndef SPYRE_PASSES_TD
#define SPYRE_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpyreGeneralize : Pass<"spyre-generalize", "::mlir::ModuleOp"> {
  let summary = "Rewrite data-movement ops as `spyre.generic`";
  let description = [{
    Turns `spyre.copy`, `spyre.permute`, `spyre.broadcast`, `spyre.slice`,
    `spyre.concat` and `spyre.fill` into `spyre.generic` ops with the
    equivalent indexing maps, so that later passes (fusion, tiling) handle one
    kind of elementwise op. `spyre.gather` reads through an index loaded at
    run time, which an affine map cannot express: it stays, and the pass
    reports it with a remark when `report-kept` is set.

    Before:
    ```mlir
    spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>)
                  permutation = [1, 0]
    ```
    After:
    ```mlir
    spyre.generic domain [8, 4] {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                                  affine_map<(d0, d1) -> (d0, d1)>],
                                 iterator_types = [#spyre.iterator<parallel>,
                                                   #spyre.iterator<parallel>]}
        ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>) {
    ^bb0(%v: f16):
      spyre.yield %v : f16
    }
    ```
  }];
  let dependentDialects = ["::mlir::spyre::SpyreDialect"];
  let options = [
    Option<"copies", "copies", "bool", /*default=*/"true",
           "Also generalize plain `spyre.copy` (a copy that changes memory "
           "space is DMA and may be better kept)">,
    Option<"reportKept", "report-kept", "bool", /*default=*/"false",
           "Emit a remark on every data-movement op that stays as it is">
  ];
}

def SpyreFuseElementwise : Pass<"spyre-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse elementwise producers into their consumers inside kernels";
  let description = [{
    A `spyre.generic` without reduction loops that writes a temporary of its
    kernel (a `spyre.alloc`) read by exactly one following `spyre.generic` over
    the same domain, at the same index it was written, is inlined into that
    consumer: the temporary's device-memory round trip disappears and results
    do not change (the consumer computes each element from the same values).
    Consumers may reduce (an elementwise prologue of a reduction). Chains fuse
    step by step.

    Before:
    ```mlir
    spyre.generic domain [64] {...} ins(%x) outs(%t) { exp }
    spyre.generic domain [64] {...} ins(%t, %y) outs(%z) { add }
    ```
    After:
    ```mlir
    spyre.generic domain [64] {...} ins(%x, %y) outs(%z) { exp; add }
    ```
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "Emit a remark where a producer writing a temporary is not fused, with the reason">
  ];
}

def SpyreCheckHw : Pass<"spyre-check-hw", "::mlir::ModuleOp"> {
  let summary = "Check hardware-level programs against the card";
  let description = [{
    Runs the simulator's program validator on every `spyre.hw.program`:
    every access of every instruction, over every iteration of its hardware
    loops, must stay inside its buffer or the core's usable LX, cores and
    semaphores must exist, and operands must be of the kinds the instructions
    take. The card is the architecture description given by `arch` (default:
    `$SPYRE_ARCH`, else the one installed with the tools). Passes that lower
    to the hardware level run it on their output; it changes nothing.
  }];
  let options = [
    Option<"archPath", "arch", "std::string", /*default=*/"\"\"",
           "Architecture description file (TOML)">
  ];
}

def SpyreAnnotateCost : Pass<"spyre-annotate-cost", "::mlir::ModuleOp"> {
  let summary = "Attach the cost model's roofline estimate to kernel-level ops";
  let description = [{
    Sets `spyre.cost = {flops, vector_ops, device_bytes, compute_cycles,
    memory_cycles, bound_cycles}` on every kernel-level compute or
    data-movement op whose shapes are static, from the cost model and the
    architecture description (`arch`, default `$SPYRE_ARCH` or the installed
    card). `bound_cycles` is the roofline bound on all cores: the larger of
    compute time at peak and compulsory device-memory traffic at full
    bandwidth. Ops it cannot estimate get a remark with `report-unknown`.
  }];
  let options = [
    Option<"archPath", "arch", "std::string", /*default=*/"\"\"",
           "Architecture description file (TOML)">,
    Option<"reportUnknown", "report-unknown", "bool", /*default=*/"false",
           "Emit a remark on every op without an estimate">
  ];
}

#endif // SPYRE_PASSES_TD
