// RUN: spyre-opt %s -split-input-file --spyre-compile=cores=2 | FileCheck %s

// A 3x3 convolution of 2 channels with the taps gathered into products of
// groups of taps (the tile's third size 1; the tile search takes 3 here, one
// product that writes the result, as in lower-conv2d.mlir's
// @depthwise_writes). Each tap's 3x2 weights go side by side into rows of all
// 18 (tap, channel) pairs (36 bytes a row). The output is as wide as the
// input, so the input rows stay unpadded (a pitch of 4 elements; channels
// 32 bytes apart): each channel's 3 rows inside the image arrive as one
// 24-byte run, after the weights that every core reads at once. The taps'
// copies wait for the weights and bias only (2 loads), so they overlap the
// rows' load; the rows' first use waits for all 3. Each tap's
// view, shifted by (i * 4 + j - 1) elements from the rows, is copied under
// the previous tap's, the run's 8 elements a row (16 bytes); a tap left of
// centre then reads the row before's last column at x = 0, and a tap right
// of it the next row's first at x = 3, so those positions of the block
// (every 8 bytes, 4 rows: 2 channels x 2 output rows) are zeroed. Two
// products, of taps 0-3 (K = 8) and 4-8 (K = 10, adding into the first's
// sums), replace the nine of K = 2; the first waits for its group's SFU
// work only, so the SFU copies the second group while the PT multiplies.
// Each output channel's 2 rows leave as one 16-byte run.
// CHECK-LABEL: spyre.hw.program @conv
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#W:]]>, #spyre.ref<@arg1, dl16> row 108 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#IN:]], strides = [32, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [32, 0, 0]> row 24 x [2, 1, 1]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS:]], strides = [36, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W]], strides = [36, 18, 0]> [3 x 2] {signal_sem = 5 : i64, wait_count = 2 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS+4]], strides = [36, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W+2]], strides = [36, 18, 0]> [3 x 2]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#IN-8]], strides = [32, 2, 0]>, 0.000000e+00 [2 x 4] {signal_sem = 5 : i64, wait_count = 3 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [16, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN-10]], strides = [32, 2, 0]> [2 x 8]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 32, strides = [16, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN-8]], strides = [32, 2, 0]> [2 x 8]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 64, strides = [16, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN-6]], strides = [32, 2, 0]> [2 x 8]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 96, strides = [16, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN-2]], strides = [32, 2, 0]> [2 x 8]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, strides = [8, 2, 0]>, 0.000000e+00 [4 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 70, strides = [8, 2, 0]>, 0.000000e+00 [4 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 96, strides = [8, 2, 0]>, 0.000000e+00 [4 x 1] {signal_sem = 5 : i64}
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, {{.*}}> = #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [36, 0, 0]> x #spyre.ref<lx, dl16, strides = [16, 0, 0]> m 3 k 8 n 8 {signal_sem = 4 : i64, wait_count = 16 : i64, wait_sem = 5 : i64}
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 128, strides = [16, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN]], strides = [32, 2, 0]> [2 x 8] {signal_sem = 5 : i64}
// CHECK-COUNT-4: spyre.hw.unary "copy"
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 166, strides = [8, 2, 0]>, 0.000000e+00 [4 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 192, strides = [8, 2, 0]>, 0.000000e+00 [4 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 262, strides = [8, 2, 0]>, 0.000000e+00 [4 x 1]
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, {{.*}}> = #spyre.ref<lx, dl16, offset = [[#TAPS+16]], strides = [36, 0, 0]> x #spyre.ref<lx, dl16, offset = 128, strides = [16, 0, 0]> m 3 k 10 n 8 {accumulate, signal_sem = 4 : i64, wait_count = 24 : i64, wait_sem = 5 : i64}
// CHECK-NOT: spyre.hw.matmul
// CHECK: spyre.hw.binary "add"
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, strides = [32, 0, 0]>, #spyre.ref<lx, dl16, {{.*}}strides = [16, 0, 0]> row 16 x [3, 1, 1]
// CHECK: spyre.hw.core 1 {
spyre.kernel @conv(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                   %b: !spyre.buffer<3xf16>, %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1]
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 2, 3, 1>}
  spyre.return
}

