// RUN: spyre-opt %s -split-input-file -spyre-check-lx -verify-diagnostics

// Slots: input (2 x 512 bytes), output (2 x 512), temporaries %a [0, 2),
// %b [1, 3). A correct plan passes.
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @good(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.cores = 4 : i64,
      spyre.tile = array<i64: 2, 64>, spyre.lx = array<i64: 0, 1024, 2048, 2560>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    %a = math.exp %v : f32
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %a : f32
    spyre.yield %c : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @overlap(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  // expected-error @+1 {{LX slots 'temp0' and 'temp1' are live together and overlap}}
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.cores = 4 : i64,
      spyre.tile = array<i64: 2, 64>, spyre.lx = array<i64: 0, 1024, 2048, 2304>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    %a = math.exp %v : f32
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %a : f32
    spyre.yield %c : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @double_buffer(%x: !spyre.buffer<8x64xf32>, %y: !spyre.buffer<8x64xf32>) {
  // expected-error @+1 {{LX slots 'input0' and 'output0' are live together and overlap}}
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id], spyre.cores = 4 : i64,
      spyre.tile = array<i64: 2, 64>, spyre.lx = array<i64: 0, 512>,
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8x64xf32>) outs(%y : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

spyre.kernel @overflow(%a: !spyre.buffer<64x64xf16>, %c: !spyre.buffer<64x64xf32>) {
  // expected-error @+1 {{LX slot 'acc' at [2031616, 2064384) does not fit in the usable LX of 1600000 bytes}}
  spyre.matmul ins(%a, %a : !spyre.buffer<64x64xf16>, !spyre.buffer<64x64xf16>) outs(%c : !spyre.buffer<64x64xf32>)
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 64, 64, 64>, spyre.lx = array<i64: 0, 16384, 2031616>}
  spyre.return
}

// -----

#id = affine_map<(d0) -> (d0)>
spyre.kernel @count(%x: !spyre.buffer<8xf32>, %y: !spyre.buffer<8xf32>) {
  // expected-error @+1 {{spyre.lx has 1 offsets for 2 LX slots}}
  spyre.generic domain [8] {indexing_maps = [#id, #id], spyre.cores = 1 : i64,
      spyre.tile = array<i64: 8>, spyre.lx = array<i64: 0>, iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<8xf32>) outs(%y : !spyre.buffer<8xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}
