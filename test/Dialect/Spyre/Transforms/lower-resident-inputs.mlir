// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// Inputs that read the same elements in every tile (a broadcast scalar, a
// row of per-column values) are loaded once per core into one copy of their
// slot; the input that changes per tile is loaded for every tile, into
// alternating copies. Eight tiles of 8 x 256: x eight times, s and v once.
// CHECK-LABEL: spyre.hw.program @resident_inputs
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 4096 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[S:[0-9]+]], {{.*}}>, #spyre.ref<@arg1, dl16>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[V:[0-9]+]], {{.*}}>, #spyre.ref<@arg2, dl16>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[X1:[0-9]+]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 4096>
// CHECK: spyre.hw.binary "mul" {{.*}}, #spyre.ref<lx, dl16, offset = [[S]]>
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = [[V]], strides = [0, 2, 0]>
// CHECK-NOT: @arg1, dl16>
// CHECK-NOT: @arg2, dl16>
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16, offset = 8192>
// CHECK-NOT: @arg1, dl16>
// CHECK-NOT: @arg2, dl16>
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[X1]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 12288>
// CHECK-NOT: @arg1, dl16>
// CHECK-NOT: @arg2, dl16>
// CHECK: spyre.hw.binary "mul" {{.*}}, #spyre.ref<lx, dl16, offset = [[S]]>
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 28672>
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @resident_inputs(%x: !spyre.buffer<64x256xf16>, %s: !spyre.buffer<1xf16>,
                              %v: !spyre.buffer<256xf16>, %y: !spyre.buffer<64x256xf16>) {
  spyre.generic domain [64, 256] {indexing_maps = [#id, affine_map<(d0, d1) -> (0)>,
      affine_map<(d0, d1) -> (d1)>, #id], spyre.tile = array<i64: 8, 256>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %s, %v : !spyre.buffer<64x256xf16>, !spyre.buffer<1xf16>, !spyre.buffer<256xf16>)
      outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %0 = arith.mulf %a, %b : f16
    %1 = arith.addf %0, %c : f16
    spyre.yield %1 : f16
  }
  spyre.return
}