// -----

// Gathered taps on a tile set here, with an output wider than the input
// (padding 2): the rows keep the padded pitch of 8 elements (16 bytes),
// between zero columns filled once, and arrive row by row; the run's 14
// elements a row cover 2 output rows of 6, and the 2 positions between them
// are dropped on store.
// CHECK-LABEL: spyre.hw.program @wide
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#ROWS:]], strides = [16, 64, 0]>, #spyre.ref<@arg0, dl16, strides = [8, 32, 0]> row 8 x [2, 2, 1]
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#ROWS-36]], strides = [16, 2, 0]>, 0.000000e+00 [8 x 2]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#ROWS-24]], strides = [16, 2, 0]>, 0.000000e+00 [8 x 2]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [28, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#ROWS-36]], strides = [64, 2, 0]> [2 x 14]
// CHECK: spyre.hw.matmul {{.*}} m 3 k 8 n 14
// CHECK: spyre.hw.matmul {{.*}} m 3 k 10 n 14 {accumulate
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, strides = [12, 72, 0]>, #spyre.ref<lx, dl16, {{.*}}strides = [16, 28, 0]> row 12 x [2, 3, 1]
spyre.kernel @wide(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                   %y: !spyre.buffer<1x3x6x6xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>)
      outs(%y : !spyre.buffer<1x3x6x6xf16>) padding = [2, 2] dilation = [1, 1]
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 2, 3, 1>}
  spyre.return
}

// -----

// ReLU(conv + bias) with gathered taps: the bias enters the last group's
// product. The SFU copies it into a 19th column of the taps' weights (rows
// of 38 bytes), and fills a row of ones under the 18 rows of gathered
// columns once (the run's 16 elements, 18 x 32 bytes in), so the last
// product has K = 2 x 5 + 1; the ReLU alone then reads the f32 sums.
// CHECK-LABEL: spyre.hw.program @bias_relu
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS:]], strides = [38, 2, 0]>
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS+36]], strides = [38, 2, 0]>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [2, 2, 0]> [3 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 576, strides = [32, 2, 0]>, 1.000000e+00 [1 x 16]
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [38, 0, 0]> x #spyre.ref<lx, dl16, strides = [32, 0, 0]> m 3 k 8 n 16
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#TAPS+16]], strides = [38, 0, 0]> x #spyre.ref<lx, dl16, offset = 256, strides = [32, 0, 0]> m 3 k 11 n 16 {accumulate
// CHECK-NOT: spyre.hw.binary
// CHECK: spyre.hw.unary "relu"
spyre.kernel @bias_relu(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                        %b: !spyre.buffer<3xf16>, %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1] relu
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 3, 1>}
  spyre.return
}

// -----

// Stride 2: the taps are always gathered, a copy per output row, reading
// every 2nd column (a column stride of 4 bytes) of input row 2 y + i (the
// channels 100 bytes apart: 5 rows of the padded width of 10 elements). A
// kernel row has more taps (3) than there are channels (2): each copy takes
// one channel's 3 taps of the row (2 bytes apart in the input, 32 bytes
// apart in the block: a tap's rows follow both channels'), 2 copies per
// kernel and output row rather than 3. The run is the band's 2 output rows
// of 4, no position dropped, so each output channel's rows leave as one
// 16-byte run. The taps go in three groups, a kernel row each (K = 6).
// CHECK-LABEL: spyre.hw.program @strided
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#ROWS:]], strides = [20, 100, 0]>, #spyre.ref<@arg0, dl16, strides = [16, 128, 0]> row 16 x [4, 2, 1]
// The rows start 22 bytes in (one zero row of 20 bytes and a zero column
// before them), so tap (0, 0) of output row 0 reads from byte 0.
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#COLS:]], strides = [32, 2, 0]>, #spyre.ref<lx, dl16, strides = [2, 4, 0]> [3 x 4]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#COLS+16]], strides = [32, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#ROWS+78]], strides = [2, 4, 0]> [3 x 4]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#COLS+8]], strides = [32, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#ROWS+18]], strides = [2, 4, 0]> [3 x 4]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#COLS+24]], strides = [32, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#ROWS+118]], strides = [2, 4, 0]> [3 x 4]
// CHECK-NEXT: spyre.hw.matmul {{.*}} x #spyre.ref<lx, dl16, offset = [[#COLS]], strides = [16, 0, 0]> m 3 k 6 n 8
// CHECK: spyre.hw.matmul {{.*}} m 3 k 6 n 8 {accumulate
// CHECK: spyre.hw.matmul {{.*}} m 3 k 6 n 8 {accumulate
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, strides = [32, 0, 0]>, #spyre.ref<lx, dl16, {{.*}}strides = [16, 0, 0]> row 16 x [3, 1, 1]
spyre.kernel @strided(%x: !spyre.buffer<1x2x8x8xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                      %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x2x8x8xf16>, !spyre.buffer<3x2x3x3xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) stride = [2, 2] padding = [1, 1] dilation = [1, 1]
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 2, 3, 1>}
  spyre.return
}

