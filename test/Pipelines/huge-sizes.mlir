// Sizes no card can run are refused fast, before (or early in) the search for
// tiles and the emission of instructions; these took from 27 s to hours.
// RUN: timeout 30 spyre-opt %s -split-input-file --spyre-compile -verify-diagnostics

// 64 GiB fit the device memory, but each core would address 2 GiB of @arg0:
// the span check stops the lowering at the first step beyond it.
// expected-error @+1 {{core 0 would address 268468224 bytes of buffer @arg0, more than the per-core span of 268435456 bytes}}
spyre.kernel @span(%a: !spyre.buffer<2147483648x16xf16>, %b: !spyre.buffer<16x16xf16>, %c: !spyre.buffer<2147483648x16xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<2147483648x16xf16>, !spyre.buffer<16x16xf16>) outs(%c : !spyre.buffer<2147483648x16xf16>)
  spyre.return
}

// -----

// expected-error @+1 {{argument 0 ('!spyre.buffer<1099511627776x64xf16>') does not fit in the card's 120259084288 bytes of device memory}}
spyre.kernel @device_memory(%x: !spyre.buffer<1099511627776x64xf16>, %y: !spyre.buffer<1099511627776x64xf16>) {
  spyre.copy ins(%x : !spyre.buffer<1099511627776x64xf16>) outs(%y : !spyre.buffer<1099511627776x64xf16>)
  spyre.return
}

// -----

// expected-error @+1 {{buffer has more than 2^63 elements}}
spyre.kernel @overflow(%x: !spyre.buffer<4611686018427387904x64xf16>) {
  spyre.return
}

// -----

#b = affine_map<(d0, d1) -> (d1)>
spyre.kernel @long_reduction(%x: !spyre.buffer<64xf32>, %y: !spyre.buffer<64xf32>) {
  // expected-error @+1 {{domain has more than 2^63 points}}
  spyre.generic domain [4611686018427387904, 64] {indexing_maps = [#b, #b],
      iterator_types = [#spyre.iterator<reduction>, #spyre.iterator<parallel>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

// Rank 9 compiled and translated into a binary the reader refused.
// expected-error @+1 {{argument 0 has rank 9; the program binary holds at most 8 dimensions}}
spyre.kernel @rank9(%x: !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>, %y: !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>) {
  spyre.copy ins(%x : !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>) outs(%y : !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>)
  spyre.return
}
