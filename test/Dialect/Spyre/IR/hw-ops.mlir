// RUN: spyre-opt %s | FileCheck %s
// RUN: spyre-opt %s | spyre-opt | FileCheck %s

// CHECK-LABEL: spyre.hw.program @every_op num_cores = 2
spyre.hw.program @every_op num_cores = 2 {
  // CHECK: spyre.hw.buffer @x input : !spyre.buffer<64x64xf16>
  spyre.hw.buffer @x input : !spyre.buffer<64x64xf16>
  spyre.hw.buffer @ids input : !spyre.buffer<8xi32>
  spyre.hw.buffer @y output : !spyre.buffer<64x64xf32>
  // CHECK: spyre.hw.buffer @k constant : !spyre.buffer<2xf32> = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  spyre.hw.buffer @k constant : !spyre.buffer<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: spyre.hw.core 0 {
  spyre.hw.core 0 {
    // CHECK: spyre.hw.kernel 3
    spyre.hw.kernel 3
    // CHECK: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@x, dl16, strides = [128, 0, 0]> row 128 x [64, 1, 1] {signal_sem = 0 : i64}
    spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@x, dl16, strides = [128, 0, 0]> row 128 x [64, 1, 1] {signal_sem = 0 : i64}
    // CHECK: spyre.hw.loop 4 {
    spyre.hw.loop 4 {
      // CHECK: spyre.hw.unary "exp" #spyre.ref<lx, f32, offset = 8192, strides = [256, 4, 0], inc = [4096, 0, 0]>, #spyre.ref<lx, dl16, strides = [128, 2, 0], inc = [2048, 0, 0]> [16 x 64] {wait_count = 1 : i64, wait_sem = 0 : i64}
      spyre.hw.unary "exp" #spyre.ref<lx, f32, offset = 8192, strides = [256, 4, 0], inc = [4096, 0, 0]>, #spyre.ref<lx, dl16, strides = [128, 2, 0], inc = [2048, 0, 0]> [16 x 64] {wait_sem = 0 : i64, wait_count = 1 : i64}
    }
    // CHECK: spyre.hw.binary "add" {{.*}} imm 1.500000e+00 [1 x 4]
    spyre.hw.binary "add" #spyre.ref<lx, f32>, #spyre.ref<lx, f32> imm 1.5 [1 x 4]
    // CHECK: spyre.hw.binary "mul" {{.*}}, #spyre.ref<lx, f32, offset = 64> [1 x 4]
    spyre.hw.binary "mul" #spyre.ref<lx, f32>, #spyre.ref<lx, f32>, #spyre.ref<lx, f32, offset = 64> [1 x 4]
    spyre.hw.select #spyre.ref<lx, f32>, #spyre.ref<lx, u8>, #spyre.ref<lx, f32>, #spyre.ref<lx, f32> [1 x 4]
    // CHECK: spyre.hw.fill #spyre.ref<lx, i32>, 0.000000e+00 [1 x 8] {col_step = 1.000000e+00 : f64}
    spyre.hw.fill #spyre.ref<lx, i32>, 0.0 [1 x 8] {col_step = 1.0 : f64}
    spyre.hw.reduce "welford" #spyre.ref<lx, f32>, #spyre.ref<lx, f32> [4 x 16] {aux1 = #spyre.ref<lx, f32, offset = 16>, aux2 = #spyre.ref<lx, f32, offset = 32>}
    // CHECK: spyre.hw.matmul #spyre.ref<lx, f32, strides = [256, 0, 0]> = #spyre.ref<lx, dl16, strides = [128, 0, 0]> x #spyre.ref<lx, dl16, strides = [128, 0, 0]> m 64 k 64 n 64 {accumulate, transpose_b}
    spyre.hw.matmul #spyre.ref<lx, f32, strides = [256, 0, 0]> = #spyre.ref<lx, dl16, strides = [128, 0, 0]> x #spyre.ref<lx, dl16, strides = [128, 0, 0]> m 64 k 64 n 64 {transpose_b, accumulate}
    spyre.hw.gather #spyre.ref<lx, dl16>, #spyre.ref<@x, dl16, strides = [128, 0, 0]>[#spyre.ref<lx, i32, offset = 1024>] row 128 x 8 of 64
    // CHECK: spyre.hw.scatter #spyre.ref<@x, dl16, strides = [128, 0, 0]>[#spyre.ref<lx, i32, offset = 1024>], #spyre.ref<lx, dl16> row 128 x 8 of 64
    spyre.hw.scatter #spyre.ref<@x, dl16, strides = [128, 0, 0]>[#spyre.ref<lx, i32, offset = 1024>], #spyre.ref<lx, dl16> row 128 x 8 of 64
    // CHECK: spyre.hw.ring #spyre.ref<lx, f32, core = 1>, #spyre.ref<lx, f32> row 64 x [1, 1, 1] {signal_remote, signal_sem = 2 : i64}
    spyre.hw.ring #spyre.ref<lx, f32, core = 1>, #spyre.ref<lx, f32> row 64 x [1, 1, 1] {signal_remote, signal_sem = 2 : i64}
    // CHECK: spyre.hw.barrier
    spyre.hw.barrier
  }
  spyre.hw.core 1 {
    spyre.hw.barrier
  }
}
