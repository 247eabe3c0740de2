// RUN: spyre-opt %s -split-input-file -spyre-attach-arch -spyre-divide-work -spyre-tile -verify-diagnostics

// A chain's tile (ChainPlan::verifyTile): five sizes, each within its dimension, and
// slices that leave every core hidden units and a piece of its row group's output.

// Four sizes: a matmul's, not a chain's.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
  spyre.kernel @four_sizes(%arg0: !spyre.buffer<128x256xf16>, %arg1: !spyre.buffer<1024x256xf16>, %arg2: !spyre.buffer<1024xf16>, %arg3: !spyre.buffer<256x1024xf16>, %arg4: !spyre.buffer<128x256xf16>, %arg5: !spyre.buffer<128x256xf16>) {
    // expected-error @+1 {{spyre.tile of a chain of two products is [rows, slices, hidden chunk, output columns, strip rows], not 4 sizes}}
    spyre.fused attributes {spyre.tile = array<i64: 32, 4, 64, 256>} {
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

// -----

// More rows in a group than the product has.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
  spyre.kernel @rows_beyond(%arg0: !spyre.buffer<128x256xf16>, %arg1: !spyre.buffer<1024x256xf16>, %arg2: !spyre.buffer<1024xf16>, %arg3: !spyre.buffer<256x1024xf16>, %arg4: !spyre.buffer<128x256xf16>, %arg5: !spyre.buffer<128x256xf16>) {
    // expected-error @+1 {{spyre.tile size 256 is not in [1, 128]}}
    spyre.fused attributes {spyre.tile = array<i64: 256, 4, 64, 256, 32>} {
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

// -----

// 32 slices of 1024 hidden units: 16 sticks, so half the slices would be empty.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
  spyre.kernel @too_many_slices(%arg0: !spyre.buffer<128x256xf16>, %arg1: !spyre.buffer<1024x256xf16>, %arg2: !spyre.buffer<1024xf16>, %arg3: !spyre.buffer<256x1024xf16>, %arg4: !spyre.buffer<128x256xf16>, %arg5: !spyre.buffer<128x256xf16>) {
    // expected-error @+1 {{spyre.tile's 32 slices leave a core without hidden units}}
    spyre.fused attributes {spyre.tile = array<i64: 16, 32, 64, 256, 16>} {
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
