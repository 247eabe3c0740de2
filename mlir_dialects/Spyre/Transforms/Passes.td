//===- Passes.td - Spyre passes ----------------------------*- tablegen -*-===//

#ifndef SPYRE_PASSES_TD
#define SPYRE_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpyreAttachArch : Pass<"spyre-attach-arch", "::mlir::ModuleOp"> {
  let summary = "Attach the architecture description to the module";
  let description = [{
    Looks the card description up once and sets it as the module's
    `spyre.arch` attribute, which every later pass and the binary writer
    read: `arch` if given, else `$SPYRE_ARCH`, else the description installed
    with the compiler. A module that already has `spyre.arch` keeps it unless
    `arch` is given. It is the first pass of `spyre-compile`; a pass run
    without it looks the description up the same way.

    After:
    ```mlir
    module attributes {spyre.arch = {card.clock_hz = 1.0e+09 : f64, card.cores = 32 : i64, ...}} {
    ```
  }];
  let options = [
    Option<"archPath", "arch", "std::string", /*default=*/"\"\"",
           "Architecture description file (TOML)">
  ];
}

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

    A producer that loads nothing (an iota, a constant or a little index
    arithmetic: at most four ops besides constants) and writes each element
    of a temporary once is instead recomputed by every later
    `spyre.generic` that reads the temporary, whatever its domain and map:
    its `spyre.index_expr` maps are composed with the map the reader loaded
    with. A kernel phase (the temporary's store, a barrier, the load after
    it) costs more than a few instructions per tile.
  }];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "Emit a remark where a producer writing a temporary is not fused or not "
           "recomputed, with the reason">
  ];
}

def SpyreFuseRows : Pass<"spyre-fuse-rows", "::mlir::ModuleOp"> {
  let summary = "Group generics over the same rows so that they share row tiles in LX";
  let description = [{
    Consecutive `spyre.generic` ops of a kernel over the same domain and
    tiling, each reading what an earlier one wrote or the same inputs, are
    moved into a `spyre.fused` op together with the temporaries only they
    use: each core then loads a tile of whole rows once, runs them all, and
    the temporaries (row maxima, sums, means) never reach device memory.
    This is softmax, layernorm and RMSNorm after `spyre-fuse-elementwise`.
    A few generics between members that share no buffer with the group (a
    copy of another tensor) are passed over and run after it.

    The decision is the cost model's: a group is made when it saves
    device-memory traffic (temporaries written and read back, inputs read
    again) and when a tile of whole rows of every member fits the usable LX
    of the card (`spyre.arch`); otherwise, with `report-missed`, a remark says why.

    Before:
    ```mlir
    %m = spyre.alloc() : !spyre.buffer<64xf32>
    spyre.generic domain [64, 1000] {... combiners = [#spyre.combiner<max>]} ins(%x) outs(%m)
    spyre.generic domain [64, 1000] {...} ins(%x, %m) outs(%y)
    ```
    After:
    ```mlir
    spyre.fused {
      %m = spyre.alloc() : !spyre.buffer<64xf32>
      spyre.generic domain [64, 1000] {...} ins(%x) outs(%m)
      spyre.generic domain [64, 1000] {...} ins(%x, %m) outs(%y)
    }
    ```
  }];
  let dependentDialects = ["::mlir::spyre::SpyreDialect"];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "Emit a remark where generics over the same rows are not grouped, with the reason">
  ];
}

