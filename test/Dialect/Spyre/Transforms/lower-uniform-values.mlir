// RUN: spyre-opt %s -split-input-file --spyre-compile | FileCheck %s

// Values constant along a tile's columns are computed once: constants and
// values computed from row statistics only.

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

// -----

// Values computed from row statistics only (the guarded row sum of a
// softmax's last pass) are computed once per row, their column 0, and read
// with a zero column stride; the quotient runs over the whole tile.
// CHECK-LABEL: spyre.hw.program @per_row
// CHECK: spyre.hw.binary "eq" #spyre.ref<lx, u8, offset = [[EQ:[0-9]+]], strides = [{{[0-9]+}}, 0, 0]>, #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [4, 0, 0]> imm 0.000000e+00 [2 x 1]
// CHECK: spyre.hw.select #spyre.ref<lx, f32, offset = [[SEL:[0-9]+]], strides = [{{[0-9]+}}, 0, 0]>, #spyre.ref<lx, u8, offset = [[EQ]], strides = [{{[0-9]+}}, 0, 0]>, {{.*}} [2 x 1]
// CHECK: spyre.hw.binary "div" {{.*}}, #spyre.ref<lx, f32, offset = [[SEL]], strides = [{{[0-9]+}}, 0, 0]> [2 x 64]
spyre.kernel @per_row(%x: !spyre.buffer<64x64xf32>, %s: !spyre.buffer<64xf32>, %y: !spyre.buffer<64x64xf32>) {
  spyre.generic domain [64, 64] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %s : !spyre.buffer<64x64xf32>, !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64x64xf32>) {
  ^bb0(%v: f32, %t: f32):
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %z = arith.cmpf oeq, %t, %zero : f32
    %d = arith.select %z, %one, %t : f32
    %q = arith.divf %v, %d : f32
    spyre.yield %q : f32
  }
  spyre.return
}

// -----

// An index of the row only (the position a cache row is compared with) is
// filled once per row, its column 0, and what is computed from it alone
// (the comparison) runs once per row too; the select over the tile reads
// it with a zero column stride.
// CHECK-LABEL: spyre.hw.program @row_index
// CHECK: spyre.hw.fill #spyre.ref<lx, i32, offset = [[IX:[0-9]+]], strides = [{{[0-9]+}}, 0, 0]>, {{.*}} [2 x 1]
// CHECK: spyre.hw.binary "eq" #spyre.ref<lx, u8, offset = [[EQ:[0-9]+]], strides = [{{[0-9]+}}, 0, 0]>, #spyre.ref<lx, i32, offset = [[IX]], strides = [{{[0-9]+}}, 0, 0]> imm 5.000000e+00 [2 x 1]
// CHECK: spyre.hw.select {{.*}}, #spyre.ref<lx, u8, offset = [[EQ]], strides = [{{[0-9]+}}, 0, 0]>, {{.*}} [2 x 64]
spyre.kernel @row_index(%x: !spyre.buffer<64x64xf32>, %y: !spyre.buffer<64x64xf32>) {
  spyre.generic domain [64, 64] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64x64xf32>) outs(%y : !spyre.buffer<64x64xf32>) {
  ^bb0(%v: f32):
    %row = spyre.index_expr affine_map<(d0, d1) -> (d0)> : i32
    %five = arith.constant 5 : i32
    %zero = arith.constant 0.0 : f32
    %hit = arith.cmpi eq, %row, %five : i32
    %s = arith.select %hit, %zero, %v : f32
    spyre.yield %s : f32
  }
  spyre.return
}
