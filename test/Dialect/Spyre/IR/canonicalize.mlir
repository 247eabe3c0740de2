// RUN: spyre-opt %s -split-input-file -canonicalize | FileCheck %s

// CHECK-LABEL: spyre.kernel @identity_permute
// CHECK-NEXT: spyre.copy ins(%arg0 : !spyre.buffer<4x8xf16>) outs(%arg1 : !spyre.buffer<4x8xf16>)
// CHECK-NEXT: spyre.return
spyre.kernel @identity_permute(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x8xf16>) {
  spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x8xf16>) permutation = [0, 1]
  spyre.return
}

// -----

// A real transpose stays.
// CHECK-LABEL: spyre.kernel @transpose
// CHECK-NEXT: spyre.permute
spyre.kernel @transpose(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<8x4xf16>) {
  spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>) permutation = [1, 0]
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @empty_broadcast
// CHECK-NEXT: spyre.copy
spyre.kernel @empty_broadcast(%a: !spyre.buffer<8xf16>, %b: !spyre.buffer<8xf16>) {
  spyre.broadcast ins(%a : !spyre.buffer<8xf16>) outs(%b : !spyre.buffer<8xf16>) dimensions = []
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @whole_slice
// CHECK-NEXT: spyre.copy
spyre.kernel @whole_slice(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x8xf16>) {
  spyre.slice ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x8xf16>) offsets [0, 0] strides [1, 1]
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @partial_slice
// CHECK-NEXT: spyre.slice
spyre.kernel @partial_slice(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x4xf16>) {
  spyre.slice ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x4xf16>) offsets [0, 4] strides [1, 1]
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @single_concat
// CHECK-NEXT: spyre.copy ins(%arg0 : !spyre.buffer<4x8xf16>) outs(%arg1
spyre.kernel @single_concat(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x8xf16>) {
  spyre.concat ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x8xf16>) dim = 0
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @self_copy
// CHECK-NEXT: spyre.return
spyre.kernel @self_copy(%a: !spyre.buffer<4x8xf16>) {
  spyre.copy ins(%a : !spyre.buffer<4x8xf16>) outs(%a : !spyre.buffer<4x8xf16>)
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @static_dim
// CHECK-NOT: spyre.dim
// CHECK: spyre.generic domain [4] {
spyre.kernel @static_dim(%a: !spyre.buffer<4xf16>, %b: !spyre.buffer<4xf16>) {
  %n = spyre.dim %a[0] : !spyre.buffer<4xf16>
  spyre.generic domain [%n] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<4xf16>) outs(%b : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @dead_alloc
// CHECK-NEXT: spyre.return
spyre.kernel @dead_alloc(%n: index) {
  %t = spyre.alloc(%n) : !spyre.buffer<?x64xf16>
  spyre.dealloc %t : !spyre.buffer<?x64xf16>
  spyre.return
}

// -----

// An alloc that is used stays.
// CHECK-LABEL: spyre.kernel @live_alloc
// CHECK: spyre.alloc
// CHECK: spyre.copy
spyre.kernel @live_alloc(%a: !spyre.buffer<64xf16>) {
  %t = spyre.alloc() : !spyre.buffer<64xf16>
  spyre.copy ins(%a : !spyre.buffer<64xf16>) outs(%t : !spyre.buffer<64xf16>)
  spyre.copy ins(%t : !spyre.buffer<64xf16>) outs(%a : !spyre.buffer<64xf16>)
  spyre.dealloc %t : !spyre.buffer<64xf16>
  spyre.return
}

// -----

// Inputs read at the same index of the same buffer merge (Inductor loads an
// element once per use); an input the body does not read goes; the same
// buffer at another index stays. CSE then merges the repeated computation.
// CHECK-LABEL: spyre.kernel @repeated_inputs
// CHECK: spyre.generic domain [8] {indexing_maps = [#[[ID:map[0-9]*]], #[[NEXT:map[0-9]*]], #[[ID]]],
// CHECK-SAME: ins(%arg0, %arg0 : !spyre.buffer<9xf16>, !spyre.buffer<9xf16>) outs(%arg1 : !spyre.buffer<8xf16>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16):
// CHECK-NEXT: arith.maximumf %[[A]], %[[B]]
// CHECK-NEXT: arith.maximumf %[[A]], %[[B]]
spyre.kernel @repeated_inputs(%a: !spyre.buffer<9xf16>, %b: !spyre.buffer<8xf16>, %c: !spyre.buffer<8xf16>) {
  spyre.generic domain [8] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0 + 1)>,
      affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%a, %a, %c, %a : !spyre.buffer<9xf16>, !spyre.buffer<9xf16>, !spyre.buffer<8xf16>, !spyre.buffer<9xf16>)
      outs(%b : !spyre.buffer<8xf16>) {
  ^bb0(%x: f16, %y: f16, %unused: f16, %x2: f16):
    %m = arith.maximumf %x, %y : f16
    %m2 = arith.maximumf %x2, %y : f16
    %s = arith.addf %m, %m2 : f16
    spyre.yield %s : f16
  }
  spyre.return
}

// -----

// A one-hot row update as Inductor's index_put writes it: the mask is
// `select(hit, 0, -1) == 0` (that is, `hit`), and the chosen value is
// widened and narrowed back. What is left per element: one compare and one
// select, in f16.
// CHECK-LABEL: spyre.kernel @one_hot_update
// CHECK: ^bb0(%[[POS:.*]]: i32, %[[NEW:.*]]: f16, %[[OLD:.*]]: f16):
// CHECK-NEXT: %[[ROW:.*]] = spyre.index_expr
// CHECK-NEXT: %[[HIT:.*]] = arith.cmpi eq, %[[POS]], %[[ROW]] : i32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[HIT]], %[[NEW]], %[[OLD]] : f16
// CHECK-NEXT: spyre.yield %[[V]] : f16
spyre.kernel @one_hot_update(%pos: !spyre.buffer<1xi32>, %row: !spyre.buffer<64xf16>,
                             %cache: !spyre.buffer<8x64xf16>) {
  spyre.generic domain [8, 64] {indexing_maps = [affine_map<(d0, d1) -> (0)>,
      affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>,
      affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%pos, %row, %cache : !spyre.buffer<1xi32>, !spyre.buffer<64xf16>, !spyre.buffer<8x64xf16>)
      outs(%cache : !spyre.buffer<8x64xf16>) {
  ^bb0(%p: i32, %new: f16, %old: f16):
    %r = spyre.index_expr affine_map<(d0, d1) -> (d0)> : i32
    %hit = arith.cmpi eq, %p, %r : i32
    %c0 = arith.constant 0 : i32
    %cm1 = arith.constant -1 : i32
    %code = arith.select %hit, %c0, %cm1 : i32
    %again = arith.cmpi eq, %code, %c0 : i32
    %both = arith.andi %hit, %again : i1
    %zero = arith.constant 0.0 : f32
    %n = arith.extf %new : f16 to f32
    %o = arith.extf %old : f16 to f32
    %masked = arith.select %both, %n, %zero : f32
    %chosen = arith.select %hit, %masked, %o : f32
    %t = arith.truncf %chosen : f32 to f16
    spyre.yield %t : f16
  }
  spyre.return
}

// -----

// The other outcomes of comparing a select of constants: its negation, a
// constant; and a narrowing to another type than the widened values' stays.
// CHECK-LABEL: spyre.kernel @compare_select_outcomes
// CHECK: ^bb0(%[[X:.*]]: i32, %[[A:.*]]: f16, %[[B:.*]]: f16):
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[HIT:.*]] = arith.cmpi sgt, %[[X]], %[[ZERO]]
// The negation (xori with true) of a compare is the inverse compare upstream.
// CHECK: %[[MISS:.*]] = arith.cmpi sle, %[[X]], %[[ZERO]]
// CHECK: %[[FLAG:.*]] = arith.extui %[[MISS]] : i1 to i32
// CHECK: %[[WA:.*]] = arith.extf %[[A]]
// CHECK: %[[WB:.*]] = arith.extf %[[B]]
// CHECK: %[[S:.*]] = arith.select %[[HIT]], %[[WA]], %[[WB]] : f32
// CHECK: %[[T:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK: spyre.yield %[[FLAG]], %[[ZERO]], %[[T]] : i32, i32, bf16
spyre.kernel @compare_select_outcomes(%x: !spyre.buffer<8xi32>, %a: !spyre.buffer<8xf16>,
                                      %b: !spyre.buffer<8xf16>, %flags: !spyre.buffer<8xi32>,
                                      %nevers: !spyre.buffer<8xi32>, %other: !spyre.buffer<8xbf16>) {
  spyre.generic domain [8] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
      affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
      affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x, %a, %b : !spyre.buffer<8xi32>, !spyre.buffer<8xf16>, !spyre.buffer<8xf16>)
      outs(%flags, %nevers, %other : !spyre.buffer<8xi32>, !spyre.buffer<8xi32>, !spyre.buffer<8xbf16>) {
  ^bb0(%v: i32, %p: f16, %q: f16):
    %c0 = arith.constant 0 : i32
    %c3 = arith.constant 3 : i32
    %c7 = arith.constant 7 : i32
    %hit = arith.cmpi sgt, %v, %c0 : i32
    %code = arith.select %hit, %c3, %c7 : i32
    %not = arith.cmpi eq, %code, %c7 : i32
    %never = arith.cmpi eq, %code, %c0 : i32
    %f1 = arith.extui %not : i1 to i32
    %f2 = arith.extui %never : i1 to i32
    %w1 = arith.extf %p : f16 to f32
    %w2 = arith.extf %q : f16 to f32
    %s4 = arith.select %hit, %w1, %w2 : f32
    %t = arith.truncf %s4 : f32 to bf16
    spyre.yield %f1, %f2, %t : i32, i32, bf16
  }
  spyre.return
}
