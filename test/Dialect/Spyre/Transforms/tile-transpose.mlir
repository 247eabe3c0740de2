// RUN: spyre-opt %s -spyre-divide-work -spyre-tile | FileCheck %s

// A transpose reads its input along the row loop: row tiles are whole
// sticks (64 f16) so that no device row is padded, and the cols are split
// to give all 32 cores two tiles each, one's store flowing beside the
// other's load (1024 x 1024: 43.9 us in one tile of 64 x 512 per core, 41.5
// in two of 64 x 256). A tensor too small to give every core a whole
// stick runs on fewer cores when its padded rows would move more than the
// bus can in that time: 64 x 32 on one core (plain tiles of 2 rows would
// move 32 times its bytes).
// CHECK-LABEL: spyre.kernel @transposes
// CHECK: spyre.generic domain [1024, 1024] {{.*}}spyre.tile = array<i64: 64, 256>
// CHECK: spyre.generic domain [64, 32] {{.*}}spyre.tile = array<i64: 64, 32>
// The input's rows run along the cols here: nothing to align; two tiles per
// core too (43.9 -> 41.5 us).
// CHECK: spyre.generic domain [1024, 1024] {{.*}}spyre.tile = array<i64: 16, 1024>
// A tall, narrow input (8192 x 64): one stick of rows, its cols split into
// 64 pieces of 128, two per core (they were cut into 8, for 8 cores, then
// 32 of 256: 22.5 us against 21.5 now).
// CHECK: spyre.generic domain [64, 8192] {{.*}}spyre.tile = array<i64: 64, 128>
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @transposes(%a: !spyre.buffer<1024x1024xf16>, %b: !spyre.buffer<1024x1024xf16>,
                         %c: !spyre.buffer<32x64xf16>, %d: !spyre.buffer<64x32xf16>,
                         %e: !spyre.buffer<1024x1024xf16>,
                         %f: !spyre.buffer<8192x64xf16>, %g: !spyre.buffer<64x8192xf16>) {
  spyre.generic domain [1024, 1024] {indexing_maps = [#t, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<1024x1024xf16>) outs(%b : !spyre.buffer<1024x1024xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [64, 32] {indexing_maps = [#t, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%c : !spyre.buffer<32x64xf16>) outs(%d : !spyre.buffer<64x32xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [1024, 1024] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<1024x1024xf16>) outs(%e : !spyre.buffer<1024x1024xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [64, 8192] {indexing_maps = [#t, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%f : !spyre.buffer<8192x64xf16>) outs(%g : !spyre.buffer<64x8192xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}
