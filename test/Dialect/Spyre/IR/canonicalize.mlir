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
