// RUN: spyre-opt %s -split-input-file --spyre-compile | FileCheck %s

// A constant no instruction takes as an immediate (a select's operand) is
// held in LX as one element, filled once per tile, and read with zero
// strides: no fill over the tile.
// CHECK-LABEL: spyre.hw.program @select_constant
// CHECK: spyre.hw.fill #spyre.ref<lx, f32, offset = [[AT:[0-9]+]]>, 0xFFF0000000000000 [1 x 1]
// CHECK: spyre.hw.select {{.*}}, #spyre.ref<lx, f32, offset = [[AT]]> [2 x 64]
spyre.kernel @select_constant(%x: !spyre.buffer<64x64xf32>, %y: !spyre.buffer<64x64xf32>) {
  spyre.generic domain [64, 64] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64x64xf32>) outs(%y : !spyre.buffer<64x64xf32>) {
  ^bb0(%v: f32):
    %zero = arith.constant 0.0 : f32
    %inf = arith.constant 0xFF800000 : f32
    %p = arith.cmpf ogt, %v, %zero : f32
    %s = arith.select %p, %v, %inf : f32
    spyre.yield %s : f32
  }
  spyre.return
}

// -----

// A yielded constant is copied into the output over the whole tile by the
// generic's lowering: it keeps a whole tile.
// CHECK-LABEL: spyre.hw.program @yielded_constant
// CHECK: spyre.hw.fill #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [256, 4, 0]>, 2.000000e+00 [2 x 64]
spyre.kernel @yielded_constant(%y: !spyre.buffer<64x64xf32>) {
  spyre.generic domain [64, 64] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      outs(%y : !spyre.buffer<64x64xf32>) {
    %c = arith.constant 2.0 : f32
    spyre.yield %c : f32
  }
  spyre.return
}
