// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// A rotary embedding as the product's epilogue, over (rows, heads, halves,
// elements): a 64 x 128 tile holds one head, run as two blocks of 64 columns
// (its halves), each op for both blocks before the next op. The half is an
// index of the block (filled 0, then 1). Each block reads the f32 product at
// its own columns (offset 0, then 256 bytes) and at the other half's (256,
// then 0). The 16-bit result goes in place over the accumulator only in the
// last op, once every block has read the product.
// CHECK-LABEL: spyre.hw.program @rotary
// CHECK: spyre.hw.fill #spyre.ref<lx, i32, {{.*}}>, 0.000000e+00 [64 x 1]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, i32, {{.*}}>, 1.000000e+00 [64 x 1]
// CHECK-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, f32, {{.*}}>, #spyre.ref<lx, f32, strides = [512, 4, 0]>, #spyre.ref<lx, dl16, {{.*}}> [64 x 64]
// CHECK-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, f32, {{.*}}>, #spyre.ref<lx, f32, offset = 256, strides = [512, 4, 0]>, #spyre.ref<lx, dl16, {{.*}}> [64 x 64]
// CHECK-NEXT: spyre.hw.binary "eq" {{.*}} [64 x 1]
// CHECK-NEXT: spyre.hw.binary "eq" {{.*}} [64 x 1]
// CHECK-NEXT: spyre.hw.unary "neg" #spyre.ref<lx, f32, {{.*}}>, #spyre.ref<lx, f32, offset = 256, strides = [512, 4, 0]> [64 x 64]
// CHECK-NEXT: spyre.hw.unary "neg" #spyre.ref<lx, f32, {{.*}}>, #spyre.ref<lx, f32, strides = [512, 4, 0]> [64 x 64]
// CHECK-NEXT: spyre.hw.select
// CHECK-NEXT: spyre.hw.select
// CHECK-NEXT: spyre.hw.binary "mul"
// CHECK-NEXT: spyre.hw.binary "mul"
// CHECK-NEXT: spyre.hw.binary "add" #spyre.ref<lx, dl16, strides = [256, 2, 0]>
// CHECK-NEXT: spyre.hw.binary "add" #spyre.ref<lx, dl16, offset = 128, strides = [256, 2, 0]>

#q = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 128 + d2 * 64 + d3)>
#rot = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 128 - d2 * 64 + d3 + 64)>
#tab = affine_map<(d0, d1, d2, d3) -> (d0, d2 * 64 + d3)>
spyre.kernel @rotary(%x: !spyre.buffer<64x128xf16>, %w: !spyre.buffer<128x256xf16>,
                     %cos: !spyre.buffer<64x128xf16>, %sin: !spyre.buffer<64x128xf16>,
                     %y: !spyre.buffer<64x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<64x256xf16>
  spyre.matmul ins(%x, %w : !spyre.buffer<64x128xf16>, !spyre.buffer<128x256xf16>)
               outs(%p : !spyre.buffer<64x256xf16>)
  spyre.generic domain [64, 2, 2, 64] {indexing_maps = [#q, #tab, #rot, #tab, #q],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %cos, %p, %sin : !spyre.buffer<64x256xf16>, !spyre.buffer<64x128xf16>, !spyre.buffer<64x256xf16>, !spyre.buffer<64x128xf16>)
      outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%a: f16, %c: f16, %r: f16, %s: f16):
    %zero = arith.constant 0 : i32
    %half = spyre.index_expr affine_map<(d0, d1, d2, d3) -> (d2)> : i32
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %c : f16 to f32
    %2 = arith.extf %r : f16 to f32
    %3 = arith.extf %s : f16 to f32
    %4 = arith.mulf %0, %1 : f32
    %5 = arith.cmpi eq, %half, %zero : i32
    %6 = arith.negf %2 : f32
    %7 = arith.select %5, %6, %2 : f32
    %8 = arith.mulf %7, %3 : f32
    %9 = arith.addf %4, %8 : f32
    %10 = arith.truncf %9 : f32 to f16
    spyre.yield %10 : f16
  }
  spyre.return
}
