// RUN: spyre-opt %s --spyre-compile=cores=3 | FileCheck %s

// 640 output columns are 10 sticks of 64 f16; three cores take 3, 3 and 4
// of them (not whole 128-column tiles: 1, 2 and 2 of those), each run cut
// into tiles of at most two sticks and near-equal width. Every tile starts
// on a stick: store offsets are multiples of 128 bytes.
// CHECK-LABEL: spyre.hw.program @ragged
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.matmul {{.*}} m 128 k 256 n 64
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, strides = [1280, 0, 0]>, {{.*}} row 128 x [128, 1, 1]
// CHECK: spyre.hw.matmul {{.*}} m 64 k 256 n 128
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 128, strides = [1280, 0, 0]>, {{.*}} row 256 x [64, 1, 1]
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.matmul {{.*}} m 128 k 256 n 64
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 384, strides = [1280, 0, 0]>, {{.*}} row 128 x [128, 1, 1]
// CHECK: spyre.hw.matmul {{.*}} m 64 k 256 n 128
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 512, strides = [1280, 0, 0]>, {{.*}} row 256 x [64, 1, 1]
// CHECK: spyre.hw.core 2 {
// CHECK: spyre.hw.matmul {{.*}} m 128 k 256 n 128
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 768, strides = [1280, 0, 0]>, {{.*}} row 256 x [128, 1, 1]
// CHECK: spyre.hw.matmul {{.*}} m 64 k 256 n 128
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 1024, strides = [1280, 0, 0]>, {{.*}} row 256 x [64, 1, 1]
spyre.kernel @ragged(%x: !spyre.buffer<128x256xf16>, %w: !spyre.buffer<256x640xf16>,
                     %y: !spyre.buffer<128x640xf16>) {
  spyre.matmul ins(%x, %w : !spyre.buffer<128x256xf16>, !spyre.buffer<256x640xf16>)
      outs(%y : !spyre.buffer<128x640xf16>)
  spyre.return
}
