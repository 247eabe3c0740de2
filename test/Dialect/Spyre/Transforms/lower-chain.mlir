// RUN: spyre-opt %s -spyre-attach-arch -spyre-compile="start-before=plan-memory" | FileCheck %s

// The chain of a multilayer perceptron on the card (ChainPlan), on a tile
// set here (fuse-chain.mlir has the group and spyre-tile's choice): 128 rows
// in 4 row groups x 4 hidden slices; core 0 holds rows 0-31 and hidden units
// 0-255, and owns output columns 0-63. Its row group's cores are a group
// apart, and the 16 cores in use are spread over the 32 (both memory ports
// carry weights): 0, 8, 16 and 24.

// CHECK-LABEL: spyre.hw.core 0 {
// The first product's first chunk: the weights of 64 hidden units, then the
// row group's x, then the bias chunk.
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg1, dl16> row 32768 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg0, dl16> row 16384 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg2, dl16> row 128 x [1, 1, 1]
// CHECK: spyre.hw.matmul {{.*}} m 32 k 256 n 64 {{.*}}{signal_sem = [[RELEASE:[0-9]+]] : i64, transpose_b
// CHECK: spyre.hw.unary "tanh"
// The second product's weights load into the copy of the weights slot the
// third chunk's product read, as soon as that product is done (the third
// signal of the products' release semaphore), not after that chunk's
// activation: the SFU paces the first phase while the bus is free.
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, strides = [512, 0, 0]>, #spyre.ref<@arg3, dl16, strides = [2048, 0, 0]> row 512 x [256, 1, 1] {signal_sem = 0 : i64, wait_count = 3 : i64, wait_sem = [[RELEASE]] : i64}
// The residual rows of the core's output piece load in the same step, while
// the DMA engine is otherwise idle, not after the barrier, where all cores
// would load theirs at once: their slot lives beside the products' slots.
// CHECK-NEXT: spyre.hw.dma {{.*}}#spyre.ref<@arg4, dl16, strides = [512, 0, 0]> row 128 x [32, 1, 1]
// After the last chunk's activation (the SFU runs in order), a one-element
// fill that the second product waits for: all hidden activations are in LX.
// CHECK: spyre.hw.fill #spyre.ref<lx, f32, offset = {{[0-9]+}}>, 0.000000e+00 [1 x 1] {signal_sem = [[CHAIN:[0-9]+]] : i64
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 32 k 256 n 256 {{.*}}transpose_b, wait_count = {{[0-9]+}} : i64, wait_sem = [[CHAIN]] : i64}
// CHECK-NEXT: spyre.hw.barrier
// The partial sums of the other cores' columns go to them over the ring,
// each signalling the receiver's semaphore 7.
// CHECK-NEXT: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0], core = 8>, {{.*}} row 256 x [32, 1, 1] {signal_remote, signal_sem = 7 : i64}
// CHECK-NEXT: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0], core = 16>, {{.*}} {signal_remote, signal_sem = 7 : i64}
// CHECK-NEXT: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0], core = 24>, {{.*}} {signal_remote, signal_sem = 7 : i64}
// Once the three others' arrived: added to its own, then the epilogue and
// the store of columns 0-63.
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} [32 x 64] {wait_count = 3 : i64, wait_sem = 7 : i64}
// CHECK-NEXT: spyre.hw.binary "add"
// CHECK-NEXT: spyre.hw.binary "add"
// The epilogue's residual add waits for no load: the barrier drained them.
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}#spyre.ref<lx, dl16{{.*}}> [32 x 64] {signal_sem = 1 : i64}{{$}}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg5, dl16, strides = [512, 0, 0]>, {{.*}} row 128 x [32, 1, 1]
// CHECK-NEXT: {{^ *}$}}
// CHECK-NEXT: spyre.hw.core 1 {
// Core 8 (slice 1) sends core 0 its partial sums of columns 0-63, into the
// first of core 0's three receiving places (a zero core is not printed).
// CHECK-LABEL: spyre.hw.core 8 {
// CHECK: spyre.hw.ring #spyre.ref<lx, f32, strides = [256, 0, 0]>, #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [1024, 0, 0]> row 256 x [32, 1, 1] {signal_remote, signal_sem = 7 : i64}
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  spyre.kernel @mlp(%arg0: !spyre.buffer<128x256xf16>, %arg1: !spyre.buffer<1024x256xf16>, %arg2: !spyre.buffer<1024xf16>, %arg3: !spyre.buffer<256x1024xf16>, %arg4: !spyre.buffer<128x256xf16>, %arg5: !spyre.buffer<128x256xf16>) {
    spyre.fused attributes {spyre.cores = 32 : i64, spyre.tile = array<i64: 32, 4, 64, 256, 32>} {
      %0 = spyre.alloc() : !spyre.buffer<128x1024xf16>
      %1 = spyre.alloc() : !spyre.buffer<128x1024xf16>
      spyre.matmul transpose_rhs ins(%arg0, %arg1 : !spyre.buffer<128x256xf16>, !spyre.buffer<1024x256xf16>) outs(%1 : !spyre.buffer<128x1024xf16>)
      spyre.generic domain [128, 1024] {indexing_maps = [#map, #map1, #map], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]} ins(%1, %arg2 : !spyre.buffer<128x1024xf16>, !spyre.buffer<1024xf16>) outs(%0 : !spyre.buffer<128x1024xf16>) {
      ^bb0(%arg6: f16, %arg7: f16):
        %3 = arith.extf %arg6 : f16 to f32
        %4 = arith.extf %arg7 : f16 to f32
        %5 = arith.addf %3, %4 : f32
        %6 = math.tanh %5 : f32
        %7 = arith.truncf %6 : f32 to f16
        spyre.yield %7 : f16
      }
      %2 = spyre.alloc() : !spyre.buffer<128x256xf16>
      spyre.matmul transpose_rhs ins(%0, %arg3 : !spyre.buffer<128x1024xf16>, !spyre.buffer<256x1024xf16>) outs(%2 : !spyre.buffer<128x256xf16>)
      spyre.generic domain [128, 256] {indexing_maps = [#map, #map, #map], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]} ins(%2, %arg4 : !spyre.buffer<128x256xf16>, !spyre.buffer<128x256xf16>) outs(%arg5 : !spyre.buffer<128x256xf16>) {
      ^bb0(%arg6: f16, %arg7: f16):
        %3 = arith.extf %arg6 : f16 to f32
        %4 = arith.extf %arg7 : f16 to f32
        %5 = arith.addf %3, %4 : f32
        %6 = arith.truncf %5 : f32 to f16
        spyre.yield %6 : f16
      }
    }
    spyre.return
  }
}

