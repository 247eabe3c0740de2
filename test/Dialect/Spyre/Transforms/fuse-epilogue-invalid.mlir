// RUN: spyre-opt %s -split-input-file -spyre-plan-memory -verify-diagnostics -o /dev/null

#id = affine_map<(d0, d1) -> (d0, d1)>

// A tile of a matmul with an epilogue names the rows of an epilogue strip.
spyre.kernel @three_sizes(%a: !spyre.buffer<32x48xf16>, %w: !spyre.buffer<48x32xf16>,
                          %y: !spyre.buffer<32x32xf16>) {
  // expected-error @+1 {{spyre.tile of a matmul with an epilogue is [tm, tn, tk, rows of an epilogue strip], not 3 sizes}}
  spyre.fused attributes {spyre.cores = 1 : i64, spyre.tile = array<i64: 32, 32, 48>} {
    %p = spyre.alloc() : !spyre.buffer<32x32xf16>
    spyre.matmul ins(%a, %w : !spyre.buffer<32x48xf16>, !spyre.buffer<48x32xf16>)
                 outs(%p : !spyre.buffer<32x32xf16>)
    spyre.generic domain [32, 32] {indexing_maps = [#id, #id],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%p : !spyre.buffer<32x32xf16>) outs(%y : !spyre.buffer<32x32xf16>) {
    ^bb0(%v: f16):
      spyre.yield %v : f16
    }
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A hand-written group whose matmul accumulates into the product.
spyre.kernel @accumulates(%a: !spyre.buffer<32x48xf16>, %w: !spyre.buffer<48x32xf16>,
                          %y: !spyre.buffer<32x32xf16>) {
  // expected-error @+1 {{cannot run the epilogue on the output tile: the matmul accumulates into its output}}
  spyre.fused attributes {spyre.cores = 1 : i64, spyre.tile = array<i64: 32, 32, 48, 32>} {
    %p = spyre.alloc() : !spyre.buffer<32x32xf16>
    spyre.matmul accumulate ins(%a, %w : !spyre.buffer<32x48xf16>, !spyre.buffer<48x32xf16>)
                 outs(%p : !spyre.buffer<32x32xf16>)
    spyre.generic domain [32, 32] {indexing_maps = [#id, #id],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%p : !spyre.buffer<32x32xf16>) outs(%y : !spyre.buffer<32x32xf16>) {
    ^bb0(%v: f16):
      spyre.yield %v : f16
    }
  }
  spyre.return
}
