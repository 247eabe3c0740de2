// RUN: spyre-opt %s -split-input-file -spyre-divide-work -spyre-tile | FileCheck %s

// The row loop of a generic's tile is the parallel loop its output is
// densest along, unless another gives far fewer tiles per core. A rotary
// embedding written into a key cache (heads x positions x two halves x 32):
// the halves (stride 32) continue each 32-element row, so they are the
// tile's plane loop (tile-planes.mlir), and the positions (stride 64) are
// its rows: 9 positions of both halves, one tile per core.
// CHECK-LABEL: spyre.kernel @rotary_halves
// CHECK: spyre.generic domain [4, 67, 2, 32] {{.*}}spyre.tile = array<i64: 1, 9, 2, 32>
#out = affine_map<(d0, d1, d2, d3) -> (d0 * 4288 + d1 * 64 + d2 * 32 + d3)>
spyre.kernel @rotary_halves(%x: !spyre.buffer<17152xf16>, %f: !spyre.buffer<32xf16>,
                            %y: !spyre.buffer<17152xf16>) {
  spyre.generic domain [4, 67, 2, 32] {indexing_maps = [#out,
      affine_map<(d0, d1, d2, d3) -> (d3)>, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %f : !spyre.buffer<17152xf16>, !spyre.buffer<32xf16>)
      outs(%y : !spyre.buffer<17152xf16>) {
  ^bb0(%a: f16, %b: f16):
    %0 = arith.mulf %a, %b : f16
    spyre.yield %0 : f16
  }
  spyre.return
}

// -----

// When the densest loop gives about as few tiles, it stays: rows of a
// contiguous [8, 64, 64] tensor are tiled along the middle loop.
// CHECK-LABEL: spyre.kernel @dense_rows
// CHECK: spyre.generic domain [8, 64, 64] {{.*}}spyre.tile = array<i64: 1, {{[0-9]+}}, 64>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
spyre.kernel @dense_rows(%x: !spyre.buffer<8x64x64xf16>, %y: !spyre.buffer<8x64x64xf16>) {
  spyre.generic domain [8, 64, 64] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64x64xf16>) outs(%y : !spyre.buffer<8x64x64xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.return
}

// -----

// A maximum over a few mask units of channel-last rows (Hiera's mask unit
// attention: 2 x 784 positions x 128 channels, 4 units): the channels are
// the densest row loop and the input runs along them. The positions would
// give fewer tiles per core, but along them the input moved element by
// element, a stick per f16 (1.01M -> 41k cycles kept on the channels).
// CHECK-LABEL: spyre.kernel @channel_last_max
// CHECK: spyre.generic domain [2, 784, 128, 4] {{.*}}spyre.tile = array<i64: 1, 1, 128, 4>
spyre.kernel @channel_last_max(%x: !spyre.buffer<802816xf16>, %y: !spyre.buffer<200704xf16>) {
  spyre.generic domain [2, 784, 128, 4] {combiners = [#spyre.combiner<max>],
      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0 * 401408 + d1 * 128 + d2 + d3 * 100352)>,
                       affine_map<(d0, d1, d2, d3) -> (d0 * 100352 + d1 * 128 + d2)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<802816xf16>) outs(%y : !spyre.buffer<200704xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.return
}

// -----

// Too few rows for the cores: two rows of 32000 (a sampling step's scores
// for two sequences) are cut along their columns too, in whole sticks,
// when a tile's vector work outlasts the transfer latencies more tiles pay;
// two rows of 2048 (a decode step's hidden states) stay whole.
// CHECK-LABEL: spyre.kernel @few_long_rows
// CHECK: spyre.generic domain [2, 32000] {{.*}}spyre.tile = array<i64: 1, 2048>
// CHECK: spyre.generic domain [2, 2048] {{.*}}spyre.tile = array<i64: 1, 2048>
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @few_long_rows(%x: !spyre.buffer<2x32000xf32>, %y: !spyre.buffer<2x32000xf32>,
                            %a: !spyre.buffer<2x2048xf32>, %b: !spyre.buffer<2x2048xf32>) {
  spyre.generic domain [2, 32000] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<2x32000xf32>) outs(%y : !spyre.buffer<2x32000xf32>) {
  ^bb0(%v: f32):
    %l = math.log %v : f32
    %n = arith.negf %l : f32
    %m = arith.mulf %n, %v : f32
    spyre.yield %m : f32
  }
  spyre.generic domain [2, 2048] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<2x2048xf32>) outs(%b : !spyre.buffer<2x2048xf32>) {
  ^bb0(%v: f32):
    %l = math.log %v : f32
    %n = arith.negf %l : f32
    %m = arith.mulf %n, %v : f32
    spyre.yield %m : f32
  }
  spyre.return
}
