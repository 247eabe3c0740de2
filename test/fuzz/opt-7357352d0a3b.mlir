
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
spyre.kernel @third_loop(%x: !spyre.buffer<2x8x64xf32>, %y: !spyre.buffer<2x8x64xf32>) {
  // expected-error @+1 {{spyre.tile: loop 0 must step one point at a time (only loops 1 and 2 are tiled)}}
  spyre.generic domain [2, 8, 64] {indexing_maps = [#id, #id], spyre.tile = array<index: 2, 8, 64>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<2x8x64xf32>) outs(%y : !spyre.buffer<2x8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

