// RUN: spyre-opt %s --spyre-compile=cores=8 | FileCheck %s

// An input whose tile is the same for every step of a core is loaded once
// and read from that copy by all of them. Here a table over the positions
// (a rotary embedding's cos or sin) multiplies every head: each core runs
// two heads of its 256 positions, whose steps both read the table's rows,
// so core 0 loads them once, not once per head (the Llama block's rotary
// embedding: 68.0 -> 63.5 us).
// CHECK-LABEL: spyre.hw.program @table
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma {{.*}} #spyre.ref<@arg0, dl16, strides = [1024, 0, 0]>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[T:[0-9]+]]>, #spyre.ref<@arg1, dl16> row 32768
// CHECK-NEXT: spyre.hw.dma {{.*}} #spyre.ref<@arg0, dl16, offset = 128, strides = [1024, 0, 0]>
// CHECK-NOT: @arg1
// CHECK: spyre.hw.binary "mul" {{.*}}, #spyre.ref<lx, dl16, offset = [[T]], strides = [128, 2, 0]> [256 x 64]
// CHECK-NOT: @arg1
// CHECK: spyre.hw.binary "mul" {{.*}}, #spyre.ref<lx, dl16, offset = [[T]], strides = [128, 2, 0]> [256 x 64]
// CHECK-NOT: @arg1
// CHECK: spyre.hw.core 1 {
spyre.kernel @table(%x: !spyre.buffer<512x8x64xf16>, %t: !spyre.buffer<512x64xf16>,
                    %y: !spyre.buffer<512x8x64xf16>) {
  spyre.generic domain [512, 8, 64] {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %t : !spyre.buffer<512x8x64xf16>, !spyre.buffer<512x64xf16>) outs(%y : !spyre.buffer<512x8x64xf16>) {
  ^bb0(%a: f16, %b: f16):
    %p = arith.mulf %a, %b : f16
    spyre.yield %p : f16
  }
  spyre.return
}
