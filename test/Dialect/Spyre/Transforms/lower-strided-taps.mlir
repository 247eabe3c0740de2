// RUN: spyre-opt %s --spyre-compile="stop-after=lower" | FileCheck %s

// A strided 1-D convolution's taps (im2col: tap d1 of output d2 reads
// input element 2 * d2 + d1 of its channel's row) read each channel's row
// as one run, 127 * 2 + 3 elements, which the SFU reads with a row stride of
// one element (the taps overlap the next columns) and a column stride of
// two. Column by column, each output position's 3 taps cost a stick. A
// core's tile holds its two channels (the plane loop d0 continues the
// output past a channel's 3 x 128 block): a run per channel, one transfer.
// CHECK-LABEL: spyre.hw.program @strided_taps
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[TAPS:[0-9]+]], strides = [0, 514, 0]>, #spyre.ref<@arg0, dl16, strides = [0, 516, 0]> row 514 x [1, 2, 1]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [256, 2, 0]>, #spyre.ref<lx, dl16, offset = [[TAPS]], strides = [2, 4, 0]> [3 x 128]
// CHECK: spyre.hw.dma #spyre.ref<@arg1, dl16, strides = [0, 768, 0]>, #spyre.ref<lx, dl16, strides = [0, 768, 0]> row 768 x [1, 2, 1]
#in = affine_map<(d0, d1, d2) -> (d0 * 258 + d1 + d2 * 2)>
#out = affine_map<(d0, d1, d2) -> (d0 * 384 + d1 * 128 + d2)>
spyre.kernel @strided_taps(%x: !spyre.buffer<16512xf16>, %y: !spyre.buffer<24576xf16>) {
  spyre.generic domain [64, 3, 128] {indexing_maps = [#in, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<16512xf16>) outs(%y : !spyre.buffer<24576xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}
