// RUN: spyre-opt %s -spyre-divide-work -spyre-tile | FileCheck %s

// A reduction over a tensor's rows (x.sum(0)) reads its input along the row
// loop, and its reduced loop is not split among cores: tiles of whole sticks
// give fewer tiles than cores, tiles narrower than a stick pad every device
// row. The tile is the one the estimate (bus with padding, the DMA ports and
// the SFU work of the cores with a tile) finds faster.
// 8192 x 1024: 16 cores reading whole sticks (16 f16 wide tiles on 32 cores
// would move four times the bytes).
// CHECK-LABEL: spyre.kernel @column_sums
// CHECK: spyre.generic domain [1024, 8192] {{.*}}spyre.tile = array<i64: 64,
// 65536 x 64: one core (32 cores would each read two elements of every stick).
// CHECK: spyre.generic domain [64, 65536] {{.*}}spyre.tile = array<i64: 64,
// 2048 x 8192: whole sticks already give every core a tile.
// CHECK: spyre.generic domain [8192, 2048] {{.*}}spyre.tile = array<i64: 128, 2048>
#t = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>
spyre.kernel @column_sums(%a: !spyre.buffer<8192x1024xf16>, %b: !spyre.buffer<1024xf16>,
                          %c: !spyre.buffer<65536x64xf16>, %d: !spyre.buffer<64xf16>,
                          %e: !spyre.buffer<2048x8192xf16>, %f: !spyre.buffer<8192xf16>) {
  spyre.generic domain [1024, 8192] {indexing_maps = [#t, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%a : !spyre.buffer<8192x1024xf16>) outs(%b : !spyre.buffer<1024xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [64, 65536] {indexing_maps = [#t, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%c : !spyre.buffer<65536x64xf16>) outs(%d : !spyre.buffer<64xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [8192, 2048] {indexing_maps = [#t, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%e : !spyre.buffer<2048x8192xf16>) outs(%f : !spyre.buffer<8192xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}
