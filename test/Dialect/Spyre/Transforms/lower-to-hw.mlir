// RUN: spyre-opt %s -spyre-lower-to-hw | FileCheck %s
// RUN: spyre-opt %s -spyre-lower-to-hw -spyre-check-hw -o /dev/null

// Three row tiles on one core, double buffered: loads of tiles 0 and 1 go
// first; the load of tile 2 reuses the slot of tile 0 and waits for its
// compute (sem 1 >= 1); each compute waits for its loads (sem 0), each store
// for its compute. A tile's rows follow each other on the device: one run.
// CHECK-LABEL: spyre.hw.program @scale num_cores = 1
// CHECK-NEXT: spyre.hw.buffer @x input : !spyre.buffer<6x64xf32>
// CHECK-NEXT: spyre.hw.buffer @y output : !spyre.buffer<6x64xf32>
// CHECK-NEXT: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, f32>, #spyre.ref<@x, f32> row 512 x [1, 1, 1] {signal_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, f32, offset = 512>, #spyre.ref<@x, f32, offset = 512> row 512 x [1, 1, 1] {signal_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, f32, offset = 1024, strides = [256, 4, 0]>, #spyre.ref<lx, f32, strides = [256, 4, 0]> imm 2.000000e+00 [2 x 64] {signal_sem = 1 : i64, wait_count = 1 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@y, f32>, #spyre.ref<lx, f32, offset = 1024> row 512 x [1, 1, 1] {signal_sem = 2 : i64, wait_count = 1 : i64, wait_sem = 1 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, f32>, #spyre.ref<@x, f32, offset = 1024> row 512 x [1, 1, 1] {signal_sem = 0 : i64, wait_count = 1 : i64, wait_sem = 1 : i64}
// CHECK-NEXT: spyre.hw.binary "mul" {{.*}} {signal_sem = 1 : i64, wait_count = 2 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@y, f32, offset = 512>{{.*}} {signal_sem = 2 : i64, wait_count = 2 : i64, wait_sem = 1 : i64}
// CHECK-NEXT: spyre.hw.binary "mul" {{.*}} {signal_sem = 1 : i64, wait_count = 3 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@y, f32, offset = 1024>{{.*}} {signal_sem = 2 : i64, wait_count = 3 : i64, wait_sem = 1 : i64}
// CHECK-NEXT: }
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
spyre.kernel @scale(%x: !spyre.buffer<6x64xf32> {spyre.name = "x"}, %y: !spyre.buffer<6x64xf32> {spyre.name = "y"}) {
  spyre.generic domain [6, 64] {indexing_maps = [#id, #id], spyre.cores = 1 : i64,
      spyre.tile = array<i64: 2, 64>, spyre.lx = array<i64: 0, 1024>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<6x64xf32>) outs(%y : !spyre.buffer<6x64xf32>) {
  ^bb0(%v: f32):
    %two = arith.constant 2.0 : f32
    %r = arith.mulf %v, %two : f32
    spyre.yield %r : f32
  }
  spyre.return
}
spyre.kernel @rowsum(%x: !spyre.buffer<2x100xf16>, %s: !spyre.buffer<2xf16>) {

// A row sum over two 64-element column tiles: the second reduce
// accumulates; the f32 sum is converted to f16 before it is stored. One row
// per core.
// CHECK-LABEL: spyre.hw.program @rowsum num_cores = 2
// CHECK: spyre.hw.buffer @arg0 input
// CHECK: spyre.hw.buffer @arg1 output
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.dma {{.*}}#spyre.ref<@arg0, dl16, offset = 200, {{.*}} row 128 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma {{.*}}#spyre.ref<@arg0, dl16, offset = 328, {{.*}} row 72 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.reduce "sum" #spyre.ref<lx, f32, offset = 256, strides = [4, 0, 0]>, {{.*}} [1 x 64] {signal_sem = 1 : i64, wait_count = 1 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.reduce "sum" #spyre.ref<lx, f32, offset = 256, strides = [4, 0, 0]>, {{.*}} [1 x 36] {accumulate, wait_count = 2 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.unary "copy" #spyre.ref<lx, dl16, offset = 512, strides = [2, 0, 0]>, #spyre.ref<lx, f32, offset = 256, strides = [4, 0, 0]> [1 x 1] {signal_sem = 1 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg1, dl16, offset = 2>, {{.*}} row 2 x [1, 1, 1] {signal_sem = 2 : i64, wait_count = 2 : i64, wait_sem = 1 : i64}
  spyre.generic domain [2, 100] {indexing_maps = [#id, #row], spyre.cores = 2 : i64,
      spyre.tile = array<i64: 1, 64>, spyre.lx = array<i64: 0, 256, 512>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<2x100xf16>) outs(%s : !spyre.buffer<2xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// A row filled, then the whole buffer updated (x.index_fill_(0, [1], 5);
// x.add_(1)): the first write covers one row, so the update reads rows on
// entry: inout, not output (whose content on entry the runtime need not
// provide: fp16 rows came back as 0 + 1). A whole first write is an output.
// CHECK-LABEL: spyre.hw.program @fill_then_update
// CHECK-NEXT: spyre.hw.buffer @x inout : !spyre.buffer<32xf32>
// CHECK-NEXT: spyre.hw.buffer @y output : !spyre.buffer<32xf32>
#row1 = affine_map<(d0) -> (d0 + 8)>
#all = affine_map<(d0) -> (d0)>
spyre.kernel @fill_then_update(%x: !spyre.buffer<32xf32> {spyre.name = "x"},
                               %y: !spyre.buffer<32xf32> {spyre.name = "y"}) {
  spyre.generic domain [8] {indexing_maps = [#row1], spyre.cores = 1 : i64,
      spyre.tile = array<i64: 8>, spyre.lx = array<i64: 0, 128>,
      iterator_types = [#spyre.iterator<parallel>]} outs(%x : !spyre.buffer<32xf32>) {
    %five = arith.constant 5.0 : f32
    spyre.yield %five : f32
  }
  spyre.generic domain [32] {indexing_maps = [#all, #all], spyre.cores = 1 : i64,
      spyre.tile = array<i64: 32>, spyre.lx = array<i64: 0, 128>,
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<32xf32>) outs(%x : !spyre.buffer<32xf32>) {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    %w = arith.addf %v, %one : f32
    spyre.yield %w : f32
  }
  spyre.generic domain [32] {indexing_maps = [#all, #all], spyre.cores = 1 : i64,
      spyre.tile = array<i64: 32>, spyre.lx = array<i64: 0, 128>,
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<32xf32>) outs(%y : !spyre.buffer<32xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
