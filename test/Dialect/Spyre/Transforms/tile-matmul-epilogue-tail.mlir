// RUN: spyre-opt %s --pass-pipeline='builtin.module(spyre-compile{stop-after=tile})' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// nn.Linear (a transposed weight) with its bias and GELU in the product's
// epilogue. The core's last step runs as two row halves, so only half a
// tile's epilogue and store are left when the PT is done: priced so, the
// 128 x 256 x 512 tile (each core reads its lhs once) beats 128 x 128 x
// 1024 (the lhs read twice, 1.10x the compulsory bytes, and slower).
// CHECK-LABEL: spyre.kernel @linear_bias_gelu
// CHECK: spyre.fused
// CHECK-SAME: spyre.tile = array<i64: 128, 256, 512,
spyre.kernel @linear_bias_gelu(%x: !spyre.buffer<512x4096xf16>, %w: !spyre.buffer<4096x4096xf16>, %b: !spyre.buffer<4096xf16>, %y: !spyre.buffer<512x4096xf16>) {
  %p = spyre.alloc() : !spyre.buffer<512x4096xf16>
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<512x4096xf16>, !spyre.buffer<4096x4096xf16>) outs(%p : !spyre.buffer<512x4096xf16>)
  spyre.generic domain [512, 4096] {indexing_maps = [#id, #col, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b : !spyre.buffer<512x4096xf16>, !spyre.buffer<4096xf16>) outs(%y : !spyre.buffer<512x4096xf16>) {
  ^bb0(%v: f16, %c: f16):
    %v32 = arith.extf %v : f16 to f32
    %c32 = arith.extf %c : f16 to f32
    %s = arith.addf %v32, %c32 : f32
    %half = arith.constant 5.000000e-01 : f32
    %h = arith.mulf %s, %half : f32
    %r = arith.constant 0.707106769 : f32
    %t = arith.mulf %s, %r : f32
    %e = math.erf %t : f32
    %one = arith.constant 1.000000e+00 : f32
    %e1 = arith.addf %e, %one : f32
    %g = arith.mulf %h, %e1 : f32
    %o = arith.truncf %g : f32 to f16
    spyre.yield %o : f16
  }
  spyre.return
}
