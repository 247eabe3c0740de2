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

// -----

// A row statistic rounded through the narrow type (an f16 RMSNorm's mean
// square, as Inductor exports it: divide, narrow, widen, add epsilon,
// rsqrt) is a row statistic still. The SFU narrows on store and widens on
// load for free, so both conversions rename the quotient: the divide (into
// f16), the add (reading it) and the rsqrt run once per row, and only the
// products with the input and the weight run over the tile. The rule
// stopped at the folded narrowing, and the widening was a copy of its own:
// all four ran over whole rows (a 512 x 2048 RMSNorm on 32 cores: 47.8 us,
// 43.0 with the statistic per row).
// CHECK-LABEL: spyre.hw.program @narrowed_statistic
// CHECK: spyre.hw.reduce "sum"
// CHECK-NEXT: spyre.hw.binary "div" #spyre.ref<lx, dl16, offset = [[Q:[0-9]+]], strides = [{{[0-9]+}}, 0, 0]>, {{.*}} imm 6.400000e+01 [2 x 1]
// CHECK-NEXT: spyre.hw.binary "add" #spyre.ref<lx, f32, offset = [[E:[0-9]+]], strides = [{{[0-9]+}}, 0, 0]>, #spyre.ref<lx, dl16, offset = [[Q]], strides = [{{[0-9]+}}, 0, 0]> imm {{.*}} [2 x 1]
// CHECK-NEXT: spyre.hw.unary "rsqrt" #spyre.ref<lx, f32, offset = [[R:[0-9]+]], strides = [{{[0-9]+}}, 0, 0]>, #spyre.ref<lx, f32, offset = [[E]], strides = [{{[0-9]+}}, 0, 0]> [2 x 1]
// CHECK-NEXT: spyre.hw.binary "mul" {{.*}}, #spyre.ref<lx, f32, offset = [[R]], strides = [{{[0-9]+}}, 0, 0]> [2 x 64]
// CHECK-NEXT: spyre.hw.binary "mul" {{.*}} [2 x 64]
spyre.kernel @narrowed_statistic(%x: !spyre.buffer<64x64xf16>, %w: !spyre.buffer<64xf16>,
                                 %y: !spyre.buffer<64x64xf16>) {
  %ss = spyre.alloc() : !spyre.buffer<64xf32>
  spyre.generic domain [64, 64] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<64x64xf16>) outs(%ss : !spyre.buffer<64xf32>) {
  ^bb0(%v: f16):
    %f = arith.extf %v : f16 to f32
    %sq = arith.mulf %f, %f : f32
    spyre.yield %sq : f32
  }
  spyre.generic domain [64, 64] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %ss, %w : !spyre.buffer<64x64xf16>, !spyre.buffer<64xf32>, !spyre.buffer<64xf16>) outs(%y : !spyre.buffer<64x64xf16>) {
  ^bb0(%v: f16, %s: f32, %g: f16):
    %f = arith.extf %v : f16 to f32
    %gf = arith.extf %g : f16 to f32
    %n = arith.constant 64.0 : f32
    %mean = arith.divf %s, %n : f32
    %mean16 = arith.truncf %mean : f32 to f16
    %mean32 = arith.extf %mean16 : f16 to f32
    %eps = arith.constant 1.0e-6 : f32
    %a = arith.addf %mean32, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %f, %r : f32
    %o = arith.mulf %xn, %gf : f32
    %o16 = arith.truncf %o : f32 to f16
    spyre.yield %o16 : f16
  }
  spyre.return
}
