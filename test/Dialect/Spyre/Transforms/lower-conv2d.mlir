// RUN: spyre-opt %s -split-input-file --spyre-compile=start-before=plan-memory | FileCheck %s

// Each tap's own product (the tile's third size 0), on tiles set here;
// lower-conv2d-gathered.mlir has the taps gathered into one product.

// A 3x3 convolution, padding 1, on 4x4 images of 2 channels: each core takes
// a band of 2 output rows. Its 4 input rows (2 channels, 48 bytes apart) sit
// in LX at the padded width of 6 (12 bytes a row), between zero columns
// filled once; the row above the image (core 0) or below it (core 1) is
// zeroed. The weights arrive as PyTorch stores them (3 x 2 x 3 x 3) and
// the SFU copies each tap's 3x2 matrix out of them (every 9th element, 18
// bytes apart; rows 36 bytes apart). Tap (i, j) multiplies it with the
// rows shifted by i * 6 + j elements; the 10-element run covers the band's 2
// output rows of 4 (the 2 positions between them are dropped on store). The
// bias is added while the f32 sums are narrowed in place.
// CHECK-LABEL: spyre.hw.program @conv
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#WT:]]>, #spyre.ref<@arg1, dl16> row 108 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#B:]]>, #spyre.ref<@arg2, dl16> row 6 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#ROW1:]], strides = [12, 48, 0]>, #spyre.ref<@arg0, dl16, strides = [8, 32, 0]> row 8 x [3, 2, 1]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#W:]], strides = [4, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#WT]], strides = [36, 18, 0]> [3 x 2]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#W+12]], strides = [4, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#WT+2]], strides = [36, 18, 0]> [3 x 2]
// CHECK-COUNT-7: spyre.hw.unary "copy"
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#ROW1-14]], strides = [12, 2, 0]>, 0.000000e+00 [8 x 1]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#ROW1-4]], strides = [12, 2, 0]>, 0.000000e+00 [8 x 1]
// CHECK: spyre.hw.fill {{.*}} [8 x 1]
// CHECK: spyre.hw.fill {{.*}} [8 x 1]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#ROW1-14]], strides = [48, 2, 0]>, 0.000000e+00 [2 x 6]
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, strides = [40, 0, 0]> = #spyre.ref<lx, dl16, offset = [[#W]], strides = [4, 0, 0]> x #spyre.ref<lx, dl16, offset = [[#ROW1-14]], strides = [48, 0, 0]> m 3 k 2 n 10 {
// CHECK-NOT: accumulate
// CHECK-SAME: }
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#W+12]], strides = [4, 0, 0]> x #spyre.ref<lx, dl16, offset = [[#ROW1-12]], strides = [48, 0, 0]> m 3 k 2 n 10 {accumulate,
// CHECK: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = [[#ROW1-10]], {{.*}} {accumulate,
// CHECK: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = [[#ROW1-2]], {{.*}} {accumulate,
// CHECK: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = [[#ROW1]], {{.*}} {accumulate,
// CHECK: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = [[#ROW1+2]], {{.*}} {accumulate,
// CHECK: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = [[#ROW1+10]], {{.*}} {accumulate,
// CHECK: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = [[#ROW1+12]], {{.*}} {accumulate,
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#W+96]], strides = [4, 0, 0]> x #spyre.ref<lx, dl16, offset = [[#ROW1+14]], {{.*}} {accumulate
// CHECK-NOT: spyre.hw.matmul
// CHECK: spyre.hw.binary "add" #spyre.ref<lx, dl16, strides = [20, 2, 0]>, #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, dl16, offset = [[#B]], strides = [2, 0, 0]> [3 x 10]
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, strides = [8, 32, 0]>, #spyre.ref<lx, dl16, strides = [12, 20, 0]> row 8 x [2, 3, 1]
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#ROW1-12]], strides = [12, 48, 0]>, #spyre.ref<@arg0, dl16, offset = 8, strides = [8, 32, 0]> row 8 x [3, 2, 1]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#ROW1+22]], strides = [48, 2, 0]>, 0.000000e+00 [2 x 6]
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 16, strides = [8, 32, 0]>, {{.*}} row 8 x [2, 3, 1]
spyre.kernel @conv(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                   %b: !spyre.buffer<3xf16>, %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1]
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 2, 3, 0>}
  spyre.return
}

// -----

