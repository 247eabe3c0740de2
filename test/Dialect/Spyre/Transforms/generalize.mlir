// RUN: spyre-opt %s -split-input-file -spyre-generalize | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-generalize="copies=false" | FileCheck %s --check-prefix=KEEP

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: spyre.kernel @permute
// CHECK: spyre.generic domain [8, 4] {indexing_maps = [#[[T]], #[[ID]]], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
// CHECK-SAME: ins(%arg0 : !spyre.buffer<4x8xf16>) outs(%arg1 : !spyre.buffer<8x4xf16>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f16):
// CHECK-NEXT: spyre.yield %[[V]] : f16
// CHECK-NOT: spyre.permute
spyre.kernel @permute(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<8x4xf16>) {
  spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>) permutation = [1, 0]
  spyre.return
}

// -----

// A 3-D permutation: target dim i reads source dim perm[i].
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-LABEL: spyre.kernel @permute3
// CHECK: spyre.generic domain [4, 2, 3] {indexing_maps = [#[[IN]],
spyre.kernel @permute3(%a: !spyre.buffer<2x3x4xf16>, %b: !spyre.buffer<4x2x3xf16>) {
  spyre.permute ins(%a : !spyre.buffer<2x3x4xf16>) outs(%b : !spyre.buffer<4x2x3xf16>) permutation = [2, 0, 1]
  spyre.return
}

// -----

// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: spyre.kernel @broadcast
// CHECK: %[[N:.*]] = spyre.dim %arg1[0] : !spyre.buffer<?x64xf16>
// CHECK: spyre.generic domain [%[[N]], 64] {indexing_maps = [#[[ROW]],
spyre.kernel @broadcast(%a: !spyre.buffer<64xf16>, %b: !spyre.buffer<?x64xf16>) {
  spyre.broadcast ins(%a : !spyre.buffer<64xf16>) outs(%b : !spyre.buffer<?x64xf16>) dimensions = [0]
  spyre.return
}

// -----

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 * 2 + 1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1)[s0] -> (d0, d1)>
// CHECK-LABEL: spyre.kernel @slice
// CHECK: spyre.generic domain [4, 8] symbols(%arg2) {indexing_maps = [#[[IN]], #[[OUT]]]
spyre.kernel @slice(%a: !spyre.buffer<16x64xf16>, %b: !spyre.buffer<4x8xf16>, %o: index) {
  spyre.slice ins(%a : !spyre.buffer<16x64xf16>) outs(%b : !spyre.buffer<4x8xf16>) offsets [%o, 1] strides [1, 2]
  spyre.return
}

// -----

// Inputs after a dynamic one write at a symbolic offset.
// CHECK-DAG: #[[FIRST:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SECOND:.*]] = affine_map<(d0, d1) -> (d0, d1 + 8)>
// CHECK-DAG: #[[THIRD:.*]] = affine_map<(d0, d1)[s0] -> (d0, d1 + s0 + 8)>
// CHECK-LABEL: spyre.kernel @concat
// CHECK: spyre.generic domain [4, 8] {indexing_maps = [#[[FIRST]], #[[FIRST]]]
// CHECK: %[[D:.*]] = spyre.dim %arg1[1]
// CHECK: spyre.generic domain [4, %[[D]]] {indexing_maps = [#[[FIRST]], #[[SECOND]]]
// CHECK: %[[D2:.*]] = spyre.dim %arg1[1]
// CHECK: spyre.generic domain [4, 2] symbols(%[[D2]]) {indexing_maps = [{{.*}}, #[[THIRD]]]
spyre.kernel @concat(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x?xf16>, %c: !spyre.buffer<4x2xf16>,
                     %d: !spyre.buffer<4x?xf16>) {
  spyre.concat ins(%a, %b, %c : !spyre.buffer<4x8xf16>, !spyre.buffer<4x?xf16>, !spyre.buffer<4x2xf16>)
               outs(%d : !spyre.buffer<4x?xf16>) dim = 1
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @fill
// CHECK: spyre.generic domain [4] {indexing_maps = [#{{.*}}], iterator_types = [#spyre.iterator<parallel>]} outs(%arg0 : !spyre.buffer<4xbf16>)
// CHECK-NEXT: %[[C:.*]] = arith.constant 1.500000e+00 : bf16
// CHECK-NEXT: spyre.yield %[[C]] : bf16
spyre.kernel @fill(%a: !spyre.buffer<4xbf16>) {
  spyre.fill 1.5 : bf16 outs(%a : !spyre.buffer<4xbf16>)
  spyre.return
}

// -----

// CHECK-LABEL: spyre.kernel @copy
// CHECK: spyre.generic
// KEEP-LABEL: spyre.kernel @copy
// KEEP: spyre.copy
spyre.kernel @copy(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x8xf16, lx>) {
  spyre.copy ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x8xf16, lx>)
  spyre.return
}

// -----

// Gathers and matmuls are not data movement an affine map can express.
// CHECK-LABEL: spyre.kernel @kept
// CHECK: spyre.gather
// CHECK: spyre.matmul
spyre.kernel @kept(%t: !spyre.buffer<100x16xf16>, %i: !spyre.buffer<5xi32>, %o: !spyre.buffer<5x16xf16>,
                   %x: !spyre.buffer<5x16xf16>, %y: !spyre.buffer<16x4xf16>, %z: !spyre.buffer<5x4xf32>) {
  spyre.gather ins(%t, %i : !spyre.buffer<100x16xf16>, !spyre.buffer<5xi32>) outs(%o : !spyre.buffer<5x16xf16>) axis = 0
  spyre.matmul ins(%x, %y : !spyre.buffer<5x16xf16>, !spyre.buffer<16x4xf16>) outs(%z : !spyre.buffer<5x4xf32>)
  spyre.return
}
