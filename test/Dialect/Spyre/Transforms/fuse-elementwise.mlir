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

// -----

#pos = affine_map<(d0) -> (d0)>
#one = affine_map<(d0) -> (0)>
#row3 = affine_map<(d0, d1, d2) -> (d1)>
#first3 = affine_map<(d0, d1, d2) -> (0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Positions (an iota) and a constant, computed without loads, are
// recomputed by each reader over the reader's own domain: the iota's
// index_expr follows the map the reader loaded it with, and the temporaries
// go. Two readers both recompute.
// CHECK: #[[ROW:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: spyre.kernel @loadless_producers
// CHECK-NOT: spyre.alloc
// CHECK: spyre.generic domain [4, 8, 16]
// CHECK-SAME: ins(%arg0 : !spyre.buffer<4x8x16xf16>) outs(%arg1
// CHECK-DAG: %[[AT:.*]] = arith.constant 3 : i32
// CHECK-DAG: %[[P:.*]] = spyre.index_expr #[[ROW]] : i32
// CHECK: arith.cmpi eq, %[[P]], %[[AT]] : i32
// CHECK: spyre.generic domain [4, 8, 16]
// CHECK-SAME: ins(%arg0 : !spyre.buffer<4x8x16xf16>) outs(%arg2
// CHECK: spyre.index_expr #[[ROW]] : i32
// CHECK-NOT: spyre.generic
spyre.kernel @loadless_producers(%x: !spyre.buffer<4x8x16xf16>, %y: !spyre.buffer<4x8x16xf16>, %z: !spyre.buffer<4x8x16xf16>) {
  %pos = spyre.alloc() : !spyre.buffer<8xi32>
  %at = spyre.alloc() : !spyre.buffer<1xi32>
  spyre.generic domain [8] {indexing_maps = [#pos], iterator_types = [#spyre.iterator<parallel>]}
      outs(%pos : !spyre.buffer<8xi32>) {
    %p = spyre.index_expr #pos : i32
    spyre.yield %p : i32
  }
  spyre.generic domain [1] {indexing_maps = [#one], iterator_types = [#spyre.iterator<parallel>]}
      outs(%at : !spyre.buffer<1xi32>) {
    %c = arith.constant 3 : i32
    spyre.yield %c : i32
  }
  spyre.generic domain [4, 8, 16] {indexing_maps = [#row3, #first3, #id3, #id3], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%pos, %at, %x : !spyre.buffer<8xi32>, !spyre.buffer<1xi32>, !spyre.buffer<4x8x16xf16>) outs(%y : !spyre.buffer<4x8x16xf16>) {
  ^bb0(%p: i32, %a: i32, %v: f16):
    %hit = arith.cmpi eq, %p, %a : i32
    %zero = arith.constant 0.0 : f16
    %r = arith.select %hit, %zero, %v : f16
    spyre.yield %r : f16
  }
  spyre.generic domain [4, 8, 16] {indexing_maps = [#row3, #id3, #id3], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%pos, %x : !spyre.buffer<8xi32>, !spyre.buffer<4x8x16xf16>) outs(%z : !spyre.buffer<4x8x16xf16>) {
  ^bb0(%p: i32, %v: f16):
    %f = arith.sitofp %p : i32 to f16
    %r = arith.addf %f, %v : f16
    spyre.yield %r : f16
  }
  spyre.dealloc %pos : !spyre.buffer<8xi32>
  spyre.dealloc %at : !spyre.buffer<1xi32>
  spyre.return
}

// -----

#pos = affine_map<(d0) -> (d0)>
#r = affine_map<(d0, d1) -> (d0)>
#c = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A reader that loads the positions twice (a causal mask: row >= column)
// recomputes them for each load, each through its own map.
// CHECK-DAG: #[[R:map[0-9]*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[C:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: spyre.kernel @loadless_read_twice
// CHECK-NOT: spyre.alloc
// CHECK: ins(%arg0 : !spyre.buffer<4x4xf32>)
// CHECK-DAG: %[[I:.*]] = spyre.index_expr #[[R]] : i32
// CHECK-DAG: %[[J:.*]] = spyre.index_expr #[[C]] : i32
// CHECK: arith.cmpi sge, %[[I]], %[[J]] : i32
spyre.kernel @loadless_read_twice(%x: !spyre.buffer<4x4xf32>, %y: !spyre.buffer<4x4xf32>) {
  %pos = spyre.alloc() : !spyre.buffer<4xi32>
  spyre.generic domain [4] {indexing_maps = [#pos], iterator_types = [#spyre.iterator<parallel>]}
      outs(%pos : !spyre.buffer<4xi32>) {
    %p = spyre.index_expr #pos : i32
    spyre.yield %p : i32
  }
  spyre.generic domain [4, 4] {indexing_maps = [#r, #c, #id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%pos, %pos, %x : !spyre.buffer<4xi32>, !spyre.buffer<4xi32>, !spyre.buffer<4x4xf32>) outs(%y : !spyre.buffer<4x4xf32>) {
  ^bb0(%i: i32, %j: i32, %v: f32):
    %seen = arith.cmpi sge, %i, %j : i32
    %inf = arith.constant 0xFF800000 : f32
    %m = arith.select %seen, %v, %inf : f32
    spyre.yield %m : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#flat = affine_map<(d0, d1) -> (d0 * 4 + d1)>

// A producer that writes its temporary transposed: element [a, b] of the
// temporary is the producer's index at (b, a), so its reader computes
// b * 4 + a.
// CHECK: #[[SWAPPED:map[0-9]*]] = affine_map<(d0, d1) -> (d1 * 4 + d0)>
// CHECK-LABEL: spyre.kernel @loadless_transposed
// CHECK-NOT: spyre.alloc
// CHECK: spyre.generic domain [4, 8]
// CHECK: spyre.index_expr #[[SWAPPED]] : i32
// CHECK-NOT: spyre.generic
spyre.kernel @loadless_transposed(%z: !spyre.buffer<4x8xi32>) {
  %t = spyre.alloc() : !spyre.buffer<4x8xi32>
  spyre.generic domain [8, 4] {indexing_maps = [#t], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      outs(%t : !spyre.buffer<4x8xi32>) {
    %p = spyre.index_expr #flat : i32
    spyre.yield %p : i32
  }
  spyre.generic domain [4, 8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t : !spyre.buffer<4x8xi32>) outs(%z : !spyre.buffer<4x8xi32>) {
  ^bb0(%v: i32):
    spyre.yield %v : i32
  }
  spyre.return
}

// -----

#pos = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Not recomputed: a product reads the positions, and it has no body to
// compute them in.
// CHECK-LABEL: spyre.kernel @loadless_read_by_a_product
// CHECK: spyre.alloc
// CHECK: spyre.generic
// CHECK: spyre.matmul
spyre.kernel @loadless_read_by_a_product(%w: !spyre.buffer<64x64xf16>, %z: !spyre.buffer<1x64xf32>) {
  %t = spyre.alloc() : !spyre.buffer<1x64xf16>
  // expected-remark @+2 {{not recomputed by its readers: the temporary has a user that is not a later generic reading it}}
  // expected-remark @+1 {{not fused: the temporary has other users than one consumer}}
  spyre.generic domain [1, 64] {indexing_maps = [#pos], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      outs(%t : !spyre.buffer<1x64xf16>) {
    %p = spyre.index_expr #col : i32
    %f = arith.sitofp %p : i32 to f16
    spyre.yield %f : f16
  }
  spyre.matmul ins(%t, %w : !spyre.buffer<1x64xf16>, !spyre.buffer<64x64xf16>) outs(%z : !spyre.buffer<1x64xf32>)
  spyre.return
}

// -----

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>

// A LayerNorm's mean (the row sums over the row length) is read once per
// row by the variance and the normalization: each computes it from the
// sums itself, so that the three row loops follow one another.
// CHECK-LABEL: spyre.kernel @per_row_producer
// CHECK: %[[SUM:.*]] = spyre.alloc() : !spyre.buffer<4xf32>
// CHECK-NOT: spyre.alloc
// CHECK: spyre.generic domain [4, 64] {{.*}} outs(%[[SUM]] :
// CHECK: spyre.generic domain [4, 64] {combiners = [#spyre.combiner<sum>], indexing_maps = [#[[X:map[0-9]*]], #[[R:map[0-9]*]], #[[R]]]
// CHECK-SAME: ins(%arg0, %[[SUM]] : !spyre.buffer<4x64xf16>, !spyre.buffer<4xf32>) outs(%arg1 :
// CHECK-NEXT: ^bb0(%[[E:.*]]: f16, %[[S:.*]]: f32):
// CHECK: %[[M:.*]] = arith.divf %[[S]], %{{.*}} : f32
// CHECK: arith.subf %{{.*}}, %[[M]] : f32
// CHECK: spyre.generic domain [4, 64] {indexing_maps = [#[[X]], #[[R]], #[[X]]]
// CHECK-SAME: ins(%arg0, %[[SUM]] : !spyre.buffer<4x64xf16>, !spyre.buffer<4xf32>) outs(%arg2 :
// CHECK: arith.divf
// CHECK-NOT: spyre.generic
spyre.kernel @per_row_producer(%x: !spyre.buffer<4x64xf16>, %var: !spyre.buffer<4xf32>, %y: !spyre.buffer<4x64xf16>) {
  %sum = spyre.alloc() : !spyre.buffer<4xf32>
  %mean = spyre.alloc() : !spyre.buffer<4xf32>
  // expected-remark @+1 {{not fused: the producer has several outputs or combiners}}
  spyre.generic domain [4, 64] {combiners = [#spyre.combiner<sum>], indexing_maps = [#x, #r], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<4x64xf16>) outs(%sum : !spyre.buffer<4xf32>) {
  ^bb0(%e: f16):
    %w = arith.extf %e : f16 to f32
    spyre.yield %w : f32
  }
  spyre.generic domain [4] {indexing_maps = [#v, #v], iterator_types = [#spyre.iterator<parallel>]}
      ins(%sum : !spyre.buffer<4xf32>) outs(%mean : !spyre.buffer<4xf32>) {
  ^bb0(%s: f32):
    %n = arith.constant 6.400000e+01 : f32
    %m = arith.divf %s, %n : f32
    spyre.yield %m : f32
  }
  spyre.generic domain [4, 64] {combiners = [#spyre.combiner<sum>], indexing_maps = [#x, #r, #r], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x, %mean : !spyre.buffer<4x64xf16>, !spyre.buffer<4xf32>) outs(%var : !spyre.buffer<4xf32>) {
  ^bb0(%e: f16, %m: f32):
    %w = arith.extf %e : f16 to f32
    %d = arith.subf %w, %m : f32
    %q = arith.mulf %d, %d : f32
    spyre.yield %q : f32
  }
  spyre.generic domain [4, 64] {indexing_maps = [#x, #r, #x], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mean : !spyre.buffer<4x64xf16>, !spyre.buffer<4xf32>) outs(%y : !spyre.buffer<4x64xf16>) {
  ^bb0(%e: f16, %m: f32):
    %w = arith.extf %e : f16 to f32
    %d = arith.subf %w, %m : f32
    %h = arith.truncf %d : f32 to f16
    spyre.yield %h : f16
  }
  spyre.return
}

// -----

#t = affine_map<(d0, d1) -> (d1, d0)>
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#c = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>

// A LayerNorm over the channels of a channel-first image ([channels,
// positions], statistics per position): Inductor iterates the normalization
// over its output, channels first, so the statistics change along its
// innermost loop. Its loops turn to the reduction's [positions, channels],
// and the mean is then read once per row and recomputed.
// CHECK-LABEL: spyre.kernel @channel_first_normalization
// CHECK: %[[SUM:.*]] = spyre.alloc() : !spyre.buffer<16xf32>
// CHECK-NOT: spyre.alloc
// CHECK: spyre.generic domain [16, 32] {{.*}} outs(%[[SUM]] :
// CHECK: spyre.generic domain [16, 32] {combiners = [#spyre.combiner<sum>]
// CHECK: spyre.generic domain [16, 32] {indexing_maps = [#[[T:map[0-9]*]], #[[R:map[0-9]*]], #[[T]]]
// CHECK-SAME: ins(%arg0, %[[SUM]] : !spyre.buffer<32x16xf16>, !spyre.buffer<16xf32>) outs(%arg2 :
// CHECK: arith.divf
// CHECK-NOT: spyre.generic
spyre.kernel @channel_first_normalization(%x: !spyre.buffer<32x16xf16>, %var: !spyre.buffer<16xf32>, %y: !spyre.buffer<32x16xf16>) {
  %sum = spyre.alloc() : !spyre.buffer<16xf32>
  %mean = spyre.alloc() : !spyre.buffer<16xf32>
  // expected-remark @+1 {{not fused: the producer has several outputs or combiners}}
  spyre.generic domain [16, 32] {combiners = [#spyre.combiner<sum>], indexing_maps = [#t, #r], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<32x16xf16>) outs(%sum : !spyre.buffer<16xf32>) {
  ^bb0(%e: f16):
    %w = arith.extf %e : f16 to f32
    spyre.yield %w : f32
  }
  spyre.generic domain [16] {indexing_maps = [#v, #v], iterator_types = [#spyre.iterator<parallel>]}
      ins(%sum : !spyre.buffer<16xf32>) outs(%mean : !spyre.buffer<16xf32>) {
  ^bb0(%s: f32):
    %n = arith.constant 3.200000e+01 : f32
    %m = arith.divf %s, %n : f32
    spyre.yield %m : f32
  }
  spyre.generic domain [16, 32] {combiners = [#spyre.combiner<sum>], indexing_maps = [#t, #r, #r], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x, %mean : !spyre.buffer<32x16xf16>, !spyre.buffer<16xf32>) outs(%var : !spyre.buffer<16xf32>) {
  ^bb0(%e: f16, %m: f32):
    %w = arith.extf %e : f16 to f32
    %d = arith.subf %w, %m : f32
    %q = arith.mulf %d, %d : f32
    spyre.yield %q : f32
  }
  spyre.generic domain [32, 16] {indexing_maps = [#x, #c, #x], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mean : !spyre.buffer<32x16xf16>, !spyre.buffer<16xf32>) outs(%y : !spyre.buffer<32x16xf16>) {
  ^bb0(%e: f16, %m: f32):
    %w = arith.extf %e : f16 to f32
    %d = arith.subf %w, %m : f32
    %h = arith.truncf %d : f32 to f16
    spyre.yield %h : f16
  }
  spyre.return
}

// -----

#t = affine_map<(d0, d1) -> (d1, d0)>
#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#c = affine_map<(d0, d1) -> (d1)>

// Not turned: the loop the statistics do not change along (8 rows) is not
// the one they were reduced over (32 channels), so the reader's rows are
// not the reduction's.
// CHECK-LABEL: spyre.kernel @other_loop_not_turned
// CHECK: spyre.generic domain [8, 16] {indexing_maps = [#{{map[0-9]*}}, #{{map[0-9]*}}, #{{map[0-9]*}}]
spyre.kernel @other_loop_not_turned(%x: !spyre.buffer<32x16xf16>, %z: !spyre.buffer<8x16xf16>, %y: !spyre.buffer<8x16xf32>) {
  %sum = spyre.alloc() : !spyre.buffer<16xf32>
  // expected-remark @+1 {{not fused: the producer has several outputs or combiners}}
  spyre.generic domain [16, 32] {combiners = [#spyre.combiner<sum>], indexing_maps = [#t, #r], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<32x16xf16>) outs(%sum : !spyre.buffer<16xf32>) {
  ^bb0(%e: f16):
    %w = arith.extf %e : f16 to f32
    spyre.yield %w : f32
  }
  spyre.generic domain [8, 16] {indexing_maps = [#x, #c, #x], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%z, %sum : !spyre.buffer<8x16xf16>, !spyre.buffer<16xf32>) outs(%y : !spyre.buffer<8x16xf32>) {
  ^bb0(%e: f16, %s: f32):
    %w = arith.extf %e : f16 to f32
    %d = arith.subf %w, %s : f32
    spyre.yield %d : f32
  }
  spyre.return
}

// -----

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0) -> (d0)>

// Not recomputed: the sums the mean is computed from are overwritten before
// its reader loads it.
// CHECK-LABEL: spyre.kernel @per_row_input_overwritten
// CHECK-COUNT-2: spyre.alloc
// CHECK-COUNT-3: spyre.generic
spyre.kernel @per_row_input_overwritten(%x: !spyre.buffer<4x64xf16>, %y: !spyre.buffer<4x64xf32>) {
  %sum = spyre.alloc() : !spyre.buffer<4xf32>
  %mean = spyre.alloc() : !spyre.buffer<4xf32>
  // expected-remark @+2 {{not recomputed by its readers: a later op writes what it loads before a reader loads it}}
  // expected-remark @+1 {{not fused: another op runs between producer and consumer}}
  spyre.generic domain [4] {indexing_maps = [#v, #v], iterator_types = [#spyre.iterator<parallel>]}
      ins(%sum : !spyre.buffer<4xf32>) outs(%mean : !spyre.buffer<4xf32>) {
  ^bb0(%s: f32):
    %n = arith.constant 6.400000e+01 : f32
    %m = arith.divf %s, %n : f32
    spyre.yield %m : f32
  }
  // expected-remark @+1 {{not fused: the producer has several outputs or combiners}}
  spyre.generic domain [4, 64] {combiners = [#spyre.combiner<sum>], indexing_maps = [#x, #r], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<4x64xf16>) outs(%sum : !spyre.buffer<4xf32>) {
  ^bb0(%e: f16):
    %w = arith.extf %e : f16 to f32
    spyre.yield %w : f32
  }
  spyre.generic domain [4, 64] {indexing_maps = [#x, #r, #x], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mean : !spyre.buffer<4x64xf16>, !spyre.buffer<4xf32>) outs(%y : !spyre.buffer<4x64xf32>) {
  ^bb0(%e: f16, %m: f32):
    %w = arith.extf %e : f16 to f32
    %d = arith.subf %w, %m : f32
    spyre.yield %d : f32
  }
  spyre.return
}

// -----

// A one-element value computed from a 0-d input (x - log(s)): its reader
// recomputes it from the input, read at its only element. (The remap of the
// input's map through the value's point crashed here.)
#one = affine_map<(d0) -> (0)>
#all = affine_map<(d0, d1) -> (0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: spyre.kernel @one_element_from_an_input
// CHECK: spyre.generic domain [2, 64]
// CHECK-SAME: ins(%arg0, %arg1 : !spyre.buffer<2x64xf32>, !spyre.buffer<1xf32>)
// CHECK: math.log
// CHECK: arith.subf
// CHECK-NOT: spyre.generic
spyre.kernel @one_element_from_an_input(%x: !spyre.buffer<2x64xf32>, %s: !spyre.buffer<1xf32>, %y: !spyre.buffer<2x64xf32>) {
  %l = spyre.alloc() : !spyre.buffer<1xf32>
  spyre.generic domain [1] {indexing_maps = [#one, #one], iterator_types = [#spyre.iterator<parallel>]}
      ins(%s : !spyre.buffer<1xf32>) outs(%l : !spyre.buffer<1xf32>) {
  ^bb0(%v: f32):
    %r = math.log %v : f32
    spyre.yield %r : f32
  }
  spyre.generic domain [2, 64] {indexing_maps = [#id, #all, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %l : !spyre.buffer<2x64xf32>, !spyre.buffer<1xf32>) outs(%y : !spyre.buffer<2x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.subf %a, %b : f32
    spyre.yield %r : f32
  }
  spyre.dealloc %l : !spyre.buffer<1xf32>
  spyre.return
}
