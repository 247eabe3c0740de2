// RUN: spyre-opt %s -spyre-attach-arch -spyre-compile | FileCheck %s

// The chain of a multilayer perceptron on the card (ChainPlan): 128 rows in
// 4 row groups x 4 hidden slices; core 0 holds rows 0-31 and hidden units
// 0-255, and owns output columns 0-63. Its row group's cores are a group
// apart: 0, 4, 8 and 12.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: spyre.hw.core 0 {
// The first product's first chunk: the weights of 64 hidden units, then the
// row group's x, then the bias chunk.
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg1, dl16, strides = [512, 0, 0]> row 512 x [64, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg0, dl16, strides = [512, 0, 0]> row 512 x [32, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg2, dl16> row 128 x [1, 1, 1]
// CHECK: spyre.hw.matmul {{.*}} m 32 k 256 n 64 {{.*}}transpose_b
// CHECK: spyre.hw.unary "tanh"
// After the last chunk's activation (the SFU runs in order), a one-element
// fill that the second product waits for: all hidden activations are in LX.
// CHECK: spyre.hw.fill #spyre.ref<lx, f32, offset = {{[0-9]+}}>, 0.000000e+00 [1 x 1] {signal_sem = [[CHAIN:[0-9]+]] : i64
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 32 k 256 n 256 {{.*}}transpose_b, wait_count = {{[0-9]+}} : i64, wait_sem = [[CHAIN]] : i64}
// CHECK-NEXT: spyre.hw.barrier
// The partial sums of the other cores' columns go to them over the ring,
// each signalling the receiver's semaphore 7.
// CHECK-NEXT: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0], core = 4>, {{.*}} row 256 x [32, 1, 1] {signal_remote, signal_sem = 7 : i64}
// CHECK-NEXT: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0], core = 8>, {{.*}} {signal_remote, signal_sem = 7 : i64}
// CHECK-NEXT: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0], core = 12>, {{.*}} {signal_remote, signal_sem = 7 : i64}
// CHECK-NEXT: spyre.hw.dma {{.*}}#spyre.ref<@arg4, dl16, strides = [512, 0, 0]> row 128 x [32, 1, 1]
// Once the three others' arrived: added to its own, then the epilogue
// (waiting for the residual) and the store of columns 0-63.
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} [32 x 64] {wait_count = 3 : i64, wait_sem = 7 : i64}
// CHECK-NEXT: spyre.hw.binary "add"
// CHECK-NEXT: spyre.hw.binary "add"
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}#spyre.ref<lx, dl16{{.*}}> [32 x 64] {signal_sem = 1 : i64, wait_count = {{[0-9]+}} : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg5, dl16, strides = [512, 0, 0]>, {{.*}} row 128 x [32, 1, 1]
// CHECK-NEXT: {{^ *}$}}
// CHECK-NEXT: spyre.hw.core 1 {
// Core 4 (slice 1) sends core 0 its partial sums of columns 0-63, into the
// first of core 0's three receiving places (a zero core is not printed).
// CHECK-LABEL: spyre.hw.core 4 {
// CHECK: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0]>, #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [1024, 0, 0]> row 256 x [32, 1, 1] {signal_remote, signal_sem = 7 : i64}
spyre.kernel @mlp(%x: !spyre.buffer<128x256xf16>, %w1: !spyre.buffer<1024x256xf16>, %b1: !spyre.buffer<1024xf16>,
    %w2: !spyre.buffer<256x1024xf16>, %res: !spyre.buffer<128x256xf16>, %y: !spyre.buffer<128x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<128x1024xf16>
  spyre.matmul transpose_rhs ins(%x, %w1 : !spyre.buffer<128x256xf16>, !spyre.buffer<1024x256xf16>)
               outs(%p : !spyre.buffer<128x1024xf16>)
  %h = spyre.alloc() : !spyre.buffer<128x1024xf16>
  spyre.generic domain [128, 1024] {indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b1 : !spyre.buffer<128x1024xf16>, !spyre.buffer<1024xf16>) outs(%h : !spyre.buffer<128x1024xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %g = math.tanh %s : f32
    %t = arith.truncf %g : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %p : !spyre.buffer<128x1024xf16>
  %q = spyre.alloc() : !spyre.buffer<128x256xf16>
  spyre.matmul transpose_rhs ins(%h, %w2 : !spyre.buffer<128x1024xf16>, !spyre.buffer<256x1024xf16>)
               outs(%q : !spyre.buffer<128x256xf16>)
  spyre.dealloc %h : !spyre.buffer<128x1024xf16>
  spyre.generic domain [128, 256] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%q, %res : !spyre.buffer<128x256xf16>, !spyre.buffer<128x256xf16>) outs(%y : !spyre.buffer<128x256xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %t = arith.truncf %s : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %q : !spyre.buffer<128x256xf16>
  spyre.return
}
