// spyre-opt keeps mlir-opt's IR printing: every pass of the compile
// pipeline dumps the IR after it runs, in pipeline order.
// RUN: spyre-opt %s --spyre-compile --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s
// RUN: spyre-opt %s --spyre-compile --mlir-print-ir-after=spyre-tile -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE

// CHECK: IR Dump After SpyreAttachArch (spyre-attach-arch)
// CHECK: IR Dump After SpyreGeneralize (spyre-generalize)
// CHECK: IR Dump After SpyreDivideWork (spyre-divide-work)
// CHECK: spyre.kernel @scale
// CHECK: spyre.cores = 32
// CHECK: IR Dump After SpyreTile (spyre-tile)
// CHECK: IR Dump After SpyrePlanMemory (spyre-plan-memory)
// CHECK: IR Dump After SpyreLowerToHw (spyre-lower-to-hw)
// CHECK: IR Dump After SpyreCheckHw (spyre-check-hw)

// ONE-NOT: IR Dump After SpyreDivideWork
// ONE: IR Dump After SpyreTile (spyre-tile)
// ONE-NOT: IR Dump After

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
