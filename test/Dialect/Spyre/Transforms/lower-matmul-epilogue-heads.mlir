// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// A bias added per head, one value a head (the epilogue over rows, heads and
// elements: two blocks of 32 columns) of a 16-bit product narrowed in place. Each op runs
// for both blocks of a strip before the next, and the add both reads the
// f32 product and writes the output: row r's output lands on the product of
// row r / 2, so a strip starting at row s has at most s rows (one at row 0).
// Rows 0-3 in one strip had the first head's output of row 1 overwrite the
// product of row 0's second head before its add read it.
// CHECK-LABEL: spyre.hw.program @bias_per_head
// CHECK: spyre.hw.matmul
// CHECK: spyre.hw.binary "add" #spyre.ref<lx, dl16, offset = [[ACC:[0-9]+]], strides = [128, 2, 0]>, #spyre.ref<lx, f32, offset = [[ACC]], strides = [256, 4, 0]>, {{.*}} [1 x 32]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} [1 x 32]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} [1 x 32]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} [1 x 32]
// The tile's last two rows, a step of their own: their output lands on the
// product of rows 1 and 2 at most, read already.
// CHECK: spyre.hw.matmul
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} [2 x 32]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} [2 x 32]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3

#prod = affine_map<(d0, d1, d2) -> (d0, d1 * 32 + d2)>
#bias = affine_map<(d0, d1, d2) -> (d1)>
#out = affine_map<(d0, d1, d2) -> (d0 * 64 + d1 * 32 + d2)>
spyre.kernel @bias_per_head(%x: !spyre.buffer<4x64xf16>, %w: !spyre.buffer<64x64xf16>,
                            %b: !spyre.buffer<64xf16>, %y: !spyre.buffer<256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<4x64xf16>
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<4x64xf16>, !spyre.buffer<64x64xf16>)
                             outs(%p : !spyre.buffer<4x64xf16>)
  spyre.generic domain [4, 2, 32] {indexing_maps = [#prod, #bias, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b : !spyre.buffer<4x64xf16>, !spyre.buffer<64xf16>) outs(%y : !spyre.buffer<256xf16>) {
  ^bb0(%a: f16, %c: f16):
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %c : f16 to f32
    %2 = arith.addf %0, %1 : f32
    %3 = arith.truncf %2 : f32 to f16
    spyre.yield %3 : f16
  }
  spyre.return
}