def SpyreFuseEpilogue : Pass<"spyre-fuse-epilogue", "::mlir::ModuleOp"> {
  let summary = "Run a matmul's elementwise consumer on its output tiles in LX";
  let description = [{
    A `spyre.matmul` whose output is a temporary of its kernel read by one
    `spyre.generic` (nothing but allocations between them) is moved with that
    generic and the temporary into a `spyre.fused` op: the generic (bias,
    activation, residual add, scale, cast) then runs on each output tile
    after its last K step, reading the f32 accumulator, and only its result
    is stored; the product never reaches device memory.

    Two matmuls of the same lhs (same value, layout and shapes) whose
    outputs are temporaries read only by one generic, with nothing but
    allocations between them, are grouped with it the same way (a gated
    MLP: `silu(x @ Wg) * (x @ Wu)`): each output tile computes both products
    in one pass over K, loading the lhs panel once for both, and neither
    product reaches device memory. When the pair cannot run so, the second
    matmul alone is tried with the generic.

    Two such matmuls (same lhs, shapes and flags, not accumulating) that
    write outputs of the kernel instead, one right after the other (a
    layer's key and value projections), are grouped without a generic: each
    output tile computes both products in one pass over K and stores each to
    its output, the lhs panel loaded once for both.

    The group is kept when the matmul's plan takes the generic as its
    epilogue (elementwise over the product's rows and columns, reading the
    product at the index it writes, a body the vector unit runs) and a tile
    with the epilogue's LX slots fits the usable LX of the card
    (`spyre.arch`); otherwise the two ops run one after the other as before
    and, with `report-missed`, a remark says why.

    Two such groups in a row, the second's product reading the first's
    epilogue output as its lhs, that output a temporary of the kernel read by
    nothing else (a multilayer perceptron, `epi(act(x @ W1) @ W2)`), become
    one group, a chain, when `chain` is set, the product has at least 64
    rows and a tile of the chain fits LX: the hidden activations stay in LX
    and never reach device memory (ChainPlan: row groups x hidden slices of
    cores, the partial sums of the second product added over the ring).

    Before:
    ```mlir
    %p = spyre.alloc() : !spyre.buffer<512x4096xf16>
    spyre.matmul ins(%a, %w) outs(%p)
    spyre.generic domain [512, 4096] {...} ins(%p, %bias) outs(%y) { add; gelu }
    spyre.dealloc %p
    ```
    After:
    ```mlir
    spyre.fused {
      %p = spyre.alloc() : !spyre.buffer<512x4096xf16>
      spyre.matmul ins(%a, %w) outs(%p)
      spyre.generic domain [512, 4096] {...} ins(%p, %bias) outs(%y) { add; gelu }
    }
    ```
  }];
  let dependentDialects = ["::mlir::spyre::SpyreDialect"];
  let options = [
    Option<"reportMissed", "report-missed", "bool", /*default=*/"false",
           "Emit a remark where a matmul's consumer is not fused, with the reason">,
    Option<"chain", "chain", "bool", /*default=*/"true",
           "Run a product of an epilogue's output with the product before it (an MLP)">
  ];
}

def SpyreAnnotateCost : Pass<"spyre-annotate-cost", "::mlir::ModuleOp"> {
  let summary = "Attach the cost model's roofline estimate to kernel-level ops";
  let description = [{
    Sets `spyre.cost = {flops, vector_ops, device_bytes, compute_cycles,
    memory_cycles, bound_cycles}` on every kernel-level compute or
    data-movement op whose shapes are static, from the cost model and the
    architecture description (the module's `spyre.arch`, see
    `spyre-attach-arch`). `bound_cycles` is the roofline bound on all cores:
    the larger of compute time at peak and compulsory device-memory traffic
    at full bandwidth. Ops it cannot estimate get a remark with `report-unknown`.
  }];
  let options = [
    Option<"reportUnknown", "report-unknown", "bool", /*default=*/"false",
           "Emit a remark on every op without an estimate">
  ];
}

//===----------------------------------------------------------------------===//
// Scheduling: the tiled level (docs/lowering.md). Each pass records its
// decision as an attribute of the compute ops; spyre-lower-to-hw reads them.
//===----------------------------------------------------------------------===//

def SpyreSplitReductions : Pass<"spyre-split-reductions", "::mlir::ModuleOp"> {
  let summary = "Cut reductions with fewer output tiles than cores in parts";
  let description = [{
    Every reduction tile of one output stays on one core, so a reduction
    whose outputs give at most half the cores a tile (`x.sum()`, a loss's
    mean, `amax` over four long rows) would leave the others idle. Such a
    `spyre.generic` (one reduced loop, one `sum`, `prod`, `max` or `min`
    output, at least 65536 points) is cut into S parts of its reduced loop,
    S dividing it, as many as fill the cores (`cores`, or the card's): a
    generic reduces each part into a temporary of partials, a second
    combines them. A 16-bit float sum or product keeps f32 partials and a
    third generic rounds the combined value to the output once.

    Before and after (a sum of 16M f32 on 32 cores):
    ```mlir
    spyre.generic domain [16777216] {combiners = [#spyre.combiner<sum>], ...}
        ins(%x : !spyre.buffer<16777216xf32>) outs(%y : !spyre.buffer<1xf32>)
    // ->
    %p = spyre.alloc() : !spyre.buffer<32xf32>
    spyre.generic domain [32, 524288] {...} ins(%x ...) outs(%p ...)
    spyre.generic domain [32] {...} ins(%p ...) outs(%y ...)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let options = [
    Option<"cores", "cores", "int64_t", /*default=*/"0",
           "Cores to use (0: all of the card's)">
  ];
}

def SpyreDivideWork : Pass<"spyre-divide-work", "::mlir::ModuleOp"> {
  let summary = "Decide how many cores run each compute op";
  let description = [{
    Sets `spyre.cores` on every compute op of every kernel (`spyre.generic`,
    `spyre.matmul`, `spyre.batch_matmul`, `spyre.gather`): the card's cores,
    or `cores` when given, but no more than the op has independent units of
    work (output rows or elements). An op the card cannot run (dynamic sizes,
    body ops without a vector instruction, non-linear indexing, ...) is an
    error naming the reason. Ops that already carry `spyre.cores` keep it.

    After:
    ```mlir
    spyre.generic domain [4096, 4096] {spyre.cores = 32 : i64, ...}
    ```
  }];
  let options = [
    Option<"cores", "cores", "int64_t", /*default=*/"0",
           "Cores to use (0: all of the card's)">
  ];
}

def SpyreTile : Pass<"spyre-tile", "::mlir::ModuleOp"> {
  let summary = "Choose the tile each core works on";
  let description = [{
    Sets `spyre.tile` on every compute op that has `spyre.cores`: one size per
    loop of a generic (only two loops are tiled, one of them the reduction
    loop if there is one; columns are whole sticks where they are longer than
    a stick), `[tm, tn, tk]` for matmuls, `[indices, row elements]` for
    gathers. The tile is the largest whose double-buffered working set fits
    the usable LX and that still gives every core work. A `spyre.tile`
    already present is checked, not replaced; one that does not fit is an
    error.

    With `candidates=N`, also sets `spyre.tile_candidates` on every op it
    tiles: up to N tiles (the chosen one first, then those the op's cost
    estimate ranks next, including sizes of 3 x 2^i sticks) for tuning by
    simulated time (spyre_mlir.tuning): each is compiled with it as
    `spyre.tile` and the fastest kept.
  }];
  let options = [
    Option<"candidates", "candidates", "unsigned", /*default=*/"0",
           "Also list up to this many tiles to try (spyre.tile_candidates)">,
  ];
}

def SpyrePlanMemory : Pass<"spyre-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Place tiles in LX and kernel temporaries in device memory";
  let description = [{
    LX: sets `spyre.lx` on every tiled op, the offset of each of its LX slots
    (double-buffered input and output tiles, accumulators, and one tile per
    body temporary). Slots live at the same time never overlap; temporaries
    whose live ranges in the body are disjoint share bytes. Every op starts
    from an empty LX (ops are separated by a barrier).
    Device memory: sets `spyre.device_offset` on every `spyre.alloc` of a
    kernel, in one scratch area whose size becomes the kernel's
    `spyre.scratch_bytes`; temporaries that are not live together share it.
  }];
}

def SpyreCheckLx : Pass<"spyre-check-lx", "::mlir::ModuleOp"> {
  let summary = "Check LX plans: no overlap, no overflow";
  let description = [{
    For every op with `spyre.lx`, recomputes its LX slots from its tile and
    checks that slots live at the same time do not overlap and that all lie
    within the usable LX of the card. Changes nothing.
  }];
}

def SpyreLowerToHw : Pass<"spyre-lower-to-hw", "::mlir::ModuleOp"> {
  let summary = "Lower scheduled kernels to hardware-level programs";
  let description = [{
    Replaces every `spyre.kernel` whose compute ops carry `spyre.cores`,
    `spyre.tile` and `spyre.lx` by a `spyre.hw.program` of the same name:
    one `spyre.hw.buffer` per kernel argument (`input`, `output` or `inout`
    by how the kernel uses it; named by the argument's `spyre.name`
    attribute, else `arg<N>`), one `scratch` buffer for the kernel's
    temporaries, and per core the DMA, PT and SFU instructions of each op with
    double-buffered loads (see HwEmitter.h), ops separated by barriers and
    marked with `spyre.hw.kernel` (1, 2, ... in order) for the counters.
  }];
}

#endif // SPYRE_PASSES_TD
