// Every schedule pass reads the attributes of the earlier ones through one
// reader; a missing one is an error naming the passes that set them.
// RUN: not spyre-opt %s -split-input-file -spyre-tile 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not spyre-opt %s -split-input-file -spyre-plan-memory 2>&1 | FileCheck %s --check-prefix=MEM
// RUN: not spyre-opt %s -split-input-file -spyre-check-lx 2>&1 | FileCheck %s --check-prefix=LX

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @unscheduled(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  // TILE: error: is not scheduled: it needs spyre.cores (spyre-divide-work)
  // MEM: error: is not scheduled: it needs spyre.tile (spyre-tile)
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @lx_without_tile(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  // LX: error: is not scheduled: it needs spyre.tile and spyre.lx (spyre-tile, spyre-plan-memory)
  // MEM: error: is not scheduled: it needs spyre.tile (spyre-tile)
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.lx = array<i64: 0, 0>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @too_many_cores(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  // TILE: error: spyre.cores = 33 is not in [1, 32]
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.cores = 33 : i64,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
