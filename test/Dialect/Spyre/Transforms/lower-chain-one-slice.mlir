// RUN: spyre-opt %s -spyre-attach-arch -spyre-compile="start-before=plan-memory" | FileCheck %s

// A chain whose output is one stick wide (64 f16 columns): its row groups
// have one hidden slice each, so no partial sums cross the ring, but the
// epilogue still reads the sums the second product writes. The SFU does not
// wait for the PT by itself, so the barrier orders them (without it the
// epilogue read the sums before the product wrote them: wrong outputs for
// Bloom with 64-wide hidden states).

// CHECK-LABEL: spyre.hw.core 0 {
// CHECK: spyre.hw.matmul {{.*}} m 32 k 64 n 128 {{.*}}transpose_b
// CHECK: spyre.hw.matmul {{.*}} m 32 k 256 n 64 {{.*}}transpose_b
// CHECK-NEXT: spyre.hw.barrier
// CHECK-NOT: spyre.hw.ring
// CHECK: spyre.hw.binary "add" {{.*}} [32 x 64]
// CHECK: spyre.hw.dma #spyre.ref<@arg5
// CHECK-NEXT: {{^ *}$}}
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  spyre.kernel @mlp(%arg0: !spyre.buffer<128x64xf16>, %arg1: !spyre.buffer<256x64xf16>, %arg2: !spyre.buffer<256xf16>, %arg3: !spyre.buffer<64x256xf16>, %arg4: !spyre.buffer<128x64xf16>, %arg5: !spyre.buffer<128x64xf16>) {
    spyre.fused attributes {spyre.cores = 32 : i64, spyre.tile = array<i64: 32, 1, 128, 64, 32>} {
      %0 = spyre.alloc() : !spyre.buffer<128x256xf16>
      %1 = spyre.alloc() : !spyre.buffer<128x256xf16>
      spyre.matmul transpose_rhs ins(%arg0, %arg1 : !spyre.buffer<128x64xf16>, !spyre.buffer<256x64xf16>) outs(%1 : !spyre.buffer<128x256xf16>)
      spyre.generic domain [128, 256] {indexing_maps = [#map, #map1, #map], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]} ins(%1, %arg2 : !spyre.buffer<128x256xf16>, !spyre.buffer<256xf16>) outs(%0 : !spyre.buffer<128x256xf16>) {
      ^bb0(%arg6: f16, %arg7: f16):
        %3 = arith.extf %arg6 : f16 to f32
        %4 = arith.extf %arg7 : f16 to f32
        %5 = arith.addf %3, %4 : f32
        %6 = math.tanh %5 : f32
        %7 = arith.truncf %6 : f32 to f16
        spyre.yield %7 : f16
      }
      %2 = spyre.alloc() : !spyre.buffer<128x64xf16>
      spyre.matmul transpose_rhs ins(%0, %arg3 : !spyre.buffer<128x256xf16>, !spyre.buffer<64x256xf16>) outs(%2 : !spyre.buffer<128x64xf16>)
      spyre.generic domain [128, 64] {indexing_maps = [#map, #map, #map], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]} ins(%2, %arg4 : !spyre.buffer<128x64xf16>, !spyre.buffer<128x64xf16>) outs(%arg5 : !spyre.buffer<128x64xf16>) {
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
