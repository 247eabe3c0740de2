// RUN: spyre-opt %s -split-input-file --spyre-compile=cores=1 | FileCheck %s

// Two products of one lhs, each to an output of its own (a layer's key and
// value projections), run as one product of twice the columns: the lhs
// panel loaded once, both rhs panels side by side in one slot (96 columns,
// 192 bytes, each, in 384-byte rows), one PT instruction per step (n 192).
// With all of K in one step the PT writes both products' 16-bit rows side by
// side; each output's store reads its half of every row.
// CHECK-LABEL: spyre.hw.program @whole_k
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[LHS:[0-9]+]]>, #spyre.ref<@arg0
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [384, 0, 0]>, #spyre.ref<@arg1, dl16, strides = [192, 0, 0]> row 192 x [256, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = 192, strides = [384, 0, 0]>, #spyre.ref<@arg2, dl16, strides = [192, 0, 0]> row 192 x [256, 1, 1]
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, dl16, offset = [[OUT:[0-9]+]], strides = [384, 0, 0]> = #spyre.ref<lx, dl16, offset = [[LHS]], strides = [512, 0, 0]> x #spyre.ref<lx, dl16, strides = [384, 0, 0]> m 32 k 256 n 192
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, strides = [192, 0, 0]>, #spyre.ref<lx, dl16, offset = [[OUT]], strides = [384, 0, 0]> row 192 x [32, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg4, dl16, strides = [192, 0, 0]>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [384, 0, 0]> row 192 x [32, 1, 1]
// CHECK-NOT: @arg0
// CHECK: spyre.hw.matmul {{.*}} m 32 k 256 n 192
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 6144
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg4, dl16, offset = 6144
spyre.kernel @whole_k(%x: !spyre.buffer<64x256xf16>, %wk: !spyre.buffer<256x96xf16>,
                      %wv: !spyre.buffer<256x96xf16>, %k: !spyre.buffer<64x96xf16>,
                      %v: !spyre.buffer<64x96xf16>) {
  spyre.matmul ins(%x, %wk : !spyre.buffer<64x256xf16>, !spyre.buffer<256x96xf16>)
               outs(%k : !spyre.buffer<64x96xf16>)
  spyre.matmul ins(%x, %wv : !spyre.buffer<64x256xf16>, !spyre.buffer<256x96xf16>)
               outs(%v : !spyre.buffer<64x96xf16>)
  spyre.return
}

// -----

// K in steps: the f32 accumulator's rows hold both products (768 bytes);
// the SFU narrows both in place, in one instruction per row half, to rows
// of 384 bytes from which each output's store reads its 192.
// CHECK-LABEL: spyre.hw.program @k_steps
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[ACC:[0-9]+]], strides = [768, 0, 0]> = {{.*}} m 32 k 1024 n 192 {accumulate
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[ACC]], strides = [384, 2, 0]>, #spyre.ref<lx, f32, offset = [[ACC]], strides = [768, 4, 0]> [32 x 192]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, strides = [192, 0, 0]>, #spyre.ref<lx, dl16, offset = [[ACC]], strides = [384, 0, 0]> row 192 x [32, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg4, dl16, strides = [192, 0, 0]>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [384, 0, 0]> row 192 x [32, 1, 1]
// CHECK: spyre.hw.unary "copy" {{.*}} [32 x 192]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 6144
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg4, dl16, offset = 6144
spyre.kernel @k_steps(%x: !spyre.buffer<64x2048xf16>, %wk: !spyre.buffer<2048x96xf16>,
                      %wv: !spyre.buffer<2048x96xf16>, %k: !spyre.buffer<64x96xf16>,
                      %v: !spyre.buffer<64x96xf16>) {
  spyre.matmul ins(%x, %wk : !spyre.buffer<64x2048xf16>, !spyre.buffer<2048x96xf16>)
               outs(%k : !spyre.buffer<64x96xf16>)
  spyre.matmul ins(%x, %wv : !spyre.buffer<64x2048xf16>, !spyre.buffer<2048x96xf16>)
               outs(%v : !spyre.buffer<64x96xf16>)
  spyre.return
}
