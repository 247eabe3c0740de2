// RUN: spyre-opt %s --spyre-compile="cores=1" | FileCheck %s

// A 16-bit output is converted in place: the SFU narrows the f32 tile into
// the first half of its own slot, and the store reads it from there (no
// staging slot). The core's last step runs as two row halves, so that the
// first half's conversion and store overlap the second half's product.
// CHECK-LABEL: spyre.hw.program @deep
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[ACC:[0-9]+]], strides = [256, 0, 0]> = {{.*}} m 32 k {{[0-9]+}} n 64 {accumulate
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[ACC]], strides = [128, 2, 0]>, #spyre.ref<lx, f32, offset = [[ACC]], strides = [256, 4, 0]> [32 x 64]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@{{.*}}, dl16>, #spyre.ref<lx, dl16, offset = [[ACC]]> row 4096 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[ACC2:[0-9]+]], strides = [256, 0, 0]> = {{.*}} m 32 k {{[0-9]+}} n 64 {accumulate
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = [[HALF:[0-9]+]], strides = [128, 2, 0]>, #spyre.ref<lx, f32, offset = [[ACC2]], strides = [256, 4, 0]> [32 x 64]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@{{.*}}, dl16, offset = 4096>, #spyre.ref<lx, dl16, offset = [[HALF]]> row 4096 x [1, 1, 1]
spyre.kernel @deep(%a: !spyre.buffer<64x65536xf16>, %b: !spyre.buffer<65536x64xf16>,
                   %c: !spyre.buffer<64x64xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<64x65536xf16>, !spyre.buffer<65536x64xf16>)
               outs(%c : !spyre.buffer<64x64xf16>)
  spyre.return
}

// When all of K fits one step, the PT writes the 16-bit output itself: no
// f32 tile, no conversion.
// CHECK-LABEL: spyre.hw.program @shallow
// CHECK: spyre.hw.matmul #spyre.ref<lx, dl16, offset = [[OUT:[0-9]+]], strides = [128, 0, 0]> = {{.*}} m 32 k 64 n 64
// CHECK-NOT: spyre.hw.unary
// CHECK: spyre.hw.dma #spyre.ref<@{{.*}}, dl16>, #spyre.ref<lx, dl16, offset = [[OUT]]> row 4096 x [1, 1, 1]
// CHECK-NOT: spyre.hw.unary
// CHECK: }
spyre.kernel @shallow(%a: !spyre.buffer<64x64xf16>, %b: !spyre.buffer<64x64xf16>,
                      %c: !spyre.buffer<64x64xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<64x64xf16>, !spyre.buffer<64x64xf16>)
               outs(%c : !spyre.buffer<64x64xf16>)
  spyre.return
}

// All of K in one step: the lhs panel stays in LX while the core walks its
// column tiles (loaded once, not once per tile); the rhs tiles alternate
// between their two copies.
// CHECK-LABEL: spyre.hw.program @wide
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@[[A:[a-z0-9_]+]], dl16
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[R0:[0-9]+]], {{.*}}#spyre.ref<@[[B:[a-z0-9_]+]], dl16, strides = [512, 0, 0]>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[R1:[0-9]+]], {{.*}}#spyre.ref<@[[B]], dl16, offset = 128, strides = [512, 0, 0]>
// CHECK-NOT: @[[A]]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[R0]], {{.*}}#spyre.ref<@[[B]], dl16, offset = 256,
// CHECK-NOT: @[[A]]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[R1]], {{.*}}#spyre.ref<@[[B]], dl16, offset = 384,
// CHECK-NOT: @[[A]]
// CHECK: }
spyre.kernel @wide(%a: !spyre.buffer<64x64xf16>, %b: !spyre.buffer<64x256xf16>,
                   %c: !spyre.buffer<64x256xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<64x64xf16>, !spyre.buffer<64x256xf16>)
               outs(%c : !spyre.buffer<64x256xf16>) {spyre.tile = array<i64: 64, 64, 64>}
  spyre.return
}

// Two row tiles sharing the rhs walk K one after the other (two steps
// each); the first tile's store is split around the second tile's first
// step. The steps of the second tile write its own copy of the accumulator,
// so they need not wait for the first tile's stores of two steps before:
// its last step's first row half waits for its loads (semaphore 0), and the
// second half, which loads nothing, for the stores before the one two steps
// back (semaphore 2, count 1: the first half of the first tile's store).
// CHECK-LABEL: spyre.hw.program @pair
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[ACC1:[0-9]+]], {{.*}} m 256 k 512 n 256 {signal_sem = 1 : i64, wait_count = 5 : i64, wait_sem = 0 : i64}
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, offset = [[ACC1]], {{.*}} m 128 k 512 n 256 {accumulate, signal_sem = 6 : i64, wait_count = 6 : i64, wait_sem = 0 : i64}
// CHECK: spyre.hw.dma #spyre.ref<@arg2, dl16, offset = 131072
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 128 k 512 n 256 {accumulate, signal_sem = 6 : i64, wait_count = 1 : i64, wait_sem = 2 : i64}
spyre.kernel @pair(%a: !spyre.buffer<512x1024xf16>, %b: !spyre.buffer<1024x256xf16>,
                   %c: !spyre.buffer<512x256xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<512x1024xf16>, !spyre.buffer<1024x256xf16>)
               outs(%c : !spyre.buffer<512x256xf16>) {spyre.tile = array<i64: 256, 256, 512>}
  spyre.return
}
