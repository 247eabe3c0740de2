// RUN: spyre-opt %s --spyre-compile=cores=2 | FileCheck %s

// The tile's choice for a 3x3 convolution of 2 channels: the taps gathered
// into one product. Each tap's 3x2 weights go side by side into rows of all
// 18 (tap, channel) pairs (36 bytes a row); each tap's shifted view of the
// input rows (2 channels, 48 bytes apart) is copied under the previous
// tap's, the run's 10 elements a row (20 bytes). One product of K = 18
// replaces the nine of K = 2, and writes the accumulator once.
// CHECK-LABEL: spyre.hw.program @conv
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS:]], strides = [36, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W:]], strides = [36, 18, 0]> [3 x 2]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#TAPS+4]], strides = [36, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#W+2]], strides = [36, 18, 0]> [3 x 2]
// CHECK: spyre.hw.fill {{.*}} [2 x 6]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [20, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN:]], strides = [48, 2, 0]> [2 x 10]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 40, strides = [20, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN+2]], strides = [48, 2, 0]> [2 x 10]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 80, strides = [20, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN+4]], strides = [48, 2, 0]> [2 x 10]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 120, strides = [20, 2, 0]>, #spyre.ref<lx, dl16, offset = [[#IN+12]], strides = [48, 2, 0]> [2 x 10]
// CHECK-COUNT-5: spyre.hw.unary "copy"
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, {{.*}}> = #spyre.ref<lx, dl16, offset = [[#TAPS]], strides = [36, 0, 0]> x #spyre.ref<lx, dl16, strides = [20, 0, 0]> m 3 k 18 n 10 {
// CHECK-NOT: accumulate
// CHECK-SAME: }
// CHECK-NOT: spyre.hw.matmul
// CHECK: spyre.hw.binary "add"
// CHECK: spyre.hw.core 1 {
spyre.kernel @conv(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x3x3xf16>,
                   %b: !spyre.buffer<3xf16>, %y: !spyre.buffer<1x3x4x4xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x3x3xf16>, !spyre.buffer<3xf16>)
      outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [1, 1] dilation = [1, 1]
  spyre.return
}