// A 1x1 convolution: no padding columns, so each channel's rows are one run
// in device memory and in LX (one 32-byte row per channel, not one per image
// row), the weights are the tap's matrix as loaded (no copy), and no
// position is dropped, so each output channel's rows are stored as one run.
// The one unit goes to core 0.
// CHECK-LABEL: spyre.hw.program @pointwise
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#W:]]>, #spyre.ref<@arg1, dl16> row 12 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#IN:]]>, #spyre.ref<@arg0, dl16> row 64 x [1, 1, 1]
// CHECK-NOT: spyre.hw.unary
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, strides = [64, 0, 0]> = #spyre.ref<lx, dl16, offset = [[#W]], strides = [4, 0, 0]> x #spyre.ref<lx, dl16, offset = [[#IN]], strides = [32, 0, 0]> m 3 k 2 n 16
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [32, 2, 0]>, #spyre.ref<lx, f32, strides = [64, 4, 0]> [3 x 16]
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16>, #spyre.ref<lx, dl16> row 96 x [1, 1, 1]
// CHECK: spyre.hw.core 1 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: }
spyre.kernel @pointwise(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x1x1xf16>,
                        %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x1x1xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [0, 0] dilation = [1, 1]
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 4, 3, 0>}
  spyre.return
}

// -----

// relu(conv + bias + residual): the residual band loads with the step, laid
// out as the accumulator's rows (6 elements apart, 20 between channels).
// The bias enters the first tap's product: the SFU copies it into a third
// column of the taps' weights (rows of 3, 6 bytes apart), and fills a third
// channel of ones after the input rows of both copies (the channel's 24
// elements, 96 and 240 bytes in), so the first product has K = 3. Only the
// residual is then added in f32, and the ReLU writes the 16-bit result.
// CHECK-LABEL: spyre.hw.program @residual_relu
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#B:]]>, #spyre.ref<@arg2, dl16> row 6 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#RES:]], strides = [12, 20, 0]>, #spyre.ref<@arg3, dl16, strides = [8, 32, 0]> row 8 x [2, 3, 1]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS:]], strides = [6, 2, 0]>
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS+4]], strides = [6, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#B]], strides = [2, 2, 0]> [3 x 1]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = 96, strides = [48, 2, 0]>, 1.000000e+00 [1 x 24]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 240, strides = [48, 2, 0]>, 1.000000e+00 [1 x 24]
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [6, 0, 0]> x #spyre.ref<lx, dl16, strides = [48, 0, 0]> m 3 k 3 n 10
// CHECK-COUNT-8: spyre.hw.matmul {{.*}} k 2 n 10 {accumulate
// CHECK-NEXT: spyre.hw.binary "add" #spyre.ref<lx, f32, offset = [[ACC:[0-9]+]], strides = [40, 4, 0]>, #spyre.ref<lx, f32, offset = [[ACC]], strides = [40, 4, 0]>, #spyre.ref<lx, dl16, offset = [[#RES]], strides = [20, 2, 0]> [3 x 10]
// CHECK-NEXT: spyre.hw.unary "relu" #spyre.ref<lx, dl16, offset = [[ACC]], strides = [20, 2, 0]>, #spyre.ref<lx, f32, offset = [[ACC]], strides = [40, 4, 0]> [3 x 10]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg4, dl16, strides = [8, 32, 0]>
spyre.kernel @residual_relu(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                            %b: !spyre.buffer<3xf16>, %r: !spyre.buffer<1x3x4x4xf16>,
                            %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf16>)
      residual(%r : !spyre.buffer<1x3x4x4xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1] relu
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 2, 3, 0>}
  spyre.return
}

// -----

// Two groups: the dense weight is block diagonal. The SFU zeroes the taps
// (9 taps x 6 output channels, rows of 4 input channels), then copies row r
// of both groups' blocks per tap: output channels r and 3 + r, whose rows
// lie (3 * 4 + 2) elements apart, from rows 3 x 2 x 9 elements apart in the
// loaded weights.
// CHECK-LABEL: spyre.hw.program @grouped
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#TAPS:]], strides = [8, 2, 0]>, 0.000000e+00 [54 x 4]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [28, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W:]], strides = [108, 18, 0]> [2 x 2]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS+8]], strides = [28, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W+36]], strides = [108, 18, 0]> [2 x 2]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS+16]], strides = [28, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W+72]], strides = [108, 18, 0]> [2 x 2]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS+48]], strides = [28, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W+2]], strides = [108, 18, 0]> [2 x 2]
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [8, 0, 0]> x {{.*}} m 6 k 4
spyre.kernel @grouped(%x: !spyre.buffer<1x4x4x4xf16>, %w: !spyre.buffer<6x2x3x3xf16>,
                      %y: !spyre.buffer<1x6x4x4xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x4x4x4xf16>, !spyre.buffer<6x2x3x3xf16>)
      outs(%y : !spyre.buffer<1x6x4x4xf16>) padding = [1, 1] dilation = [1, 1] groups = 2
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 2, 6, 0>}
  spyre.return
}

