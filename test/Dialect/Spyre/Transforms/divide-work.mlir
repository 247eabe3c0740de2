// RUN: spyre-opt %s -spyre-divide-work | FileCheck %s
// RUN: spyre-opt %s -spyre-divide-work="cores=4" | FileCheck %s --check-prefix=FOUR

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// All of the card's cores where there is enough work; no more cores than
// output rows for a reduction.
// CHECK-LABEL: spyre.kernel @work
// CHECK: spyre.generic domain [4096, 4096] {{.*}}spyre.cores = 32 : i64
// CHECK: spyre.generic domain [5, 100000] {{.*}}spyre.cores = 5 : i64
// CHECK: spyre.matmul {{.*}}spyre.cores = 32 : i64
// CHECK: spyre.gather {{.*}}spyre.cores = 3 : i64
// FOUR-LABEL: spyre.kernel @work
// FOUR: spyre.generic domain [4096, 4096] {{.*}}spyre.cores = 4 : i64
// FOUR: spyre.generic domain [5, 100000] {{.*}}spyre.cores = 4 : i64
spyre.kernel @work(%x: !spyre.buffer<4096x4096xf16>, %y: !spyre.buffer<4096x4096xf16>,
                   %r: !spyre.buffer<5x100000xf32>, %s: !spyre.buffer<5xf32>,
                   %t: !spyre.buffer<100x16xf16>, %i: !spyre.buffer<3xi32>,
                   %g: !spyre.buffer<3x16xf16>) {
  spyre.generic domain [4096, 4096] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4096x4096xf16>) outs(%y : !spyre.buffer<4096x4096xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.generic domain [5, 100000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%r : !spyre.buffer<5x100000xf32>) outs(%s : !spyre.buffer<5xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.matmul ins(%x, %x : !spyre.buffer<4096x4096xf16>, !spyre.buffer<4096x4096xf16>)
               outs(%y : !spyre.buffer<4096x4096xf16>)
  spyre.gather ins(%t, %i : !spyre.buffer<100x16xf16>, !spyre.buffer<3xi32>)
               outs(%g : !spyre.buffer<3x16xf16>) axis = 0
  spyre.return
}
