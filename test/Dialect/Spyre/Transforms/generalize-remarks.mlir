// RUN: spyre-opt %s -split-input-file -spyre-generalize="copies=false report-kept=true" -verify-diagnostics

spyre.kernel @kept(%t: !spyre.buffer<100x16xf16>, %i: !spyre.buffer<5xi32>, %o: !spyre.buffer<5x16xf16>,
                   %l: !spyre.buffer<5x16xf16, lx>) {
  // expected-remark @+1 {{kept: the index is loaded at run time, which an affine map cannot express}}
  spyre.gather ins(%t, %i : !spyre.buffer<100x16xf16>, !spyre.buffer<5xi32>) outs(%o : !spyre.buffer<5x16xf16>) axis = 0
  // expected-remark @+1 {{kept: copies are not generalized (copies=false)}}
  spyre.copy ins(%o : !spyre.buffer<5x16xf16>) outs(%l : !spyre.buffer<5x16xf16, lx>)
  spyre.return
}

// -----

// The pass rejects invalid IR before it runs.
spyre.kernel @invalid(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{target dim 0 has size 4 but source dim 1 has size 8}}
  spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x8xf16>) permutation = [1, 0]
  spyre.return
}
