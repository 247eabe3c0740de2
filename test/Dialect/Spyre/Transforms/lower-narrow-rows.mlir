// RUN: spyre-opt %s --spyre-compile="stop-after=lower" | FileCheck %s
// RUN: spyre-opt %s --spyre-compile="stop-after=tile" | FileCheck %s --check-prefix=TILE

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

// A LayerNorm over 32 channels written channels first (SegFormer's, to
// NCHW): f32 rows of 32 read by columns are one run per tile of all 32
// rows; the per-channel weight, read along the rows, is one short run
// whatever the rows and does not ask for whole-stick row tiles (it made
// the tiles one row each, every tile reading its whole run: 105.9 us of
// 4.3 bound for SegFormer's, now 23.6).
// TILE-LABEL: spyre.kernel @norm_to_nchw
// TILE: spyre.tile = array<i64: 32, 128>
#nx = affine_map<(d0, d1) -> (d0 + d1 * 32)>
#ncol = affine_map<(d0, d1) -> (d1)>
#nrow = affine_map<(d0, d1) -> (d0)>
#nout = affine_map<(d0, d1) -> (d0 * 3136 + d1)>
spyre.kernel @norm_to_nchw(%x: !spyre.buffer<100352xf32>, %s: !spyre.buffer<3136xf32>, %g: !spyre.buffer<32xf16>, %y: !spyre.buffer<100352xf16>) {
  spyre.generic domain [32, 3136] {indexing_maps = [#nx, #ncol, #nrow, #nout],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %s, %g : !spyre.buffer<100352xf32>, !spyre.buffer<3136xf32>, !spyre.buffer<32xf16>) outs(%y : !spyre.buffer<100352xf16>) {
  ^bb0(%a: f32, %b: f32, %c: f16):
    %w = arith.extf %c : f16 to f32
    %m = arith.mulf %a, %b : f32
    %n = arith.mulf %m, %w : f32
    %t = arith.truncf %n : f32 to f16
    spyre.yield %t : f16
  }
  spyre.return
}