// -----

// relu(scale * conv + bias), an inference BatchNorm folded in, its scale
// and bias in f32: the scale loads after the bias, in the same slot (12
// bytes after it), and the bias stays out of the product (it is added after
// the scale): the first tap's product has K = 2, no channel of ones. The
// f32 sums are multiplied by each channel's scale, the bias is added, and
// the ReLU writes the 16-bit result.
// CHECK-LABEL: spyre.hw.program @scale_bias_relu
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, f32, offset = [[#B:]]>, #spyre.ref<@arg2, f32> row 12 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, f32, offset = [[#B+12]]>, #spyre.ref<@arg3, f32> row 12 x [1, 1, 1]
// CHECK-NOT: spyre.hw.fill {{.*}} 1.000000e+00
// CHECK: spyre.hw.matmul {{.*}} m 3 k 2 n 10 {signal_sem
// CHECK-COUNT-8: spyre.hw.matmul {{.*}} k 2 n 10 {accumulate
// CHECK-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, f32, offset = [[#B+12]], strides = [4, 0, 0]> [3 x 10]
// CHECK-NEXT: spyre.hw.binary "add" #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, f32, offset = [[#B]], strides = [4, 0, 0]> [3 x 10]
// CHECK-NEXT: spyre.hw.unary "relu" #spyre.ref<lx, dl16, strides = [20, 2, 0]>, #spyre.ref<lx, f32, strides = [40, 4, 0]> [3 x 10]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg4, dl16, strides = [8, 32, 0]>
spyre.kernel @scale_bias_relu(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                              %b: !spyre.buffer<3xf32>, %s: !spyre.buffer<3xf32>,
                              %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf32>)
      scale(%s : !spyre.buffer<3xf32>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1] relu
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 2, 3, 0>}
  spyre.return
}

// -----

// ReLU6 (relu relu_max = 6.0, as a MobileNet's depthwise layers end): the
// ReLU keeps the f32 sums and the minimum with 6 writes the 16-bit result.
// CHECK-LABEL: spyre.hw.program @scale_bias_relu6
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.binary "add" #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [4, 0, 0]> [3 x 10]
// CHECK-NEXT: spyre.hw.unary "relu" #spyre.ref<lx, f32, strides = [40, 4, 0]>, #spyre.ref<lx, f32, strides = [40, 4, 0]> [3 x 10]
// CHECK-NEXT: spyre.hw.binary "min" #spyre.ref<lx, dl16, strides = [20, 2, 0]>, #spyre.ref<lx, f32, strides = [40, 4, 0]> imm 6.000000e+00 [3 x 10]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg4, dl16, strides = [8, 32, 0]>
spyre.kernel @scale_bias_relu6(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                               %b: !spyre.buffer<3xf32>, %s: !spyre.buffer<3xf32>,
                               %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf32>)
      scale(%s : !spyre.buffer<3xf32>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1] relu relu_max = 6.0
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 2, 3, 0>}
  spyre.return
}

// -----

