// RUN: spyre-opt %s -spyre-divide-work -spyre-tile | FileCheck %s

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A group over [4, 512, 64] whose tiles take the 64 columns whole: the
// other loops give 4 tiles, so the 512 rows are cut until every core has
// one (the columns' 64 points are not 64 tiles: 512-row tiles would leave
// 28 of the 32 cores idle).
// CHECK-LABEL: spyre.kernel @rows_shared_among_cores
// CHECK: spyre.fused
// CHECK-SAME: spyre.tile = array<i64: 1, 64, 64>
spyre.kernel @rows_shared_among_cores(%x: !spyre.buffer<4x512x64xf16>, %y: !spyre.buffer<4x512x64xf16>, %z: !spyre.buffer<4x512x64xf16>) {
  spyre.fused {
    spyre.generic domain [4, 512, 64] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%x : !spyre.buffer<4x512x64xf16>) outs(%y : !spyre.buffer<4x512x64xf16>) {
    ^bb0(%v: f16):
      %n = arith.negf %v : f16
      spyre.yield %n : f16
    }
    spyre.generic domain [4, 512, 64] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%x : !spyre.buffer<4x512x64xf16>) outs(%z : !spyre.buffer<4x512x64xf16>) {
    ^bb0(%v: f16):
      %a = arith.addf %v, %v : f16
      spyre.yield %a : f16
    }
  }
  spyre.return
}

#lnx = affine_map<(d0, d1) -> (d0 * 512 + d1)>
#lnr = affine_map<(d0, d1) -> (d0)>
#lnc = affine_map<(d0, d1) -> (d1)>

// A LayerNorm of 512 x 512 f16 on 32 cores: its 16 rows a core go in four
// tiles, so that a tile's load and store overlap another's vector work.
// Its transfers are x's load and y's store (and the gains'); counted as if
// every member loaded and stored its own operands (12 transfers), the
// latencies of a second tile looked dearer than the overlap, and the load,
// the vector work and the store ran one after the other (GPT-2's first
// LayerNorm kernel, with the embeddings' sum: 33.4 -> 25.8 us).
// CHECK-LABEL: spyre.kernel @layer_norm_tiles
// CHECK: spyre.fused
// CHECK-SAME: spyre.tile = array<i64: 4, 512>
spyre.kernel @layer_norm_tiles(%x: !spyre.buffer<262144xf16>, %g: !spyre.buffer<512xf16>,
                               %b: !spyre.buffer<512xf16>, %y: !spyre.buffer<262144xf16>) {
  spyre.fused {
    %sum = spyre.alloc() : !spyre.buffer<512xf32>
    %var = spyre.alloc() : !spyre.buffer<512xf32>
    spyre.generic domain [512, 512] {combiners = [#spyre.combiner<sum>], indexing_maps = [#lnx, #lnr], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
        ins(%x : !spyre.buffer<262144xf16>) outs(%sum : !spyre.buffer<512xf32>) {
    ^bb0(%e: f16):
      %w = arith.extf %e : f16 to f32
      spyre.yield %w : f32
    }
    spyre.generic domain [512, 512] {combiners = [#spyre.combiner<sum>], indexing_maps = [#lnr, #lnx, #lnr], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
        ins(%sum, %x : !spyre.buffer<512xf32>, !spyre.buffer<262144xf16>) outs(%var : !spyre.buffer<512xf32>) {
    ^bb0(%s: f32, %e: f16):
      %n = arith.constant 5.120000e+02 : f32
      %m = arith.divf %s, %n : f32
      %w = arith.extf %e : f16 to f32
      %d = arith.subf %w, %m : f32
      %q = arith.mulf %d, %d : f32
      spyre.yield %q : f32
    }
    spyre.generic domain [512, 512] {indexing_maps = [#lnr, #lnc, #lnc, #lnr, #lnx, #lnx], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%var, %g, %b, %sum, %x : !spyre.buffer<512xf32>, !spyre.buffer<512xf16>, !spyre.buffer<512xf16>, !spyre.buffer<512xf32>, !spyre.buffer<262144xf16>) outs(%y : !spyre.buffer<262144xf16>) {
    ^bb0(%v: f32, %gg: f16, %bb: f16, %s: f32, %e: f16):
      %n = arith.constant 5.120000e+02 : f32
      %eps = arith.constant 9.99999974E-6 : f32
      %m = arith.divf %s, %n : f32
      %w = arith.extf %e : f16 to f32
      %d = arith.subf %w, %m : f32
      %vn = arith.divf %v, %n : f32
      %ve = arith.addf %vn, %eps : f32
      %rs = math.rsqrt %ve : f32
      %t = arith.mulf %d, %rs : f32
      %g32 = arith.extf %gg : f16 to f32
      %b32 = arith.extf %bb : f16 to f32
      %tg = arith.mulf %t, %g32 : f32
      %o = arith.addf %tg, %b32 : f32
      %h = arith.truncf %o : f32 to f16
      spyre.yield %h : f16
    }
  }
  spyre.return
}
