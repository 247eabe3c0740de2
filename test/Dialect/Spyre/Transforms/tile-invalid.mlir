// RUN: spyre-opt %s -split-input-file -spyre-divide-work -spyre-tile -verify-diagnostics

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @rank(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  // expected-error @+1 {{spyre.tile has 1 sizes for 2 loops}}
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.tile = array<i64: 2>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @too_big(%x: !spyre.buffer<1024x1024xf32>, %y: !spyre.buffer<1024x1024xf32>) {
  // expected-error @+1 {{spyre.tile needs 12582912 bytes of LX, more than the usable 1600000}}
  spyre.generic domain [1024, 1024] {indexing_maps = [#id, #id], spyre.tile = array<i64: 1024, 1024>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<1024x1024xf32>) outs(%y : !spyre.buffer<1024x1024xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

// Blocks of 8 x 1024 f32 are long enough transfers: no plane loop.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
spyre.kernel @third_loop(%x: !spyre.buffer<2x8x1024xf32>, %y: !spyre.buffer<2x8x1024xf32>) {
  // expected-error @+1 {{spyre.tile: loop 0 must step one point at a time (only loops 1 and 2 are tiled)}}
  spyre.generic domain [2, 8, 1024] {indexing_maps = [#id, #id], spyre.tile = array<i64: 2, 8, 1024>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<2x8x1024xf32>) outs(%y : !spyre.buffer<2x8x1024xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

// Rows of 32 f16 continue along loop 1 (stride 32): loop 1 is a plane loop,
// loop 0 the rows, and loop 2 the cols; loop 3 is none of them.
#planes = affine_map<(d0, d1, d2, d3) -> (d0 * 256 + d1 * 32 + d2 + d3 * 4096)>
spyre.kernel @beyond_the_plane(%x: !spyre.buffer<8192xf16>, %y: !spyre.buffer<8192xf16>) {
  // expected-error @+1 {{spyre.tile: loop 3 must step one point at a time (only loops 0, 2 and the plane loop 1 are tiled)}}
  spyre.generic domain [16, 8, 32, 2] {indexing_maps = [#planes, #planes],
      spyre.tile = array<i64: 1, 8, 32, 2>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8192xf16>) outs(%y : !spyre.buffer<8192xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @matmul_bounds(%a: !spyre.buffer<8x8xf16>, %c: !spyre.buffer<8x8xf32>) {
  // expected-error @+1 {{spyre.tile size 9 is not in [1, 8]}}
  spyre.matmul ins(%a, %a : !spyre.buffer<8x8xf16>, !spyre.buffer<8x8xf16>) outs(%c : !spyre.buffer<8x8xf32>) {spyre.tile = array<i64: 9, 8, 8>}
  spyre.return
}

// -----

spyre.kernel @attention_head_too_big(%q: !spyre.buffer<1x8x409600xf16>, %o: !spyre.buffer<1x8x409600xf16>) {
  // expected-error @+1 {{no tile of this op fits in the usable LX of 1600000 bytes}}
  spyre.attention ins(%q, %q, %q : !spyre.buffer<1x8x409600xf16>, !spyre.buffer<1x8x409600xf16>, !spyre.buffer<1x8x409600xf16>) outs(%o : !spyre.buffer<1x8x409600xf16>) scale = 0.25
  spyre.return
}

// -----

// The input rows and one output channel's weights of 100000 input channels
// exceed LX.
spyre.kernel @conv_channels_too_many(%x: !spyre.buffer<1x100000x3x3xf16>, %w: !spyre.buffer<2x100000x3x3xf16>, %y: !spyre.buffer<1x2x1x1xf16>) {
  // expected-error @+1 {{no tile of this op fits in the usable LX of 1600000 bytes}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x100000x3x3xf16>, !spyre.buffer<2x100000x3x3xf16>) outs(%y : !spyre.buffer<1x2x1x1xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

// Two products side by side, written by hand, whose second reads the
// first's output as its rhs: one tile cannot compute both.
spyre.kernel @side_by_side_dependent(%x: !spyre.buffer<64x64xf16>, %w: !spyre.buffer<64x64xf16>,
                                     %k: !spyre.buffer<64x64xf16>, %v: !spyre.buffer<64x64xf16>) {
  // expected-error @+1 {{cannot compute two products side by side: one writes an operand of the other}}
  spyre.fused {
    spyre.matmul ins(%x, %w : !spyre.buffer<64x64xf16>, !spyre.buffer<64x64xf16>)
                 outs(%k : !spyre.buffer<64x64xf16>)
    spyre.matmul ins(%x, %k : !spyre.buffer<64x64xf16>, !spyre.buffer<64x64xf16>)
                 outs(%v : !spyre.buffer<64x64xf16>)
  }
  spyre.return
}

// -----

// Or accumulate into their outputs.
spyre.kernel @side_by_side_accumulating(%x: !spyre.buffer<64x64xf16>, %w: !spyre.buffer<64x64xf16>,
                                        %w2: !spyre.buffer<64x64xf16>,
                                        %k: !spyre.buffer<64x64xf16>, %v: !spyre.buffer<64x64xf16>) {
  // expected-error @+1 {{cannot compute two products side by side into outputs they accumulate into}}
  spyre.fused {
    spyre.matmul accumulate ins(%x, %w : !spyre.buffer<64x64xf16>, !spyre.buffer<64x64xf16>)
                 outs(%k : !spyre.buffer<64x64xf16>)
    spyre.matmul accumulate ins(%x, %w2 : !spyre.buffer<64x64xf16>, !spyre.buffer<64x64xf16>)
                 outs(%v : !spyre.buffer<64x64xf16>)
  }
  spyre.return
}

// -----

spyre.kernel @scatter_tile(%s: !spyre.buffer<4x5x64xf16>, %i: !spyre.buffer<5xi32>, %t: !spyre.buffer<4x16x64xf16>) {
  // expected-error @+1 {{spyre.tile of this scatter is [indices in [1, 5], row elements in [1, 64]]}}
  spyre.scatter ins(%s, %i : !spyre.buffer<4x5x64xf16>, !spyre.buffer<5xi32>) outs(%t : !spyre.buffer<4x16x64xf16>) axis = 1
                {spyre.tile = array<i64: 6, 64>}
  spyre.return
}

// -----

spyre.kernel @attention_fold_not_causal(%q: !spyre.buffer<2x256x64xf16>, %o: !spyre.buffer<2x256x64xf16>) {
  // expected-error @+1 {{spyre.tile folds panels of 128 rows in blocks of 64: folding needs causal attention with a key/value head per query head and without a mask of rows, an even panel shorter than twice the queries, and blocks that divide half of it}}
  spyre.attention ins(%q, %q, %q : !spyre.buffer<2x256x64xf16>, !spyre.buffer<2x256x64xf16>, !spyre.buffer<2x256x64xf16>) outs(%o : !spyre.buffer<2x256x64xf16>) scale = 0.125 {spyre.tile = array<i64: 128, 128, 64, 1>}
  spyre.return
}

// -----

spyre.kernel @attention_fold_block(%q: !spyre.buffer<2x256x64xf16>, %o: !spyre.buffer<2x256x64xf16>) {
  // expected-error @+1 {{spyre.tile folds panels of 128 rows in blocks of 48}}
  spyre.attention ins(%q, %q, %q : !spyre.buffer<2x256x64xf16>, !spyre.buffer<2x256x64xf16>, !spyre.buffer<2x256x64xf16>) outs(%o : !spyre.buffer<2x256x64xf16>) scale = 0.125 causal {spyre.tile = array<i64: 128, 128, 48, 1>}
  spyre.return
}

// -----

spyre.kernel @attention_fold_flag(%q: !spyre.buffer<2x256x64xf16>, %o: !spyre.buffer<2x256x64xf16>) {
  // expected-error @+1 {{and optionally 1 to fold causal panels}}
  spyre.attention ins(%q, %q, %q : !spyre.buffer<2x256x64xf16>, !spyre.buffer<2x256x64xf16>, !spyre.buffer<2x256x64xf16>) outs(%o : !spyre.buffer<2x256x64xf16>) scale = 0.125 causal {spyre.tile = array<i64: 128, 128, 64, 2>}
  spyre.return
}
