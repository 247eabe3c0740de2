// RUN: spyre-opt %s -split-input-file -spyre-divide-work -verify-diagnostics
// RUN: not spyre-opt %s -split-input-file -spyre-divide-work="cores=33" 2>&1 | FileCheck %s --check-prefix=CORES
// CORES: cores = 33 is not in [0, 32] (the card's cores)

#id = affine_map<(d0) -> (d0)>
spyre.kernel @dynamic(%x: !spyre.buffer<?xf32>, %y: !spyre.buffer<?xf32>, %n: index) {
  // expected-error @+1 {{loop 0 has a dynamic size; tiling needs static sizes}}
  spyre.generic domain [%n] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<?xf32>) outs(%y : !spyre.buffer<?xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0) -> (d0)>
spyre.kernel @no_instruction(%x: !spyre.buffer<8xi32>, %y: !spyre.buffer<8xi32>) {
  // expected-error @+1 {{body op 'arith.divsi' has no vector-unit instruction}}
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8xi32>) outs(%y : !spyre.buffer<8xi32>) {
  ^bb0(%v: i32):
    %r = arith.divsi %v, %v : i32
    spyre.yield %r : i32
  }
  spyre.return
}

// -----

#id = affine_map<(d0) -> (d0)>
spyre.kernel @unordered(%x: !spyre.buffer<8xf32>, %y: !spyre.buffer<8xi1>) {
  // expected-error @+1 {{'arith.cmpf' with predicate ult has no vector-unit instruction}}
  spyre.generic domain [8] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8xf32>) outs(%y : !spyre.buffer<8xi1>) {
  ^bb0(%v: f32):
    %r = arith.cmpf ult, %v, %v : f32
    spyre.yield %r : i1
  }
  spyre.return
}

// -----

spyre.kernel @reshape(%x: !spyre.buffer<64xf32>, %y: !spyre.buffer<8x8xf32>) {
  // expected-error @+1 {{output 0: its indexing map is not linear in the loops (floordiv, mod or a product)}}
  spyre.generic domain [64] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0 floordiv 8, d0 mod 8)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<8x8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

spyre.kernel @sticks(%x: !spyre.buffer<8x128xf16, #spyre.layout<[0, 1], stick = 64>>, %y: !spyre.buffer<8x128xf16>) {
  // expected-error @+1 {{'spyre.copy' must be rewritten as spyre.generic (spyre-generalize) first}}
  spyre.copy ins(%x : !spyre.buffer<8x128xf16, #spyre.layout<[0, 1], stick = 64>>) outs(%y : !spyre.buffer<8x128xf16>)
  spyre.return
}

// -----

spyre.kernel @axis1(%t: !spyre.buffer<4x100xf16>, %i: !spyre.buffer<3xi32>, %g: !spyre.buffer<4x3xf16>) {
  // expected-error @+1 {{only gathers along axis 0 (embedding lookups) are supported, not axis 1}}
  spyre.gather ins(%t, %i : !spyre.buffer<4x100xf16>, !spyre.buffer<3xi32>) outs(%g : !spyre.buffer<4x3xf16>) axis = 1
  spyre.return
}

// -----

// Refused before any tile is searched: what no card holds.
// expected-error @+1 {{argument 0 has rank 9; the program binary holds at most 8 dimensions}}
spyre.kernel @rank9(%x: !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>, %y: !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>) {
  spyre.copy ins(%x : !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>) outs(%y : !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>)
  spyre.return
}

// -----

// expected-error @+1 {{argument 0 ('!spyre.buffer<2147483648x64xf16>') does not fit in the card's 120259084288 bytes of device memory}}
spyre.kernel @too_big(%a: !spyre.buffer<2147483648x64xf16>, %b: !spyre.buffer<64x64xf16>, %c: !spyre.buffer<2147483648x64xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<2147483648x64xf16>, !spyre.buffer<64x64xf16>) outs(%c : !spyre.buffer<2147483648x64xf16>)
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @temporary_too_big(%x: !spyre.buffer<4x4xf32>) {
  // expected-error @+1 {{the temporary ('!spyre.buffer<1099511627776x64xf32>') does not fit in the card's}}
  %t = spyre.alloc() : !spyre.buffer<1099511627776x64xf32>
  spyre.return
}

// -----

spyre.kernel @attention_dynamic(%q: !spyre.buffer<2x?x16xf16>, %o: !spyre.buffer<2x?x16xf16>) {
  // expected-error @+1 {{cannot run on the card: '!spyre.buffer<2x?x16xf16>' has a dynamic shape; specialise the kernel for the size}}
  spyre.attention ins(%q, %q, %q : !spyre.buffer<2x?x16xf16>, !spyre.buffer<2x?x16xf16>, !spyre.buffer<2x?x16xf16>) outs(%o : !spyre.buffer<2x?x16xf16>) scale = 0.25
  spyre.return
}

// -----

spyre.kernel @attention_no_keys(%q: !spyre.buffer<2x8x16xf16>, %k: !spyre.buffer<2x0x16xf16>, %o: !spyre.buffer<2x8x16xf16>) {
  // expected-error @+1 {{cannot run on the card: attention over no keys (or a head size of 0) is a fill, not a product}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<2x8x16xf16>, !spyre.buffer<2x0x16xf16>, !spyre.buffer<2x0x16xf16>) outs(%o : !spyre.buffer<2x8x16xf16>) scale = 0.25
  spyre.return
}


// -----

spyre.kernel @conv_dynamic(%x: !spyre.buffer<1x4x?x8xf16>, %w: !spyre.buffer<4x4x3x3xf16>, %y: !spyre.buffer<1x4x?x6xf16>) {
  // expected-error @+1 {{cannot run on the card: '!spyre.buffer<1x4x?x8xf16>' has a dynamic shape; specialise the kernel for the size}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x4x?x8xf16>, !spyre.buffer<4x4x3x3xf16>) outs(%y : !spyre.buffer<1x4x?x6xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_no_channels(%x: !spyre.buffer<1x0x8x8xf16>, %w: !spyre.buffer<4x0x3x3xf16>, %y: !spyre.buffer<1x4x6x6xf16>) {
  // expected-error @+1 {{cannot run on the card: a convolution over no input channels or taps is a fill, not a product}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x0x8x8xf16>, !spyre.buffer<4x0x3x3xf16>) outs(%y : !spyre.buffer<1x4x6x6xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}
