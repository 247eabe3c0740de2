#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @k(%x: !spyre.buffer<4611686018427387904x64xf16>, %y: !spyre.buffer<4611686018427387904x64xf16>) {
  spyre.generic domain [4611686018427387904, 64] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4611686018427387904x64xf16>) outs(%y : !spyre.buffer<4611686018427387904x64xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.return
}
