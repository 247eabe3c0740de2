// The card description is attached to the module once, as an attribute.
// RUN: spyre-opt %s -spyre-attach-arch | FileCheck %s
// An explicit description replaces the default (and one attached earlier).
// RUN: sed -e 's/^cores = 32/cores = 4/' %S/../../../../lib/Arch/spyre_card.toml > %t.toml
// RUN: spyre-opt %s -spyre-attach-arch="arch=%t.toml" | FileCheck %s --check-prefix=SMALL
// RUN: spyre-opt %s -spyre-attach-arch="arch=%t.toml" | spyre-opt -spyre-attach-arch="arch=%S/../../../../lib/Arch/spyre_card.toml" | FileCheck %s
// Without one, an attached description stays, and the passes read it.
// RUN: spyre-opt %s -spyre-attach-arch="arch=%t.toml" | spyre-opt -spyre-attach-arch -spyre-divide-work | FileCheck %s --check-prefix=DIVIDED

// CHECK: module attributes {spyre.arch = {card.clock_hz = 1.000000e+09 : f64, card.cores = 32 : i64,
// CHECK-SAME: lx.bytes = 2097152 : i64
// CHECK-SAME: name = "spyre-v2"
// SMALL: card.cores = 4 : i64
// DIVIDED: card.cores = 4 : i64
// DIVIDED: spyre.cores = 4 : i64
spyre.kernel @copy(%a: !spyre.buffer<64x64xf32>, %b: !spyre.buffer<64x64xf32>) {
  spyre.generic domain [64, 64] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                                 iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<64x64xf32>) outs(%b : !spyre.buffer<64x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
