// --mlir-timing reports the time of every pass of the compile pipeline.
// RUN: spyre-opt %s --spyre-compile --mlir-timing -o /dev/null 2>&1 | FileCheck %s
// RUN: spyre-opt %s --spyre-compile --mlir-timing --mlir-timing-display=tree -o /dev/null 2>&1 | FileCheck %s --check-prefix=TREE

// CHECK: Execution time report
// CHECK: Parser
// CHECK: SpyreAttachArch
// CHECK: SpyreGeneralize
// CHECK: SpyreDivideWork
// CHECK: SpyreTile
// CHECK: SpyrePlanMemory
// CHECK: SpyreLowerToHw
// CHECK: Total

// TREE: Execution time report
// TREE: SpyreLowerToHw
// TREE: Total

spyre.kernel @scale(%x: !spyre.buffer<64x256xf16>, %y: !spyre.buffer<64x256xf16>) {
  spyre.generic domain [64, 256] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                                  iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64x256xf16>) outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%v: f16):
    %two = arith.constant 2.0 : f16
    %r = arith.mulf %v, %two : f16
    spyre.yield %r : f16
  }
  spyre.return
}
