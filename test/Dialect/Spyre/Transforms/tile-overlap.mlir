// RUN: spyre-opt %s -split-input-file --spyre-compile=stop-after=tile | FileCheck %s

// 512 rows on 32 cores are 16 rows each, which fit LX as one tile. With
// enough SFU work per element (the cost model's estimate against the DMA
// latency of the extra transfers), each core's rows become two tiles, so
// that one tile's loads and stores overlap the other's SFU work.
// CHECK-LABEL: spyre.kernel @sfu_heavy
// CHECK: spyre.generic {{.*}}spyre.tile = array<i64: 8, 2048>
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @sfu_heavy(%x: !spyre.buffer<512x2048xf16>, %y: !spyre.buffer<512x2048xf16>) {
  spyre.generic domain [512, 2048] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<512x2048xf16>) outs(%y : !spyre.buffer<512x2048xf16>) {
  ^bb0(%v: f16):
    %w = arith.extf %v : f16 to f32
    %e = math.exp %w : f32
    %s = arith.mulf %e, %w : f32
    %t = math.tanh %s : f32
    %u = arith.addf %t, %w : f32
    %r = arith.truncf %u : f32 to f16
    spyre.yield %r : f16
  }
  spyre.return
}

// -----

// A small copy is all transfers: a second tile per core would only add their
// latency, so each core keeps its 2 rows as one tile (6.37 us; 6.50 as two).
// CHECK-LABEL: spyre.kernel @transfers_only
// CHECK: spyre.generic {{.*}}spyre.tile = array<i64: 2, 2048>
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @transfers_only(%x: !spyre.buffer<64x2048xf16>, %y: !spyre.buffer<64x2048xf16>) {
  spyre.generic domain [64, 2048] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64x2048xf16>) outs(%y : !spyre.buffer<64x2048xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

// A larger copy: two tiles per core let one's store flow beside the
// other's load on the core's DMA engine (16 rows in one tile: 43.9 us; two
// tiles of 8: 41.5).
// CHECK-LABEL: spyre.kernel @copy_beside
// CHECK: spyre.generic {{.*}}spyre.tile = array<i64: 8, 2048>
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @copy_beside(%x: !spyre.buffer<512x2048xf16>, %y: !spyre.buffer<512x2048xf16>) {
  spyre.generic domain [512, 2048] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<512x2048xf16>) outs(%y : !spyre.buffer<512x2048xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

// An RMSNorm (sum of squares, then the scaled row) is one fused group over
// the rows; its members' SFU work together decides: four tiles per core, as
// a quarter of it is more than the latencies of two tiles' transfers.
// CHECK-LABEL: spyre.kernel @rms_norm
// CHECK: spyre.fused {{.*}}spyre.tile = array<i64: 4, 2048>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
spyre.kernel @rms_norm(%x: !spyre.buffer<512x2048xf16>, %g: !spyre.buffer<2048xf16>,
                       %y: !spyre.buffer<512x2048xf16>) {
  %sq = spyre.alloc() : !spyre.buffer<512xf32>
  spyre.generic domain [512, 2048] {combiners = [#spyre.combiner<sum>], indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<512x2048xf16>) outs(%sq : !spyre.buffer<512xf32>) {
  ^bb0(%v: f16):
    %w = arith.extf %v : f16 to f32
    %s = arith.mulf %w, %w : f32
    spyre.yield %s : f32
  }
  spyre.generic domain [512, 2048] {indexing_maps = [#col, #id, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%g, %x, %sq : !spyre.buffer<2048xf16>, !spyre.buffer<512x2048xf16>, !spyre.buffer<512xf32>)
      outs(%y : !spyre.buffer<512x2048xf16>) {
  ^bb0(%a: f16, %b: f16, %ss: f32):
    %ga = arith.extf %a : f16 to f32
    %xb = arith.extf %b : f16 to f32
    %n = arith.constant 2.048000e+03 : f32
    %m = arith.divf %ss, %n : f32
    %eps = arith.constant 9.99999997E-7 : f32
    %me = arith.addf %m, %eps : f32
    %r = math.rsqrt %me : f32
    %xr = arith.mulf %xb, %r : f32
    %o = arith.mulf %ga, %xr : f32
    %t = arith.truncf %o : f32 to f16
    spyre.yield %t : f16
  }
  spyre.return
}

// -----

// A flat domain (Inductor's pointwise kernels over contiguous tensors) has
// no row loop: its one loop is cut the same way, 1M elements in 64 tiles.
// CHECK-LABEL: spyre.kernel @flat
// CHECK: spyre.generic {{.*}}spyre.tile = array<i64: 16384>
#flat = affine_map<(d0) -> (d0)>
spyre.kernel @flat(%x: !spyre.buffer<1048576xf16>, %y: !spyre.buffer<1048576xf16>) {
  spyre.generic domain [1048576] {indexing_maps = [#flat, #flat],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<1048576xf16>) outs(%y : !spyre.buffer<1048576xf16>) {
  ^bb0(%v: f16):
    %w = arith.extf %v : f16 to f32
    %e = math.exp %w : f32
    %s = arith.mulf %e, %w : f32
    %t = math.tanh %s : f32
    %r = arith.truncf %t : f32 to f16
    spyre.yield %r : f16
  }
  spyre.return
}

// -----

// A bias and causal mask built from indices (BLOOM's ALiBi, 8 heads of 512 x
// 512): nothing to load, so four tiles a core, each one's store beside the
// next one's SFU work (the kernel 90.6 -> 83.8 us in BLOOM's layer; as two
// tiles the first one's SFU work and the last one's store ran alone).
// CHECK-LABEL: spyre.kernel @built_from_indices
// CHECK: spyre.generic {{.*}}spyre.tile = array<i64: 1, 32, 512>
#bias = affine_map<(d0, d1, d2) -> (d0 * 262144 + d1 * 512 + d2)>
#head = affine_map<(d0, d1, d2) -> (d0)>
#key = affine_map<(d0, d1, d2) -> (d2)>
#query = affine_map<(d0, d1, d2) -> (d1)>
spyre.kernel @built_from_indices(%y: !spyre.buffer<2097152xf16>) {
  spyre.generic domain [8, 512, 512] {indexing_maps = [#bias],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      outs(%y : !spyre.buffer<2097152xf16>) {
    %lo = arith.constant -6.550400e+04 : f32
    %zero = arith.constant 0.000000e+00 : f32
    %half = arith.constant 5.000000e-01 : f32
    %h = spyre.index_expr #head : i32
    %hf = arith.sitofp %h : i32 to f32
    %slope = math.powf %half, %hf : f32
    %k = spyre.index_expr #key : i32
    %kf = arith.sitofp %k : i32 to f32
    %b = arith.mulf %slope, %kf : f32
    %q = spyre.index_expr #query : i32
    %seen = arith.cmpi sle, %k, %q : i32
    %m = arith.select %seen, %zero, %lo : f32
    %s = arith.addf %b, %m : f32
    %r = arith.truncf %s : f32 to f16
    spyre.yield %r : f16
  }
  spyre.return
}