// -----

// Gathered in the weights' own order (the tile's third size 2): K runs over
// (channel, tap), so the product's left operand is the weights as loaded,
// rows of 18 arriving at a pitch of 19 (38 bytes) for the bias's column,
// and the SFU copies no taps. Each tap's view goes to rows c * 9 + tap of
// the block (144 bytes apart for the 2 channels), the wrapped positions are
// zeroed per output row, and the row of ones comes last (row 18): one
// product of K = 19.
// CHECK-LABEL: spyre.hw.program @natural
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#W:]], strides = [38, 0, 0]>, #spyre.ref<@arg1, dl16, strides = [36, 0, 0]> row 36 x [3, 1, 1]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#W+36]], strides = [38, 2, 0]>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [2, 2, 0]> [3 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 288, strides = [16, 2, 0]>, 1.000000e+00 [1 x 8]
// CHECK-NOT: spyre.hw.unary "copy" {{.*}} [3 x 2]
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [144, 2, 0]>, {{.*}} [2 x 8]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 16, strides = [144, 2, 0]>, {{.*}} [2 x 8]
// CHECK-COUNT-7: spyre.hw.unary "copy"
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, strides = [144, 2, 0]>, 0.000000e+00 [2 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = 8, strides = [144, 2, 0]>, 0.000000e+00 [2 x 1]
// CHECK-COUNT-10: spyre.hw.fill {{.*}} [2 x 1]
// CHECK-NEXT: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#W]], strides = [38, 0, 0]> x #spyre.ref<lx, dl16, strides = [16, 0, 0]> m 3 k 19 n 8
// CHECK-NEXT: spyre.hw.unary "relu"
spyre.kernel @natural(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                      %b: !spyre.buffer<3xf16>, %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1] relu
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 2, 3, 2>}
  spyre.return
}

// -----

// Taps that reach past a packed row: a 1 x 1 image, dilation 2 and padding
// 2 (its width kept). Every tap but the centre column's reads only padding
// along the row, so each of their block rows is zeroed whole (1 position,
// the row's width), from the row's own start: zeroing the 2 positions a
// tap reaches (the shift), from w - 2 = -1 for a tap right of centre,
// started before the row and left the other one the data of the tap before.
// CHECK-LABEL: spyre.hw.program @narrow_dilated
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#COLS:]], strides = [2, 2, 0]>
// CHECK-COUNT-3: spyre.hw.unary "copy"
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#COLS]], strides = [2, 2, 0]>, 0.000000e+00 [2 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#COLS+8]], strides = [2, 2, 0]>, 0.000000e+00 [2 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, offset = [[#COLS+12]], strides = [2, 2, 0]>, 0.000000e+00 [2 x 1]
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 3 k 8 n 1
spyre.kernel @narrow_dilated(%x: !spyre.buffer<1x2x1x1xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                             %y: !spyre.buffer<1x3x1x1xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x2x1x1xf16>, !spyre.buffer<3x2x3x3xf16>)
      outs(%y : !spyre.buffer<1x3x1x1xf16>) padding = [2, 2] dilation = [2, 2]
      {spyre.cores = 2 : i64, spyre.tile = array<i64: 1, 3, 1>}
  spyre.return
}
