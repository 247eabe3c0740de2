// RUN: spyre-opt %s -split-input-file -spyre-divide-work -spyre-tile -verify-diagnostics

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// A member must read a group temporary as its producer wrote it (the value
// of a row tile is taken from the producer's LX slot).
spyre.kernel @transposed(%x: !spyre.buffer<8x8xf32>, %y: !spyre.buffer<8x8xf32>) {
  // expected-error @+1 {{cannot fuse: member 1 reads a group temporary other than as it was written}}
  spyre.fused {
    %t = spyre.alloc() : !spyre.buffer<8x8xf32>
    spyre.generic domain [8, 8] {indexing_maps = [#id, #id],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%x : !spyre.buffer<8x8xf32>) outs(%t : !spyre.buffer<8x8xf32>) {
    ^bb0(%v: f32):
      spyre.yield %v : f32
    }
    spyre.generic domain [8, 8] {indexing_maps = [#tr, #id],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%t : !spyre.buffer<8x8xf32>) outs(%y : !spyre.buffer<8x8xf32>) {
    ^bb0(%v: f32):
      spyre.yield %v : f32
    }
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A tile given in the IR must cover whole rows.
spyre.kernel @partial_rows(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>,
                           %z: !spyre.buffer<8x64xf32>) {
  // expected-error @+1 {{spyre.tile of a fused group must cover whole rows (loop 1 of size 64)}}
  spyre.fused attributes {spyre.tile = array<i64: 2, 32>} {
    spyre.generic domain [8, 64] {indexing_maps = [#id, #id],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
    ^bb0(%v: f32):
      spyre.yield %v : f32
    }
    spyre.generic domain [8, 64] {indexing_maps = [#id, #id],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%x : !spyre.buffer<8x64xf32>) outs(%z : !spyre.buffer<8x64xf32>) {
    ^bb0(%v: f32):
      spyre.yield %v : f32
    }
  }
  spyre.return
}
