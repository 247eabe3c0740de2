#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @k(%x: !spyre.buffer<4294967296x4294967296xf16>, %y: !spyre.buffer<4294967296x4294967296xf16>) {
  spyre.generic domain [4294967296, 4294967296] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4294967296x4294967296xf16>) outs(%y : !spyre.buffer<4294967296x4294967296xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.return
}
