// RUN: spyre-opt %s --spyre-compile="stop-after=lower" | FileCheck %s

// A strided write (every other element: an interleave, a strided
// convolution's gradient spread on its input's grid) moves as runs over the
// gaps: a tile loads its runs of the output, the SFU writes its elements
// into them (4-byte column stride in LX) and the runs go back, the gaps as
// loaded. The second op writes the odd elements the first left alone.
// CHECK-LABEL: spyre.hw.program @interleave
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[IN:[0-9]+]]>, #spyre.ref<@arg0, dl16> row 256 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [254, 0, 0]>, #spyre.ref<@arg1, dl16, strides = [256, 0, 0]> row 254 x [2, 1, 1]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [254, 4, 0]>, #spyre.ref<lx, dl16, offset = [[IN]], strides = [128, 2, 0]> [2 x 64]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg1, dl16, strides = [256, 0, 0]>, #spyre.ref<lx, dl16, strides = [254, 0, 0]> row 254 x [2, 1, 1]
// CHECK-NEXT: spyre.hw.barrier
// CHECK-NEXT: spyre.hw.kernel 2
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[IN2:[0-9]+]]>, #spyre.ref<@arg0, dl16> row 256 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [254, 0, 0]>, #spyre.ref<@arg1, dl16, offset = 2, strides = [256, 0, 0]> row 254 x [2, 1, 1]
// CHECK-NEXT: spyre.hw.unary "neg" #spyre.ref<lx, dl16, strides = [254, 4, 0]>, #spyre.ref<lx, dl16, offset = [[IN2]], strides = [128, 2, 0]> [2 x 64]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg1, dl16, offset = 2, strides = [256, 0, 0]>, #spyre.ref<lx, dl16, strides = [254, 0, 0]> row 254 x [2, 1, 1]
// CHECK-NOT: spyre.hw.
// CHECK: spyre.hw.core 1 {

// Runs that would overlap another tile's (rows 3 elements apart, each
// reaching 127) are not rewritten: another core could store the gaps in
// between. The elements move one by one, and nothing loads the output.
// CHECK-LABEL: spyre.hw.program @overlapping_runs
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 256
// CHECK-NEXT: spyre.hw.unary "copy"
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg1, dl16, strides = [4, 6, 0]>, #spyre.ref<lx, dl16, offset = 512, strides = [2, 128, 0]> row 2 x [64, 2, 1]
// CHECK-NOT: spyre.hw.
// CHECK: spyre.hw.core 1 {
#x = affine_map<(d0, d1) -> (d0 * 64 + d1)>
#even = affine_map<(d0, d1) -> (d0 * 128 + d1 * 2)>
#odd = affine_map<(d0, d1) -> (d0 * 128 + d1 * 2 + 1)>
#overlap = affine_map<(d0, d1) -> (d0 * 3 + d1 * 2)>
spyre.kernel @interleave(%x: !spyre.buffer<4096xf16>, %y: !spyre.buffer<8192xf16>) {
  spyre.generic domain [64, 64] {indexing_maps = [#x, #even],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4096xf16>) outs(%y : !spyre.buffer<8192xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.generic domain [64, 64] {indexing_maps = [#x, #odd],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4096xf16>) outs(%y : !spyre.buffer<8192xf16>) {
  ^bb0(%a: f16):
    %n = arith.negf %a : f16
    spyre.yield %n : f16
  }
  spyre.return
}
spyre.kernel @overlapping_runs(%x: !spyre.buffer<4096xf16>, %y: !spyre.buffer<8192xf16>) {
  spyre.generic domain [64, 64] {indexing_maps = [#x, #overlap],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4096xf16>) outs(%y : !spyre.buffer<8192xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.return
}
