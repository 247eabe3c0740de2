// RUN: spyre-opt %s --spyre-compile="stop-after=lower" | FileCheck %s

// An output with a few heads innermost (8 f32, a quarter stick) continued by
// the planes, computed from an input with the positions innermost (Mamba2's
// chunked scan): the input runs along the planes, not along the cols. Each
// tile loads a run of all planes per row and head, and each plane's view is
// one element of those runs. Plane by plane, every element of the input
// moved as a stick of its own (Mamba2's kernel: 3.64M -> 0.12M cycles).
// CHECK-LABEL: spyre.hw.program @heads_innermost
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, f32, strides = [2048, 0, 0]>, #spyre.ref<@arg0, f32, strides = [65536, 0, 0]> row 2048 x [8, 1, 1]
// CHECK-NEXT: spyre.hw.unary "exp" #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [8192, 4, 0]>, #spyre.ref<lx, f32, strides = [1024, 2048, 0]> [2 x 8]
// CHECK-NEXT: spyre.hw.unary "exp" #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [8192, 4, 0]>, #spyre.ref<lx, f32, offset = 4, strides = [1024, 2048, 0]> [2 x 8]
#in = affine_map<(d0, d1, d2) -> (d1 * 16384 + d0 * 256 + d2)>
#out = affine_map<(d0, d1, d2) -> (d0 * 2048 + d2 * 8 + d1)>
spyre.kernel @heads_innermost(%x: !spyre.buffer<131072xf32>, %y: !spyre.buffer<131072xf32>) {
  spyre.generic domain [64, 8, 256] {indexing_maps = [#in, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<131072xf32>) outs(%y : !spyre.buffer<131072xf32>) {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    spyre.yield %e : f32
  }
  spyre.return
}
