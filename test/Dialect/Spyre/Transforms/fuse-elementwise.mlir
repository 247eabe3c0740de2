// RUN: spyre-opt %s -split-input-file -spyre-fuse-elementwise -canonicalize | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-fuse-elementwise="report-missed=true" -verify-diagnostics -o /dev/null

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A chain of three elementwise ops becomes one; the temporaries go away.
// CHECK-LABEL: spyre.kernel @chain
// CHECK-NOT: spyre.alloc
// CHECK: spyre.generic domain [4, 64] {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}]
// CHECK-SAME: ins(%arg0, %arg1 : !spyre.buffer<4x64xf16>, !spyre.buffer<4x64xf16>) outs(%arg2 : !spyre.buffer<4x64xf16>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[X]] : f16
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[E]] : f16
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[N]], %[[Y]] : f16
// CHECK-NEXT: spyre.yield %[[S]] : f16
// CHECK-NOT: spyre.generic
spyre.kernel @chain(%x: !spyre.buffer<4x64xf16>, %y: !spyre.buffer<4x64xf16>, %z: !spyre.buffer<4x64xf16>) {
  %t0 = spyre.alloc() : !spyre.buffer<4x64xf16, lx>
  %t1 = spyre.alloc() : !spyre.buffer<4x64xf16, lx>
  spyre.generic domain [4, 64] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x64xf16>) outs(%t0 : !spyre.buffer<4x64xf16, lx>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.generic domain [4, 64] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t0 : !spyre.buffer<4x64xf16, lx>) outs(%t1 : !spyre.buffer<4x64xf16, lx>) {
  ^bb0(%v: f16):
    %n = arith.negf %v : f16
    spyre.yield %n : f16
  }
  spyre.generic domain [4, 64] {indexing_maps = [#id, #id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t1, %y : !spyre.buffer<4x64xf16, lx>, !spyre.buffer<4x64xf16>) outs(%z : !spyre.buffer<4x64xf16>) {
  ^bb0(%a: f16, %b: f16):
    %s = arith.addf %a, %b : f16
    spyre.yield %s : f16
  }
  spyre.dealloc %t0 : !spyre.buffer<4x64xf16, lx>
  spyre.dealloc %t1 : !spyre.buffer<4x64xf16, lx>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An elementwise prologue fuses into a row reduction.
// CHECK-LABEL: spyre.kernel @into_reduction
// CHECK: spyre.generic domain [4, 64] {combiners = [#spyre.combiner<sum>]
// CHECK-SAME: ins(%arg0 : !spyre.buffer<4x64xf16>) outs(%arg1 : !spyre.buffer<4xf32>)
// CHECK: math.exp
// CHECK: arith.extf
// CHECK-NOT: spyre.generic
spyre.kernel @into_reduction(%x: !spyre.buffer<4x64xf16>, %s: !spyre.buffer<4xf32>) {
  %t = spyre.alloc() : !spyre.buffer<4x64xf16>
  spyre.generic domain [4, 64] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x64xf16>) outs(%t : !spyre.buffer<4x64xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.generic domain [4, 64] {indexing_maps = [#id, #row], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%t : !spyre.buffer<4x64xf16>) outs(%s : !spyre.buffer<4xf32>) {
  ^bb0(%v: f16):
    %w = arith.extf %v : f16 to f32
    spyre.yield %w : f32
  }
  spyre.dealloc %t : !spyre.buffer<4x64xf16>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

// Not fused: the consumer reads the temporary transposed.
// CHECK-LABEL: spyre.kernel @transposed_read
// CHECK-COUNT-2: spyre.generic
spyre.kernel @transposed_read(%x: !spyre.buffer<8x8xf16>, %z: !spyre.buffer<8x8xf16>) {
  %t = spyre.alloc() : !spyre.buffer<8x8xf16>
  // expected-remark @+1 {{not fused: the consumer reads the temporary elsewhere than it was written}}
  spyre.generic domain [8, 8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x8xf16>) outs(%t : !spyre.buffer<8x8xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.generic domain [8, 8] {indexing_maps = [#t, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t : !spyre.buffer<8x8xf16>) outs(%z : !spyre.buffer<8x8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Not fused: two consumers would each recompute the producer.
// CHECK-LABEL: spyre.kernel @two_readers
// CHECK-COUNT-3: spyre.generic
spyre.kernel @two_readers(%x: !spyre.buffer<8xf32>, %a: !spyre.buffer<8xf32>, %b: !spyre.buffer<8xf32>) {
  %t = spyre.alloc() : !spyre.buffer<8xf32>
  // expected-remark @+1 {{not fused: the temporary has other users than one consumer}}
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8xf32>) outs(%t : !spyre.buffer<8xf32>) {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    spyre.yield %e : f32
  }
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%t : !spyre.buffer<8xf32>) outs(%a : !spyre.buffer<8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%t : !spyre.buffer<8xf32>) outs(%b : !spyre.buffer<8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Not fused: the consumer writes what the producer reads.
// CHECK-LABEL: spyre.kernel @in_place
// CHECK-COUNT-2: spyre.generic
spyre.kernel @in_place(%x: !spyre.buffer<8xf32>) {
  %t = spyre.alloc() : !spyre.buffer<8xf32>
  // expected-remark @+1 {{not fused: the consumer overwrites an input of the producer}}
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8xf32>) outs(%t : !spyre.buffer<8xf32>) {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    spyre.yield %e : f32
  }
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%t : !spyre.buffer<8xf32>) outs(%x : !spyre.buffer<8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
