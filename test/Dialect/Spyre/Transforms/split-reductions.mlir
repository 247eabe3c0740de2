// RUN: spyre-opt %s -spyre-attach-arch -spyre-split-reductions | FileCheck %s
// RUN: spyre-opt %s -spyre-attach-arch -spyre-split-reductions=cores=1 | FileCheck %s --check-prefix=ONE

// The iota of @weighted_by_position below, rewritten with the loops.
// CHECK-DAG: #[[POS:.*]] = affine_map<(d0, d1) -> (d0 * 2048 + d1)>
// CHECK-DAG: #[[ELEMENT2:.*]] = affine_map<(d0) -> (2)>

// x.sum() of 16M f16: one output, so the uncut reduction ran on one core.
// 32 parts reduce into f32 partials (the sum's accumulator type), a second
// generic adds them, a third rounds the f32 total to f16 once.
// CHECK-LABEL: spyre.kernel @full_sum
// CHECK: %[[P:.*]] = spyre.alloc() : !spyre.buffer<32xf32>
// CHECK: spyre.generic domain [32, 524288] {combiners = [#spyre.combiner<sum>], indexing_maps = [#[[READ:.*]], #[[PART:.*]]], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]} ins(%arg0 : {{.*}}) outs(%[[P]] : !spyre.buffer<32xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: %[[T:.*]] = spyre.alloc() : !spyre.buffer<1xf32>
// CHECK: spyre.generic domain [32] {combiners = [#spyre.combiner<sum>], {{.*}} ins(%[[P]] : {{.*}}) outs(%[[T]] : !spyre.buffer<1xf32>)
// CHECK: spyre.generic domain [1] {{.*}} ins(%[[T]] : {{.*}}) outs(%arg1 : !spyre.buffer<1xf16>)
// CHECK: arith.truncf {{.*}} : f32 to f16
// ONE-LABEL: spyre.kernel @full_sum
// ONE-NOT: spyre.alloc
// ONE: spyre.generic domain [16777216]
spyre.kernel @full_sum(%x: !spyre.buffer<16777216xf16>, %y: !spyre.buffer<1xf16>) {
  spyre.generic domain [16777216] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<16777216xf16>) outs(%y : !spyre.buffer<1xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// any() over 256K booleans (T5's check for an infinity in an fp16 layer):
// the order of an OR does not change it, so it is cut like a float sum;
// the partials stay booleans.
// CHECK-LABEL: spyre.kernel @full_any
// CHECK: %[[P:.*]] = spyre.alloc() : !spyre.buffer<32xi1>
// CHECK: spyre.generic domain [32, 8192] {combiners = [#spyre.combiner<any>]{{.*}} outs(%[[P]] : !spyre.buffer<32xi1>)
// CHECK: math.isinf
// CHECK: spyre.generic domain [32] {combiners = [#spyre.combiner<any>], {{.*}} ins(%[[P]] : {{.*}}) outs(%arg1 : !spyre.buffer<1xi1>)
// CHECK-NOT: spyre.generic
spyre.kernel @full_any(%x: !spyre.buffer<262144xf16>, %y: !spyre.buffer<1xi1>) {
  spyre.generic domain [262144] {combiners = [#spyre.combiner<any>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<262144xf16>) outs(%y : !spyre.buffer<1xi1>) {
  ^bb0(%v: f16):
    %w = arith.extf %v : f16 to f32
    %inf = math.isinf %w : f32
    spyre.yield %inf : i1
  }
  spyre.return
}

// amax over 4 rows of 1M: 4 output tiles, 8 parts of each row; partials of
// a maximum keep the yielded type (no rounding), and two generics suffice.
// CHECK-LABEL: spyre.kernel @few_rows_max
// CHECK: %[[P:.*]] = spyre.alloc() : !spyre.buffer<8x4xf16>
// CHECK: spyre.generic domain [8, 4, 131072] {{.*}}#spyre.combiner<max>{{.*}} outs(%[[P]]
// CHECK: spyre.generic domain [4, 8] {{.*}}#spyre.combiner<max>{{.*}} ins(%[[P]] {{.*}} outs(%arg1
// CHECK-NOT: spyre.generic
spyre.kernel @few_rows_max(%x: !spyre.buffer<4x1048576xf16>, %y: !spyre.buffer<4xf16>) {
  spyre.generic domain [4, 1048576] {combiners = [#spyre.combiner<max>],
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<4x1048576xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// Left as they are: 64 rows give every core a tile; a Welford reduction
// over one loop (the cut does not merge its partials); a reduction too small to pay
// for a second op; an f32 sum whose loop no part count up to 32 divides
// into parts of at least 1024 points (2053 x 97 is 199141).
// CHECK-LABEL: spyre.kernel @kept
// CHECK-NOT: spyre.alloc
// CHECK: spyre.generic domain [64, 8192]
// CHECK: spyre.generic domain [4096]
// CHECK: spyre.generic domain [1024]
// CHECK: spyre.generic domain [199141]
spyre.kernel @kept(%a: !spyre.buffer<64x8192xf32>, %b: !spyre.buffer<64xf32>,
                   %c: !spyre.buffer<4096xf32>, %m: !spyre.buffer<1xf32>, %v: !spyre.buffer<1xf32>,
                   %n: !spyre.buffer<1xf32>, %d: !spyre.buffer<1024xf32>, %e: !spyre.buffer<1xf32>,
                   %f: !spyre.buffer<199141xf32>, %g: !spyre.buffer<1xf32>) {
  spyre.generic domain [64, 8192] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%a : !spyre.buffer<64x8192xf32>) outs(%b : !spyre.buffer<64xf32>) {
  ^bb0(%x: f32):
    spyre.yield %x : f32
  }
  spyre.generic domain [4096] {combiners = [#spyre.combiner<welford>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>,
                       affine_map<(d0) -> (0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%c : !spyre.buffer<4096xf32>)
      outs(%m, %v, %n : !spyre.buffer<1xf32>, !spyre.buffer<1xf32>, !spyre.buffer<1xf32>) {
  ^bb0(%x: f32):
    spyre.yield %x : f32
  }
  spyre.generic domain [1024] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%d : !spyre.buffer<1024xf32>) outs(%e : !spyre.buffer<1xf32>) {
  ^bb0(%x: f32):
    spyre.yield %x : f32
  }
  spyre.generic domain [199141] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%f : !spyre.buffer<199141xf32>) outs(%g : !spyre.buffer<1xf32>) {
  ^bb0(%x: f32):
    spyre.yield %x : f32
  }
  spyre.return
}

// A body reading its loop position (Inductor's index_expr: an iota weight)
// reads the old loop's: the part's offset plus the position in the part.
// CHECK-LABEL: spyre.kernel @weighted_by_position
// CHECK: spyre.generic domain [32, 2048]
// CHECK: spyre.index_expr #[[POS]] : i32
// CHECK: spyre.generic domain [32]
spyre.kernel @weighted_by_position(%x: !spyre.buffer<65536xf32>, %y: !spyre.buffer<1xf32>) {
  spyre.generic domain [65536] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<65536xf32>) outs(%y : !spyre.buffer<1xf32>) {
  ^bb0(%v: f32):
    %i = spyre.index_expr affine_map<(d0) -> (d0)> : i32
    %f = arith.sitofp %i : i32 to f32
    %w = arith.mulf %v, %f : f32
    spyre.yield %w : f32
  }
  spyre.return
}

// A reduction writing one element of its output (a slice of a
// concatenation): the f32 total is a temporary of its own, and the rounding
// writes that element only.
// CHECK-LABEL: spyre.kernel @into_a_slice
// CHECK: %[[T:.*]] = spyre.alloc() : !spyre.buffer<1xf32>
// CHECK: spyre.generic domain [32] {{.*}} outs(%[[T]] : !spyre.buffer<1xf32>)
// CHECK: spyre.generic domain [1] {indexing_maps = [#{{.*}}, #[[ELEMENT2]]], {{.*}} ins(%[[T]] {{.*}} outs(%arg1 : !spyre.buffer<4xf16>)
// Integer sums saturate on the card, so another order could change them: not cut.
// CHECK: spyre.generic domain [131072] {combiners = [#spyre.combiner<sum>]
spyre.kernel @into_a_slice(%x: !spyre.buffer<65536xf16>, %y: !spyre.buffer<4xf16>,
                           %i: !spyre.buffer<131072xi32>, %s: !spyre.buffer<1xi32>) {
  spyre.generic domain [65536] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (2)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<65536xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [131072] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%i : !spyre.buffer<131072xi32>) outs(%s : !spyre.buffer<1xi32>) {
  ^bb0(%v: i32):
    spyre.yield %v : i32
  }
  spyre.return
}

// A sum over two loops (a GroupNorm's statistics over 128 channels of 2 x 2
// positions, a per-channel weight keeping Inductor from flattening them):
// the plan would step the channels one at a time. The channels become a parallel loop of a first generic reducing the
// 4 positions into f32 partials [2, 128], a second sums each image's 128
// partials (a contiguous row), a third rounds the total once. A maximum
// over three loops folds the outer two (2 x 3) into one row of partials.
// CHECK-LABEL: spyre.kernel @short_inner_loop
// CHECK: %[[P:.*]] = spyre.alloc() : !spyre.buffer<2x128xf32>
// CHECK: spyre.generic domain [2, 128, 4] {combiners = [#spyre.combiner<sum>], indexing_maps = [#{{.*}}, #{{.*}}, #[[PIDX:.*]]], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<reduction>]} {{.*}} outs(%[[P]] : !spyre.buffer<2x128xf32>)
// CHECK: %[[T:.*]] = spyre.alloc() : !spyre.buffer<2xf32>
// CHECK: spyre.generic domain [2, 128] {combiners = [#spyre.combiner<sum>], {{.*}} iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]} ins(%[[P]] : {{.*}}) outs(%[[T]] : !spyre.buffer<2xf32>)
// CHECK: spyre.generic domain [2] {{.*}} ins(%[[T]] : {{.*}}) outs(%arg2 : !spyre.buffer<2xf16>)
// CHECK: %[[M:.*]] = spyre.alloc() : !spyre.buffer<6xf16>
// CHECK: spyre.generic domain [2, 3, 16] {combiners = [#spyre.combiner<max>], {{.*}} iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<reduction>]} {{.*}} outs(%[[M]] : !spyre.buffer<6xf16>)
// CHECK: spyre.generic domain [6] {combiners = [#spyre.combiner<max>], {{.*}} outs(%arg3 : !spyre.buffer<1xf16>)
// CHECK-NOT: spyre.generic
spyre.kernel @short_inner_loop(%x: !spyre.buffer<1024xf16>, %w: !spyre.buffer<128xf16>,
                               %y: !spyre.buffer<2xf16>, %z: !spyre.buffer<1xf16>) {
  spyre.generic domain [2, 128, 4] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0 * 512 + d1 * 4 + d2)>,
                       affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>,
                        #spyre.iterator<reduction>]}
      ins(%x, %w : !spyre.buffer<1024xf16>, !spyre.buffer<128xf16>)
      outs(%y : !spyre.buffer<2xf16>) {
  ^bb0(%v: f16, %s: f16):
    %p = arith.mulf %v, %s : f16
    spyre.yield %p : f16
  }
  spyre.generic domain [2, 3, 16] {combiners = [#spyre.combiner<max>],
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0 * 48 + d1 * 16 + d2)>,
                       affine_map<(d0, d1, d2) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>, #spyre.iterator<reduction>,
                        #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<1024xf16>) outs(%z : !spyre.buffer<1xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// A Welford reduction (a variance's statistics) over 8 channels of 4
// positions: partial states per channel, then the means' Welford writes
// the mean (and their M2 and count), the M2s are summed, and the total M2
// is their sum plus 4 (the points per partial) times the means' M2, the
// count 4 times theirs (Chan et al. for equal counts).
// CHECK-LABEL: spyre.kernel @short_inner_welford
// CHECK-COUNT-3: spyre.alloc() : !spyre.buffer<2x8xf32>
// CHECK: spyre.generic domain [2, 8, 4] {combiners = [#spyre.combiner<welford>], {{.*}} iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<reduction>]} ins(%arg0, %arg1 : {{.*}}) outs(%[[MEAN:.*]], %[[M2:.*]], %[[COUNT:.*]] : !spyre.buffer<2x8xf32>
// CHECK: spyre.generic domain [2, 8] {combiners = [#spyre.combiner<welford>], {{.*}} ins(%[[MEAN]] : {{.*}}) outs(%arg2, %[[MM2:.*]], %[[MCOUNT:.*]] :
// CHECK: spyre.generic domain [2, 8] {combiners = [#spyre.combiner<sum>], {{.*}} ins(%[[M2]] : {{.*}}) outs(%[[SUM:.*]] :
// CHECK: spyre.generic domain [2] {{.*}} ins(%[[SUM]], %[[MM2]], %[[MCOUNT]] : {{.*}}) outs(%arg3, %arg4 :
// CHECK: ^bb0(%[[S:.*]]: f32, %[[Q:.*]]: f32, %[[N:.*]]: f32):
// CHECK: %[[P:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[SPREAD:.*]] = arith.mulf %[[Q]], %[[P]] : f32
// CHECK: %[[TOTAL:.*]] = arith.addf %[[S]], %[[SPREAD]] : f32
// CHECK: %[[C:.*]] = arith.mulf %[[N]], %[[P]] : f32
// CHECK: spyre.yield %[[TOTAL]], %[[C]] : f32, f32
spyre.kernel @short_inner_welford(%x: !spyre.buffer<64xf16>, %w: !spyre.buffer<8xf16>,
                                  %mean: !spyre.buffer<2xf32>, %m2: !spyre.buffer<2xf32>,
                                  %count: !spyre.buffer<2xf32>) {
  spyre.generic domain [2, 8, 4] {combiners = [#spyre.combiner<welford>],
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0 * 32 + d1 * 4 + d2)>,
                       affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0)>,
                       affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>,
                        #spyre.iterator<reduction>]}
      ins(%x, %w : !spyre.buffer<64xf16>, !spyre.buffer<8xf16>)
      outs(%mean, %m2, %count : !spyre.buffer<2xf32>, !spyre.buffer<2xf32>, !spyre.buffer<2xf32>) {
  ^bb0(%v: f16, %s: f16):
    %p = arith.mulf %v, %s : f16
    %e = arith.extf %p : f16 to f32
    spyre.yield %e : f32
  }
  spyre.return
}

// A long inner loop (64 channels of 56 x 56 positions, one image): the
// uncut plan would run the one output's 64 steps on one core. The
// partials' 64 rows give the cores work; the combine sums one row of 64.
// CHECK-LABEL: spyre.kernel @long_inner_loop
// CHECK: spyre.generic domain [64, 3136] {combiners = [#spyre.combiner<sum>], {{.*}} iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]} {{.*}} outs(%{{.*}} : !spyre.buffer<64xf32>)
// CHECK: spyre.generic domain [64] {combiners = [#spyre.combiner<sum>], {{.*}} iterator_types = [#spyre.iterator<reduction>]}
spyre.kernel @long_inner_loop(%x: !spyre.buffer<200704xf16>, %w: !spyre.buffer<64xf16>,
                              %y: !spyre.buffer<1xf16>) {
  spyre.generic domain [64, 3136] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0, d1) -> (d0 * 3136 + d1)>, affine_map<(d0, d1) -> (d0)>,
                       affine_map<(d0, d1) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>, #spyre.iterator<reduction>]}
      ins(%x, %w : !spyre.buffer<200704xf16>, !spyre.buffer<64xf16>)
      outs(%y : !spyre.buffer<1xf16>) {
  ^bb0(%v: f16, %s: f16):
    %p = arith.mulf %v, %s : f16
    spyre.yield %p : f16
  }
  spyre.return
}

// The vector work decides, not the points: a masked minimum over 32000
// scores (a sampling step's threshold) computes five operations a point
// and is cut (into 25 parts of 1280: 32 parts would hold fewer than 1024
// points); a plain sum over as many points is left to one core.
// CHECK-LABEL: spyre.kernel @heavy_body
// CHECK: spyre.generic domain [25, 1280] {combiners = [#spyre.combiner<min>]
// CHECK: spyre.generic domain [25] {combiners = [#spyre.combiner<min>]
// CHECK: spyre.generic domain [32000] {combiners = [#spyre.combiner<sum>]
// CHECK-NOT: spyre.generic
spyre.kernel @heavy_body(%x: !spyre.buffer<32000xf32>, %t: !spyre.buffer<1xf32>,
                         %y: !spyre.buffer<1xf32>, %z: !spyre.buffer<1xf32>) {
  spyre.generic domain [32000] {combiners = [#spyre.combiner<min>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>,
                       affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%x, %t : !spyre.buffer<32000xf32>, !spyre.buffer<1xf32>)
      outs(%y : !spyre.buffer<1xf32>) {
  ^bb0(%v: f32, %low: f32):
    %temperature = arith.constant 8.000000e-01 : f32
    %inf = arith.constant 0x7F800000 : f32
    %s = arith.divf %v, %temperature : f32
    %d = arith.subf %s, %low : f32
    %m = arith.mulf %d, %d : f32
    %keep = arith.cmpf oge, %m, %low : f32
    %r = arith.select %keep, %s, %inf : f32
    spyre.yield %r : f32
  }
  spyre.generic domain [32000] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>],
      iterator_types = [#spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<32000xf32>) outs(%z : !spyre.buffer<1xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
