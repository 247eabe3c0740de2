// RUN: spyre-opt %s --spyre-compile=cores=8 | FileCheck %s
// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s --check-prefix=ONE

// A decode step's product (one lhs row) on 8 cores, each streaming 128
// columns of the weight: the loads pace the run. The core's last step runs
// as two column halves, each loading its 64 columns into its place in the
// rhs slot, so that the first half's product and conversion overlap the
// second half's load; the tile is stored once, after the second half.
// CHECK-LABEL: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#RHS:]], strides = [512, 0, 0]>, #spyre.ref<@arg1, dl16, offset = 3584, strides = [4096, 0, 0]> row 512 x [64, 1, 1]
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 1 k 256 n 128
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#RHS+32768]], strides = [512, 0, 0]>, #spyre.ref<@arg1, dl16, offset = 265728, strides = [4096, 0, 0]> row 512 x [64, 1, 1]
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[#ACC:]], strides = [512, 0, 0]> = {{.*}} x #spyre.ref<lx, dl16, offset = [[#RHS]], strides = [512, 0, 0]> m 1 k 256 n 64
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#ACC]], strides = [256, 2, 0]>, #spyre.ref<lx, f32, offset = [[#ACC]], strides = [512, 4, 0]> [1 x 64]
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[#ACC+256]], strides = [512, 0, 0]> = {{.*}} x #spyre.ref<lx, dl16, offset = [[#RHS+32768]], strides = [512, 0, 0]> m 1 k 256 n 64
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[#ACC+128]], strides = [256, 2, 0]>, #spyre.ref<lx, f32, offset = [[#ACC+256]], strides = [512, 4, 0]> [1 x 64]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg2, dl16, strides = [2048, 0, 0]>, #spyre.ref<lx, dl16, offset = [[#ACC]], strides = [256, 0, 0]> row 256 x [1, 1, 1]
// CHECK-NOT: spyre.hw.
// CHECK: spyre.hw.core 1 {

// On one core the whole bus is its own and the PT paces the run: a second
// load's latency would only add to it, and the last step stays whole.
// ONE-NOT: n 64
// ONE: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 1536,
// ONE: spyre.hw.matmul {{.*}} m 1 k 512 n 128 {accumulate, signal_sem = 6
// ONE-NEXT: spyre.hw.unary "copy" {{.*}} [1 x 128]
// ONE-NEXT: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 1792,
spyre.kernel @gemv(%x: !spyre.buffer<1x2048xf16>, %w: !spyre.buffer<1024x2048xf16>,
                   %y: !spyre.buffer<1x1024xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<1x2048xf16>, !spyre.buffer<1024x2048xf16>)
      outs(%y : !spyre.buffer<1x1024xf16>)
  spyre.return
}
