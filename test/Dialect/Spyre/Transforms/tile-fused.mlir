// RUN: spyre-opt %s -spyre-divide-work -spyre-tile | FileCheck %s

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A group over [4, 512, 64] whose tiles take the 64 columns whole: the
// other loops give 4 tiles, so the 512 rows are cut until every core has
// one (the columns' 64 points are not 64 tiles: 512-row tiles would leave
// 28 of the 32 cores idle).
// CHECK-LABEL: spyre.kernel @rows_shared_among_cores
// CHECK: spyre.fused
// CHECK-SAME: spyre.tile = array<i64: 1, 64, 64>
spyre.kernel @rows_shared_among_cores(%x: !spyre.buffer<4x512x64xf16>, %y: !spyre.buffer<4x512x64xf16>, %z: !spyre.buffer<4x512x64xf16>) {
  spyre.fused {
    spyre.generic domain [4, 512, 64] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%x : !spyre.buffer<4x512x64xf16>) outs(%y : !spyre.buffer<4x512x64xf16>) {
    ^bb0(%v: f16):
      %n = arith.negf %v : f16
      spyre.yield %n : f16
    }
    spyre.generic domain [4, 512, 64] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%x : !spyre.buffer<4x512x64xf16>) outs(%z : !spyre.buffer<4x512x64xf16>) {
    ^bb0(%v: f16):
      %a = arith.addf %v, %v : f16
      spyre.yield %a : f16
    }
  }
  spyre.return
}