// Depthwise (4 groups of one channel) in chunks of 2 output channels: a
// chunk's products sum over its own 2 input channels, not all 4. Each unit
// loads its chunk's weights (2 x 9 elements, the second from byte 36) and
// its 2 channels' rows (the second chunk's from channel 2, byte 64). The
// SFU zeroes the 2 x 18 taps block and copies each tap's diagonal (one
// element per channel, 38 bytes apart: the next row, one channel right);
// the taps' views go into the column block in two groups, whose products
// have K = 4 x 2 and 5 x 2.
// CHECK-LABEL: spyre.hw.program @depthwise_chunks
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#WT:]]>, #spyre.ref<@arg1, dl16> row 36 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#IN:]], strides = [48, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [32, 0, 0]> row 32 x [2, 1, 1]
// CHECK: spyre.hw.dma {{.*}}, #spyre.ref<@arg1, dl16, offset = 36> row 36 x [1, 1, 1]
// CHECK: spyre.hw.dma {{.*}}, #spyre.ref<@arg0, dl16, offset = 64, strides = [32, 0, 0]> row 32 x [2, 1, 1]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#TAPS:]], strides = [36, 2, 0]>, 0.000000e+00 [2 x 18]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [38, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#WT]], strides = [18, 18, 0]> [2 x 1]
// CHECK-COUNT-8: spyre.hw.unary "copy" {{.*}} strides = [38, 2, 0]>, {{.*}} [2 x 1]
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [36, 0, 0]> x {{.*}} m 2 k 8 n 16 {
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#TAPS+16]], strides = [36, 0, 0]> x {{.*}} m 2 k 10 n 16 {accumulate
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16>, {{.*}} row 64 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 64>, {{.*}} row 64 x [1, 1, 1]
spyre.kernel @depthwise_chunks(%x: !spyre.buffer<1x4x4x4xf16>, %w: !spyre.buffer<4x1x3x3xf16>,
                               %y: !spyre.buffer<1x4x4x4xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x4x4x4xf16>, !spyre.buffer<4x1x3x3xf16>)
      outs(%y : !spyre.buffer<1x4x4x4xf16>) padding = [1, 1] dilation = [1, 1] groups = 4
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 2, 1>}
  spyre.return
}

// -----

// The taps gathered into one product that writes the result (the tile's
// third size 3): the bias is a column of the taps times a row of ones under
// each copy of the column block (row 18 of 16 elements: byte 576 of each),
// K = 9 x 2 + 1, the PT writes the 16-bit result and no SFU pass follows, so
// the second unit's taps go into the other copy of the column block (from
// byte 608) while the first unit's product runs.
// CHECK-LABEL: spyre.hw.program @depthwise_writes
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#TAPS:]], strides = [38, 2, 0]>, 0.000000e+00 [2 x 19]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = 576, strides = [32, 2, 0]>, 1.000000e+00 [1 x 16]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 1184, strides = [32, 2, 0]>, 1.000000e+00 [1 x 16]
// CHECK: spyre.hw.matmul #spyre.ref<lx, dl16, offset = [[#OUT:]], strides = [32, 0, 0]> = #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [38, 0, 0]> x #spyre.ref<lx, dl16, strides = [32, 0, 0]> m 2 k 19 n 16 {
// CHECK-NOT: spyre.hw.binary
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16>, #spyre.ref<lx, dl16, offset = [[#OUT]]> row 64 x [1, 1, 1]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 608, strides = [32, 2, 0]>
// CHECK: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = 608, strides = [32, 0, 0]> m 2 k 19 n 16 {
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 64>
spyre.kernel @depthwise_writes(%x: !spyre.buffer<1x4x4x4xf16>, %w: !spyre.buffer<4x1x3x3xf16>,
                               %b: !spyre.buffer<4xf16>, %y: !spyre.buffer<1x4x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x4x4x4xf16>, !spyre.buffer<4x1x3x3xf16>, !spyre.buffer<4xf16>)
      outs(%y : !spyre.buffer<1x4x4x4xf16>) padding = [1, 1] dilation = [1, 1] groups = 4
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 2, 3>}
  spyre.return
}

// -----

// TF's "same" padding of an even input with stride 2: no zeros before the
// rows and columns, one after (padding = [0, 0, 1, 1]). The input rows sit
// at a pitch of 4 + 1 elements from the slot's start (no column before
// them); the column after each of them (2 channels x 5 rows, in both
// copies of the slot) and the row below the image are zeroed.
// CHECK-LABEL: spyre.hw.program @padded_after
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, strides = [10, 50, 0]>, #spyre.ref<@arg0, dl16, strides = [8, 32, 0]> row 8 x [4, 2, 1]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = 8, strides = [10, 2, 0]>, 0.000000e+00 [10 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 108, strides = [10, 2, 0]>, 0.000000e+00 [10 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 40, strides = [50, 2, 0]>, 0.000000e+00 [2 x 5]
spyre.kernel @padded_after(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<2x1x3x3xf16>,
                           %y: !spyre.buffer<1x2x2x2xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<2x1x3x3xf16>)
      outs(%y : !spyre.buffer<1x2x2x2xf16>) stride = [2, 2] padding = [0, 0, 1, 1] dilation = [1, 1] groups = 2
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 2, 2, 1>}
  spyre.return
}
