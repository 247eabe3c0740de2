// Each stage of spyre-compile leaves its mark in the IR (docs/lowering.md).
// RUN: spyre-opt %s --spyre-compile="stop-after=generalize" | FileCheck %s --check-prefix=GEN
// RUN: spyre-opt %s --spyre-compile="stop-after=fuse" | FileCheck %s --check-prefix=FUSE
// RUN: spyre-opt %s --spyre-compile="stop-after=divide-work" | FileCheck %s --check-prefix=DIV
// RUN: spyre-opt %s --spyre-compile="stop-after=tile" | FileCheck %s --check-prefix=TILE
// RUN: spyre-opt %s --spyre-compile="stop-after=plan-memory" | FileCheck %s --check-prefix=MEM
// RUN: spyre-opt %s --spyre-compile | FileCheck %s --check-prefix=HW
// RUN: spyre-opt %s --spyre-compile="cores=2" | FileCheck %s --check-prefix=TWO
// RUN: not spyre-opt %s --spyre-compile="stop-after=nonsense" 2>&1 | FileCheck %s --check-prefix=BAD
// A compile continued from a stage's IR ends where one run ends.
// RUN: spyre-opt %s --spyre-compile="stop-after=tile" | spyre-opt --spyre-compile="start-before=plan-memory" | FileCheck %s --check-prefix=HW
// RUN: spyre-opt %s --spyre-compile="stop-after=fuse" | spyre-opt --spyre-compile="start-before=divide-work stop-after=divide-work" | FileCheck %s --check-prefix=DIV

// GEN-LABEL: spyre.kernel @transpose_exp
// GEN: spyre.generic domain [64, 32]
// GEN: spyre.generic domain [64, 32]
// GEN-NOT: spyre.permute
// FUSE: spyre.generic domain [64, 32]
// FUSE-NOT: spyre.generic
// FUSE-NOT: spyre.alloc
// DIV: spyre.cores = 32 : i64
// DIV-NOT: spyre.tile
// TILE: spyre.cores = 32 : i64, spyre.tile = array<i64: 64, 32>
// TILE-NOT: spyre.lx
// MEM: spyre.lx = array<i64: 8192, 0>
// HW: spyre.hw.program @transpose_exp num_cores = 32
// HW-COUNT-32: spyre.hw.core
// TWO: spyre.hw.program @transpose_exp num_cores = 2
// BAD: Cannot find option named 'nonsense'
spyre.kernel @transpose_exp(%x: !spyre.buffer<32x64xf16>, %y: !spyre.buffer<64x32xf16>) {
  %t = spyre.alloc() : !spyre.buffer<64x32xf16>
  spyre.permute ins(%x : !spyre.buffer<32x64xf16>) outs(%t : !spyre.buffer<64x32xf16>)
                permutation = [1, 0]
  spyre.generic domain [64, 32] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%t : !spyre.buffer<64x32xf16>) outs(%y : !spyre.buffer<64x32xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.dealloc %t : !spyre.buffer<64x32xf16>
  spyre.return
}
