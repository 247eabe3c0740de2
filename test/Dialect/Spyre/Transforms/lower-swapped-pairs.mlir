// RUN: spyre-opt %s --spyre-compile="stop-after=lower" | FileCheck %s

// An input that reads each pair of elements the other way round (GPT-J's
// rotate_every_two, x[2j + 1 - k]) reads the straight input's run with a
// negative column stride, from each pair's second element: one load of the
// row, not a stick per element (GPT-J's 512-token rotary kernel 193.0 ->
// 88.9 us).
// CHECK-LABEL: spyre.hw.program @pairs
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 1024 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.binary "sub" {{.*}}, #spyre.ref<lx, dl16, strides = [64, 2, 0]>, #spyre.ref<lx, dl16, offset = 2, strides = [64, -2, 0]> [16 x 2]
// CHECK-NEXT: spyre.hw.binary "sub" {{.*}}, #spyre.ref<lx, dl16, offset = 4, strides = [64, 2, 0]>, #spyre.ref<lx, dl16, offset = 6, strides = [64, -2, 0]> [16 x 2]
#straight = affine_map<(d0, d1, d2) -> (d0 * 32 + d1 * 2 + d2)>
#swapped = affine_map<(d0, d1, d2) -> (d0 * 32 + d1 * 2 - d2 + 1)>
spyre.kernel @pairs(%x: !spyre.buffer<16384xf16>, %y: !spyre.buffer<16384xf16>) {
  spyre.generic domain [512, 16, 2] {indexing_maps = [#straight, #swapped, #straight],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %x : !spyre.buffer<16384xf16>, !spyre.buffer<16384xf16>) outs(%y : !spyre.buffer<16384xf16>) {
  ^bb0(%a: f16, %b: f16):
    %s = arith.subf %a, %b : f16
    spyre.yield %s : f16
  }
  spyre.return
}
