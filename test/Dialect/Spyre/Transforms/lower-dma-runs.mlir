// RUN: spyre-opt %s --spyre-compile | FileCheck %s

// A product's lhs with K = 32: its tile's 64-byte rows continue one another
// in device memory and in LX, so they move as one run of 112 rows (7168
// bytes, 56 sticks). Row by row, rows starting mid-stick were charged a
// stick more than they span, four times the bytes (SegFormer's query
// projection of 3136 x 32: 18.1 -> 6.6 us); the stores likewise.
// CHECK-LABEL: spyre.hw.program @narrow_k
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 7168 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}> row 3584 x [1, 1, 1]
spyre.kernel @narrow_k(%x: !spyre.buffer<3136x32xf16>, %w: !spyre.buffer<32x32xf16>, %y: !spyre.buffer<3136x32xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<3136x32xf16>, !spyre.buffer<32x32xf16>) outs(%y : !spyre.buffer<3136x32xf16>)
  spyre.return
}

// Rows that do not continue one another (K in several steps: a step's
// columns of a longer row) stay rows.
// CHECK-LABEL: spyre.hw.program @k_steps
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, strides = [{{[0-9]+}}, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [16384, 0, 0]> row {{[0-9]+}} x [{{[0-9]+}}, 1, 1]
spyre.kernel @k_steps(%x: !spyre.buffer<256x8192xf16>, %w: !spyre.buffer<256x8192xf16>, %y: !spyre.buffer<256x256xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<256x8192xf16>, !spyre.buffer<256x8192xf16>) outs(%y : !spyre.buffer<256x256xf16>)
  spyre.return
}
