// RUN: spyre-opt %s -spyre-divide-work -spyre-tile | FileCheck %s
// On a card with a quarter of the LX the tiles shrink.
// RUN: sed -e "s/^bytes = 2097152/bytes = 897152/" %S/../../../../lib/Arch/spyre_card.toml > %t.toml
// RUN: spyre-opt %s -spyre-attach-arch="arch=%t.toml" -spyre-divide-work -spyre-tile | FileCheck %s --check-prefix=SMALL

// Elementwise: whole 4096-element rows, as many as fit twice (double
// buffering) for the input and output plus one temporary: 39 rows of f16 in
// the ~1.6 MB allocatable LX.
// A reduction keeps the whole reduced row of each output element.
// Matmul: [tm, tn, tk], the fitting tile with the least estimated time on
// its best grid of cores (operand panels shared by a grid row or column,
// PT operand feed, idle cores); gather: [indices, row elements].
// CHECK-LABEL: spyre.kernel @tiles
// CHECK: spyre.generic domain [4096, 4096] {{.*}}spyre.tile = array<i64: 39, 4096>
// CHECK: spyre.generic domain [5, 100000] {{.*}}spyre.tile = array<i64: 1, 100000>
// CHECK: spyre.matmul {{.*}}spyre.tile = array<i64: 256, 256, 512>
// CHECK: spyre.gather {{.*}}spyre.tile = array<i64: 1, 16>
// SMALL-LABEL: spyre.kernel @tiles
// SMALL: spyre.generic domain [4096, 4096] {{.*}}spyre.tile = array<i64: 9, 4096>
// SMALL: spyre.generic domain [5, 100000] {{.*}}spyre.tile = array<i64: 1, 49984>
// SMALL: spyre.matmul {{.*}}spyre.tile = array<i64: 128, 128, 256>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
spyre.kernel @tiles(%x: !spyre.buffer<4096x4096xf16>, %y: !spyre.buffer<4096x4096xf16>,
                    %r: !spyre.buffer<5x100000xf32>, %s: !spyre.buffer<5xf32>,
                    %t: !spyre.buffer<100x16xf16>, %i: !spyre.buffer<3xi32>,
                    %g: !spyre.buffer<3x16xf16>, %c: !spyre.buffer<4096x4096xf32>) {
  spyre.generic domain [4096, 4096] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4096x4096xf16>) outs(%y : !spyre.buffer<4096x4096xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    %f = arith.mulf %e, %e : f16
    spyre.yield %f : f16
  }
  spyre.generic domain [5, 100000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%r : !spyre.buffer<5x100000xf32>) outs(%s : !spyre.buffer<5xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.matmul ins(%x, %x : !spyre.buffer<4096x4096xf16>, !spyre.buffer<4096x4096xf16>)
               outs(%c : !spyre.buffer<4096x4096xf32>)
  spyre.gather ins(%t, %i : !spyre.buffer<100x16xf16>, !spyre.buffer<3xi32>)
               outs(%g : !spyre.buffer<3x16xf16>) axis = 0
  spyre.return
}

// A tile given in the IR is kept.
// CHECK-LABEL: spyre.kernel @given
// CHECK: spyre.tile = array<i64: 2, 64>
spyre.kernel @given(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.tile = array<i64: 2, 64>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
