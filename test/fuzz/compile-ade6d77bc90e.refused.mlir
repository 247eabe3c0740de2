#b = affine_map<(d0, d1) -> (d1)>
#o = affine_map<(d0, d1) -> (d1)>
spyre.kernel @k(%x: !spyre.buffer<64xf32>, %y: !spyre.buffer<64xf32>) {
  spyre.generic domain [1099511627776, 64] {indexing_maps = [#b, #o],
      iterator_types = [#spyre.iterator<reduction>, #spyre.iterator<parallel>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
