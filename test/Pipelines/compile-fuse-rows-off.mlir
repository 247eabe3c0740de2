// fuse-rows=false leaves out spyre-fuse-rows: a softmax's ops stay apart and
// their temporaries go to the kernel's scratch area in device memory (what
// compilers without row fusion do; bench/bench_fidelity.py builds the
// programs of such device measurements this way).
// RUN: spyre-opt %s --spyre-compile="stop-after=fuse" | FileCheck %s --check-prefix=FUSED
// RUN: spyre-opt %s --spyre-compile="stop-after=fuse fuse-rows=false" | FileCheck %s --check-prefix=APART
// RUN: spyre-opt %s --spyre-compile="fuse-rows=false" | FileCheck %s --check-prefix=HW
// RUN: not spyre-opt %s --spyre-compile="fuse-rows=maybe" 2>&1 | FileCheck %s --check-prefix=BAD

// FUSED: spyre.fused {
// APART-NOT: spyre.fused
// APART: spyre.alloc() : !spyre.buffer<64xf32>
// HW: spyre.hw.buffer @scratch scratch
// BAD: 'maybe' is invalid value for boolean argument

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

spyre.kernel @softmax(%x: !spyre.buffer<64x1000xf32>, %y: !spyre.buffer<64x1000xf32>) {
  %mx = spyre.alloc() : !spyre.buffer<64xf32>
  %sm = spyre.alloc() : !spyre.buffer<64xf32>
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x : !spyre.buffer<64x1000xf32>) outs(%mx : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x, %mx : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>) outs(%sm : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32, %m: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    spyre.yield %e : f32
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mx, %sm : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>, !spyre.buffer<64xf32>)
      outs(%y : !spyre.buffer<64x1000xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    spyre.yield %q : f32
  }
  spyre.dealloc %mx : !spyre.buffer<64xf32>
  spyre.dealloc %sm : !spyre.buffer<64xf32>
  spyre.return
}

