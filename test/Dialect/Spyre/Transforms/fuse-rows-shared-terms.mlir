// RUN: spyre-opt %s -split-input-file -spyre-fuse-rows | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A norm of a residual sum, as Inductor writes it: each pass recomputes the
// sum. In the group, a member of its own computes it once per tile into an
// f32 tile that the passes read; neither pass adds any more, and the input
// rows are read by the new member only.
// CHECK-LABEL: spyre.kernel @residual_norm
// CHECK: spyre.fused {
// CHECK-NEXT: %[[H:.*]] = spyre.alloc() : !spyre.buffer<1024xf32>
// CHECK: spyre.generic domain [16, 64] {indexing_maps = [#{{.*}}, #{{.*}}, #[[LIN:.*]]], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]} ins(%arg0, %arg1 : {{.*}}) outs(%[[H]] : !spyre.buffer<1024xf32>)
// CHECK: arith.addf
// CHECK-NEXT: spyre.yield
// CHECK: spyre.generic {{.*}}combiners = [#spyre.combiner<sum>]{{.*}} ins(%[[H]] : !spyre.buffer<1024xf32>) outs(%[[S:[^ ]*]]
// CHECK-NOT: arith.addf
// CHECK: spyre.generic {{.*}} ins(%[[S]], %[[H]] : {{.*}}) outs(%arg2
// CHECK-NOT: arith.addf
// CHECK: arith.subf
// CHECK: spyre.return
spyre.kernel @residual_norm(%x: !spyre.buffer<16x64xf16>, %y: !spyre.buffer<16x64xf16>,
                            %out: !spyre.buffer<16x64xf32>) {
  %sum = spyre.alloc() : !spyre.buffer<16xf32>
  spyre.generic domain [16, 64] {indexing_maps = [#id, #id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x, %y : !spyre.buffer<16x64xf16>, !spyre.buffer<16x64xf16>)
      outs(%sum : !spyre.buffer<16xf32>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %h = arith.addf %a32, %b32 : f32
    spyre.yield %h : f32
  }
  spyre.generic domain [16, 64] {indexing_maps = [#id, #id, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %y, %sum : !spyre.buffer<16x64xf16>, !spyre.buffer<16x64xf16>, !spyre.buffer<16xf32>)
      outs(%out : !spyre.buffer<16x64xf32>) {
  ^bb0(%a: f16, %b: f16, %s: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %h = arith.addf %a32, %b32 : f32
    %c = arith.constant 6.400000e+01 : f32
    %m = arith.divf %s, %c : f32
    %d = arith.subf %h, %m : f32
    spyre.yield %d : f32
  }
  spyre.dealloc %sum : !spyre.buffer<16xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Terms that are not worth a tile stay where they are: a conversion (free
// on the SFU) and a per-row value (computed once per row already).
// CHECK-LABEL: spyre.kernel @cheap_terms
// CHECK: spyre.fused {
// CHECK-NEXT: spyre.alloc() : !spyre.buffer<16xf32>
// CHECK-NEXT: spyre.generic {{.*}}combiners = [#spyre.combiner<sum>]
// CHECK: arith.mulf
// CHECK: spyre.generic
// CHECK: arith.mulf
// CHECK: spyre.return
spyre.kernel @cheap_terms(%x: !spyre.buffer<16x64xf16>, %r: !spyre.buffer<16xf32>,
                          %out: !spyre.buffer<16x64xf32>) {
  %sum = spyre.alloc() : !spyre.buffer<16xf32>
  spyre.generic domain [16, 64] {indexing_maps = [#id, #row, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x, %r : !spyre.buffer<16x64xf16>, !spyre.buffer<16xf32>)
      outs(%sum : !spyre.buffer<16xf32>) {
  ^bb0(%a: f16, %s: f32):
    %a32 = arith.extf %a : f16 to f32
    %twice = arith.mulf %s, %s : f32
    %p = arith.mulf %a32, %twice : f32
    spyre.yield %p : f32
  }
  spyre.generic domain [16, 64] {indexing_maps = [#id, #row, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %r, %sum : !spyre.buffer<16x64xf16>, !spyre.buffer<16xf32>, !spyre.buffer<16xf32>)
      outs(%out : !spyre.buffer<16x64xf32>) {
  ^bb0(%a: f16, %s: f32, %t: f32):
    %a32 = arith.extf %a : f16 to f32
    %twice = arith.mulf %s, %s : f32
    %q = arith.addf %a32, %t : f32
    %p = arith.mulf %q, %twice : f32
    spyre.yield %p : f32
  }
  spyre.dealloc %sum : !spyre.buffer<16xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Two shared terms: x * x (first computed by the first member) and x - s
// (of the temporary s, which the first member writes). One member computing
// both would have to run before the first member and after it: x * x is
// computed once, before the first member; x - s stays in both its members.
// CHECK-LABEL: spyre.kernel @late_temporary
// CHECK: spyre.fused {
// CHECK: %[[SQ:.*]] = spyre.alloc() : !spyre.buffer<1024xf32>
// CHECK: spyre.generic {{.*}} ins(%arg0 : {{.*}}) outs(%[[SQ]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: spyre.yield
// CHECK: spyre.generic {{.*}} ins(%[[SQ]] :
// CHECK: spyre.generic {{.*}} ins(%arg0, %{{.*}} :
// CHECK: arith.subf
// CHECK: spyre.generic {{.*}} ins(%arg0, %{{.*}}, %{{.*}}, %[[SQ]] :
// CHECK-NOT: arith.mulf %arg
// CHECK: arith.subf
// CHECK: spyre.return
spyre.kernel @late_temporary(%x: !spyre.buffer<16x64xf32>, %out: !spyre.buffer<16x64xf32>) {
  %s = spyre.alloc() : !spyre.buffer<16xf32>
  %t = spyre.alloc() : !spyre.buffer<16xf32>
  spyre.generic domain [16, 64] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<16x64xf32>) outs(%s : !spyre.buffer<16xf32>) {
  ^bb0(%a: f32):
    %sq = arith.mulf %a, %a : f32
    spyre.yield %sq : f32
  }
  spyre.generic domain [16, 64] {indexing_maps = [#id, #row, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x, %s : !spyre.buffer<16x64xf32>, !spyre.buffer<16xf32>) outs(%t : !spyre.buffer<16xf32>) {
  ^bb0(%a: f32, %m: f32):
    %d = arith.subf %a, %m : f32
    spyre.yield %d : f32
  }
  spyre.generic domain [16, 64] {indexing_maps = [#id, #row, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %s, %t : !spyre.buffer<16x64xf32>, !spyre.buffer<16xf32>, !spyre.buffer<16xf32>)
      outs(%out : !spyre.buffer<16x64xf32>) {
  ^bb0(%a: f32, %m: f32, %u: f32):
    %sq = arith.mulf %a, %a : f32
    %d = arith.subf %a, %m : f32
    %p = arith.mulf %d, %u : f32
    %r = arith.addf %p, %sq : f32
    spyre.yield %r : f32
  }
  spyre.dealloc %s : !spyre.buffer<16xf32>
  spyre.dealloc %t : !spyre.buffer<16xf32>
  spyre.return
}
