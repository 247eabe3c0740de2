// RUN: spyre-opt %s -split-input-file --spyre-compile | FileCheck %s

// Granite-8B's MLP projection: 12800 output columns are 200 sticks of 64
// f16, two grid rows take the 512 rows in 256-row tiles, and K takes
// several steps. Grids are priced at the mean width of the busiest core's
// column tiles: 16 grid columns give it 13 sticks (tiles of 4, 3, 3 and 3
// sticks), 13 grid columns 16 sticks (four of 4). Priced at the widest
// tile, both looked like four 4-stick tiles and the 13 columns won, which
// left cores 26 to 31 idle.
// The two cores of a grid column, which load the same rhs panels, are
// numbered side by side (0 and 1), so that both reach device memory through
// the same memory port and each port carries half of the weight; numbered
// along the grid rows (0 and 16) every panel passed both ports, and the
// ports, not the bus, bound the product (1266.4 us against 1040.3).
// CHECK-LABEL: spyre.hw.program @granite
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma {{.*}} #spyre.ref<@arg0, dl16, strides = [8192, 0, 0]>
// CHECK: spyre.hw.dma {{.*}} #spyre.ref<@arg1, dl16, strides = [25600, 0, 0]> row 512
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.dma {{.*}} #spyre.ref<@arg0, dl16, offset = 2097152, strides = [8192, 0, 0]>
// CHECK: spyre.hw.dma {{.*}} #spyre.ref<@arg1, dl16, strides = [25600, 0, 0]> row 512
// CHECK: spyre.hw.matmul {{.*}} m 256 k 512 n 192
// CHECK: spyre.hw.core 31 {
// CHECK: spyre.hw.matmul {{.*}} m 256 k 512 n 192
spyre.kernel @granite(%x: !spyre.buffer<512x4096xf16>, %w: !spyre.buffer<4096x12800xf16>,
                      %y: !spyre.buffer<512x12800xf16>) {
  spyre.matmul ins(%x, %w : !spyre.buffer<512x4096xf16>, !spyre.buffer<4096x12800xf16>)
      outs(%y : !spyre.buffer<512x12800xf16>)
  spyre.return
}

// -----

// A decode step's key projection has 4 column tiles: a grid of 4 cores,
// two behind each memory port (cores 0, 1, 16 and 17), not all four behind
// the first (15.2 us on cores 0-3, 12.2 us so).
// CHECK-LABEL: spyre.hw.program @kv
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.matmul
// CHECK: spyre.hw.core 2 {
// CHECK-NOT: spyre.hw.matmul
// CHECK: spyre.hw.core 16 {
// CHECK: spyre.hw.matmul
// CHECK: spyre.hw.core 17 {
// CHECK: spyre.hw.matmul
// CHECK: spyre.hw.core 18 {
// CHECK-NOT: spyre.hw.matmul
spyre.kernel @kv(%x: !spyre.buffer<1x2048xf16>, %w: !spyre.buffer<2048x256xf16>,
                 %y: !spyre.buffer<1x256xf16>) {
  spyre.matmul ins(%x, %w : !spyre.buffer<1x2048xf16>, !spyre.buffer<2048x256xf16>)
      outs(%y : !spyre.buffer<1x256xf16>)
  spyre.return
}

// -----

// Two products of one lhs (a layer's key and value projections) on a 4 x 8
// grid: each grid column loads two rhs panels, one per product, so the
// cores are numbered down the grid's columns (core 1 is the next grid row,
// core 16 the fifth grid column): each memory port carries all four lhs
// panels and four of the eight columns' panels, 1 MB a K step, where along
// the rows (core 1 the next grid column) it carried two lhs panels and all
// eight columns' 1.25 MB. The numbering counted one product's rhs bytes:
// Llama's 512 x 2048 key/value projections took 84.6 us, 78.6 now.
// CHECK-LABEL: spyre.hw.program @key_value
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma {{.*}} #spyre.ref<@arg0, dl16, strides = [4096, 0, 0]> row 1024 x [128, 1, 1]
// CHECK-NEXT: spyre.hw.dma {{.*}} #spyre.ref<@arg1, dl16, strides = [1024, 0, 0]> row 128 x [512, 1, 1]
// CHECK: spyre.hw.core 1 {
// CHECK-NEXT: spyre.hw.kernel
// CHECK-NEXT: spyre.hw.dma {{.*}} #spyre.ref<@arg0, dl16, offset = 524288, strides = [4096, 0, 0]> row 1024 x [128, 1, 1]
// CHECK-NEXT: spyre.hw.dma {{.*}} #spyre.ref<@arg1, dl16, strides = [1024, 0, 0]> row 128 x [512, 1, 1]
// CHECK: spyre.hw.core 16 {
// CHECK-NEXT: spyre.hw.kernel
// CHECK-NEXT: spyre.hw.dma {{.*}} #spyre.ref<@arg0, dl16, strides = [4096, 0, 0]> row 1024 x [128, 1, 1]
// CHECK-NEXT: spyre.hw.dma {{.*}} #spyre.ref<@arg1, dl16, offset = 512, strides = [1024, 0, 0]> row 128 x [512, 1, 1]
// CHECK-NEXT: spyre.hw.dma {{.*}} #spyre.ref<@arg2, dl16, offset = 512, strides = [1024, 0, 0]> row 128 x [512, 1, 1]
spyre.kernel @key_value(%x: !spyre.buffer<512x2048xf16>, %wk: !spyre.buffer<2048x512xf16>,
                        %wv: !spyre.buffer<2048x512xf16>, %k: !spyre.buffer<512x512xf16>,
                        %v: !spyre.buffer<512x512xf16>) {
  spyre.matmul ins(%x, %wk : !spyre.buffer<512x2048xf16>, !spyre.buffer<2048x512xf16>)
               outs(%k : !spyre.buffer<512x512xf16>)
  spyre.matmul ins(%x, %wv : !spyre.buffer<512x2048xf16>, !spyre.buffer<2048x512xf16>)
               outs(%v : !spyre.buffer<512x512xf16>)
  spyre.return
}
