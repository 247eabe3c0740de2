// RUN: spyre-opt %s -split-input-file -spyre-divide-work -spyre-tile="candidates=4" | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-divide-work -spyre-tile | FileCheck %s --check-prefix=NONE
// RUN: not spyre-opt %s -spyre-divide-work -spyre-tile="candidates=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: '-1' value invalid for uint argument

// Tuning by simulated time lists tiles to try: the chosen one first, then
// those the estimate ranks next, which may be 3 x 2^i sticks wide (192 is
// 3 sticks of fp16). Without the option nothing is listed.

// CHECK-LABEL: spyre.kernel @product
// CHECK: spyre.matmul
// CHECK-SAME: spyre.tile = array<i64: [[M:[0-9]+]], [[N:[0-9]+]], [[K:[0-9]+]]>
// Today's ranking for this shape: 3 x 2^i-stick widths next (384 columns
// are 6 sticks, 192 are 3).
// CHECK-SAME: spyre.tile_candidates = [array<i64: [[M]], [[N]], [[K]]>, array<i64: 128, 384, 512>, array<i64: 256, 192, 512>, array<i64: {{[0-9, ]+}}>]
// NONE-NOT: spyre.tile_candidates
spyre.kernel @product(%x: !spyre.buffer<512x2048xf16>, %w: !spyre.buffer<2048x5632xf16>,
                      %y: !spyre.buffer<512x5632xf16>) {
  spyre.matmul ins(%x, %w : !spyre.buffer<512x2048xf16>, !spyre.buffer<2048x5632xf16>)
      outs(%y : !spyre.buffer<512x5632xf16>)
  spyre.return
}

// -----

// A plan that ranks no tiles lists only the one it chose.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: spyre.kernel @elementwise
// CHECK: spyre.generic
// CHECK-SAME: spyre.tile = array<i64: [[R:[0-9]+]], [[C:[0-9]+]]>
// CHECK-SAME: spyre.tile_candidates = [array<i64: [[R]], [[C]]>]
spyre.kernel @elementwise(%x: !spyre.buffer<64x256xf16>, %y: !spyre.buffer<64x256xf16>) {
  spyre.generic domain [64, 256] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64x256xf16>) outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}
