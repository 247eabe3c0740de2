// Textual pass pipelines name Spyre passes and their options as upstream
// ones: the same result as the flags, and the pipeline's own options.
// RUN: spyre-opt %s --pass-pipeline="builtin.module(spyre-attach-arch,spyre-divide-work{cores=4},spyre-annotate-cost)" | FileCheck %s
// RUN: spyre-opt %s -spyre-attach-arch -spyre-divide-work="cores=4" -spyre-annotate-cost | FileCheck %s
// RUN: spyre-opt %s --pass-pipeline="builtin.module(spyre-compile{stop-after=divide-work})" | FileCheck %s --check-prefix=STOP
// RUN: not spyre-opt %s --pass-pipeline="builtin.module(spyre-no-such-pass)" 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: spyre.kernel @scale({{.*}}) attributes {spyre.cost = {bound_cycles =
// CHECK: spyre.generic
// CHECK-SAME: spyre.cores = 4

// STOP: spyre.generic
// STOP-SAME: spyre.cores = 32
// STOP-NOT: spyre.tile

// BAD: 'spyre-no-such-pass' does not refer to a registered pass or pass pipeline

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
