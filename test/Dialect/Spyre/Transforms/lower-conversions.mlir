// RUN: spyre-opt %s --spyre-compile | FileCheck %s

// The vector unit reads any element type and computes in f32, and rounds
// to its destination's type on store: widening an input and narrowing an
// op's only result take no instruction of their own.
// CHECK-LABEL: spyre.hw.program @widen_compute_narrow
// CHECK-NOT: spyre.hw.unary "copy"
// CHECK: spyre.hw.binary "sub" #spyre.ref<lx, f32{{.*}}>, #spyre.ref<lx, dl16
// CHECK-NOT: spyre.hw.unary "copy"
// CHECK: spyre.hw.unary "exp" #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<lx, f32
// CHECK-NOT: spyre.hw.unary "copy"
// CHECK: spyre.hw.dma #spyre.ref<@arg1
spyre.kernel @widen_compute_narrow(%x: !spyre.buffer<64x64xf16>, %y: !spyre.buffer<64x64xf16>) {
  spyre.generic domain [64, 64] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64x64xf16>) outs(%y : !spyre.buffer<64x64xf16>) {
  ^bb0(%v: f16):
    %w = arith.extf %v : f16 to f32
    %c = arith.constant 1.0 : f32
    %d = arith.subf %w, %c : f32
    %e = math.exp %d : f32
    %n = arith.truncf %e : f32 to f16
    spyre.yield %n : f16
  }
  spyre.return
}
