// RUN: spyre-opt %s -spyre-divide-work -spyre-tile -spyre-plan-memory -spyre-check-lx | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// Slots in order: input x2, output x2, temporaries %a, %b, %c. With a 2 x 64
// f32 tile each copy is 512 bytes. %a (live over body positions [0, 2)) and
// %c ([2, 4)) share bytes; %b ([1, 3)) overlaps both in time and gets its own.
// CHECK-LABEL: spyre.kernel @temps
// CHECK: spyre.lx = array<i64: 0, 1024, 2048, 2560, 2048>, spyre.tile = array<i64: 2, 64>
spyre.kernel @temps(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.tile = array<i64: 2, 64>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    %a = math.exp %v : f32
    %b = arith.mulf %a, %a : f32
    %c = math.tanh %b : f32
    %d = arith.addf %c, %v : f32
    spyre.yield %d : f32
  }
  spyre.return
}

// Device memory: %t1 is dead once the second op has read it, so %t3 reuses
// its bytes; %t2 is live meanwhile and does not.
// CHECK-LABEL: spyre.kernel @scratch
// CHECK-SAME: spyre.scratch_bytes = 512
// CHECK: spyre.alloc() {spyre.device_offset = 0 : i64}
// CHECK: spyre.alloc() {spyre.device_offset = 256 : i64}
// CHECK: spyre.alloc() {spyre.device_offset = 0 : i64}
spyre.kernel @scratch(%x: !spyre.buffer<8x8xf32>, %y: !spyre.buffer<8x8xf32>) {
  %t1 = spyre.alloc() : !spyre.buffer<8x8xf32>
  %t2 = spyre.alloc() : !spyre.buffer<8x8xf32>
  %t3 = spyre.alloc() : !spyre.buffer<8x8xf32>
  spyre.generic domain [8, 8] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x8xf32>) outs(%t1 : !spyre.buffer<8x8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [8, 8] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t1 : !spyre.buffer<8x8xf32>) outs(%t2 : !spyre.buffer<8x8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [8, 8] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t2 : !spyre.buffer<8x8xf32>) outs(%t3 : !spyre.buffer<8x8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [8, 8] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t3, %t2 : !spyre.buffer<8x8xf32>, !spyre.buffer<8x8xf32>) outs(%y : !spyre.buffer<8x8xf32>) {
  ^bb0(%v: f32, %w: f32):
    %s = arith.addf %v, %w : f32
    spyre.yield %s : f32
  }
  spyre.return
}
