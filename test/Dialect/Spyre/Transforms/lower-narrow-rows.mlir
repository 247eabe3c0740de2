// RUN: spyre-opt %s --spyre-compile="stop-after=lower" | FileCheck %s

// A small table (32 buckets x 8 heads, T5's relative-position bias) is
// loaded into LX once per core and gathered from there; the chunk's whole
// rows are consecutive in the output and go out as one run (from device
// memory, or stored row by row, each 16-byte row would cost a stick).
// CHECK-LABEL: spyre.hw.program @small_table
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[TABLE:[0-9]+]]>, #spyre.ref<@arg0, dl16, strides = [16, 0, 0]> row 512 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, i32, offset = [[IDX:[0-9]+]]>, #spyre.ref<@arg1, i32> row 512
// CHECK-NEXT: spyre.hw.gather #spyre.ref<lx, dl16, strides = [16, 0, 0]>, #spyre.ref<lx, dl16, offset = [[TABLE]], strides = [16, 0, 0]>[#spyre.ref<lx, i32, offset = [[IDX]]>] row 16 x 128 of 32
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg2, dl16, strides = [16, 0, 0]>, #spyre.ref<lx, dl16> row 2048 x [1, 1, 1]
// CHECK-NOT: spyre.hw.
// CHECK: spyre.hw.core 1 {

// A table larger than LX's share for it is gathered from device memory.
// CHECK-LABEL: spyre.hw.program @large_table
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, i32, offset = [[IDX:[0-9]+]]>, #spyre.ref<@arg1, i32> row 512
// CHECK-NEXT: spyre.hw.gather #spyre.ref<lx, dl16, strides = [128, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [128, 0, 0]>[#spyre.ref<lx, i32, offset = [[IDX]]>] row 128 x 128 of 8192
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg2, dl16, strides = [128, 0, 0]>, #spyre.ref<lx, dl16> row 16384 x [1, 1, 1]

// Columns of 8 elements one after the other, read by columns (the
// transpose of a [4096, 8] matrix): each tile is all 8 rows and one run
// of its columns, which the SFU reads with a 2-byte row stride; the cols
// are split among the cores. Column by column, each 16-byte column would
// cost a stick; tiles of fewer rows would read the run again.
// CHECK-LABEL: spyre.hw.program @narrow_columns
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 2048 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [256, 2, 0]>, #spyre.ref<lx, dl16, strides = [2, 16, 0]> [8 x 128]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg1, dl16, strides = [8192, 0, 0]>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [256, 0, 0]> row 256 x [8, 1, 1]

spyre.kernel @small_table(%table: !spyre.buffer<32x8xf16>, %idx: !spyre.buffer<4096xi32>, %out: !spyre.buffer<4096x8xf16>) {
  spyre.gather ins(%table, %idx : !spyre.buffer<32x8xf16>, !spyre.buffer<4096xi32>) outs(%out : !spyre.buffer<4096x8xf16>) axis = 0
  spyre.return
}
spyre.kernel @large_table(%table: !spyre.buffer<8192x64xf16>, %idx: !spyre.buffer<4096xi32>, %out: !spyre.buffer<4096x64xf16>) {
  spyre.gather ins(%table, %idx : !spyre.buffer<8192x64xf16>, !spyre.buffer<4096xi32>) outs(%out : !spyre.buffer<4096x64xf16>) axis = 0
  spyre.return
}
#col = affine_map<(d0, d1) -> (d0 + d1 * 8)>
#row = affine_map<(d0, d1) -> (d0 * 4096 + d1)>
spyre.kernel @narrow_columns(%x: !spyre.buffer<32768xf16>, %y: !spyre.buffer<32768xf16>) {
  spyre.generic domain [8, 4096] {indexing_maps = [#col, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<32768xf16>) outs(%y : !spyre.buffer<32768xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.return
}
