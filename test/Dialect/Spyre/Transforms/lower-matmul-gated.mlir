// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// Two products of the same lhs under one epilogue (a gated MLP) run as one
// product of twice the columns: each step loads the lhs panel once and both
// rhs panels side by side in one slot (the up projection's 96 columns, 192
// bytes, after the gate's, in 384-byte rows), one PT instruction fills an
// accumulator whose rows hold both products (n 192, 768-byte rows), and the
// epilogue reads the gate at the row's start and the up projection 96 f32
// after it, writing the output in place over the accumulator. Each half of
// the rows (the core's last step runs in two) is stored once.
// CHECK-LABEL: spyre.hw.program @gated
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[LHS:[0-9]+]]>, #spyre.ref<@arg0
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [384, 0, 0]>, #spyre.ref<@arg1, dl16, strides = [192, 0, 0]> row 192 x [256, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = 192, strides = [384, 0, 0]>, #spyre.ref<@arg2, dl16, strides = [192, 0, 0]> row 192 x [256, 1, 1]
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[ACC:[0-9]+]], strides = [768, 0, 0]> = #spyre.ref<lx, dl16, offset = [[LHS]], strides = [512, 0, 0]> x #spyre.ref<lx, dl16, strides = [384, 0, 0]> m 32 k 256 n 192
// CHECK-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, dl16, offset = [[ACC]], strides = [192, 2, 0]>, #spyre.ref<lx, f32, offset = [[ACC]], strides = [768, 4, 0]>, #spyre.ref<lx, f32, offset = 196992, strides = [768, 4, 0]> [32 x 96]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16>, #spyre.ref<lx, dl16, offset = [[ACC]]> row 6144 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 32 k 256 n 192
// CHECK-NEXT: spyre.hw.binary "mul"
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 6144
// CHECK-NOT: spyre.hw.matmul

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @gated(%x: !spyre.buffer<64x256xf16>, %wg: !spyre.buffer<256x96xf16>,
                    %wu: !spyre.buffer<256x96xf16>, %y: !spyre.buffer<64x96xf16>) {
  %g = spyre.alloc() : !spyre.buffer<64x96xf16>
  spyre.matmul ins(%x, %wg : !spyre.buffer<64x256xf16>, !spyre.buffer<256x96xf16>)
               outs(%g : !spyre.buffer<64x96xf16>)
  %u = spyre.alloc() : !spyre.buffer<64x96xf16>
  spyre.matmul ins(%x, %wu : !spyre.buffer<64x256xf16>, !spyre.buffer<256x96xf16>)
               outs(%u : !spyre.buffer<64x96xf16>)
  spyre.generic domain [64, 96] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%g, %u : !spyre.buffer<64x96xf16>, !spyre.buffer<64x96xf16>)
      outs(%y : !spyre.buffer<64x96xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %r = arith.mulf %a32, %b32 : f32
    %t = arith.truncf %r : f32 to f16
    spyre.yield %t : f16
  }
  spyre.return
}
