// RUN: spyre-opt %s -split-input-file -spyre-attach-arch -spyre-fuse-epilogue="report-missed=true" -verify-diagnostics | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-attach-arch -spyre-fuse-epilogue="chain=false" | FileCheck %s --check-prefix=APART
// RUN: spyre-opt %s -split-input-file -spyre-attach-arch -spyre-fuse-epilogue -spyre-divide-work -spyre-tile -spyre-plan-memory -spyre-check-lx | FileCheck %s --check-prefix=TILE

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A multilayer perceptron, y = act(x @ W1.T + b1) @ W2.T + res: the two
// products and their epilogues become one group, a chain, whose hidden
// activations (%h) are a temporary of the group, never stored.
// CHECK-LABEL: spyre.kernel @mlp
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: %[[H:.*]] = spyre.alloc() : !spyre.buffer<128x1024xf16>
// CHECK-NEXT: %[[P:.*]] = spyre.alloc() : !spyre.buffer<128x1024xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg1 {{.*}}outs(%[[P]]
// CHECK: spyre.generic {{.*}}ins(%[[P]], %arg2 {{.*}}outs(%[[H]]
// CHECK: %[[Q:.*]] = spyre.alloc() : !spyre.buffer<128x256xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%[[H]], %arg3 {{.*}}outs(%[[Q]]
// CHECK: spyre.generic {{.*}}ins(%[[Q]], %arg4 {{.*}}outs(%arg5
// CHECK: spyre.return
// Without `chain`, two groups, the hidden activations between them.
// APART-LABEL: spyre.kernel @mlp
// APART: spyre.fused {
// APART: spyre.fused {
// The chain's tile: rows of a row group, hidden slices, hidden units per
// chunk of the first product, output columns per chunk of the second, rows
// of an epilogue strip. 128 rows in 8 groups of 16, 4 slices of 256 hidden
// units: 32 cores (256 output columns are 4 sticks: at most 4 slices).
// TILE-LABEL: spyre.kernel @mlp
// TILE: spyre.fused attributes {spyre.cores = 32 : i64, spyre.lx = array<i64: {{.*}}>, spyre.tile = array<i64: 16, 4, 64, 256, 16>}
spyre.kernel @mlp(%x: !spyre.buffer<128x256xf16>, %w1: !spyre.buffer<1024x256xf16>, %b1: !spyre.buffer<1024xf16>,
    %w2: !spyre.buffer<256x1024xf16>, %res: !spyre.buffer<128x256xf16>, %y: !spyre.buffer<128x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<128x1024xf16>
  spyre.matmul transpose_rhs ins(%x, %w1 : !spyre.buffer<128x256xf16>, !spyre.buffer<1024x256xf16>)
               outs(%p : !spyre.buffer<128x1024xf16>)
  %h = spyre.alloc() : !spyre.buffer<128x1024xf16>
  spyre.generic domain [128, 1024] {indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b1 : !spyre.buffer<128x1024xf16>, !spyre.buffer<1024xf16>) outs(%h : !spyre.buffer<128x1024xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %g = math.tanh %s : f32
    %t = arith.truncf %g : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %p : !spyre.buffer<128x1024xf16>
  %q = spyre.alloc() : !spyre.buffer<128x256xf16>
  spyre.matmul transpose_rhs ins(%h, %w2 : !spyre.buffer<128x1024xf16>, !spyre.buffer<256x1024xf16>)
               outs(%q : !spyre.buffer<128x256xf16>)
  spyre.dealloc %h : !spyre.buffer<128x1024xf16>
  spyre.generic domain [128, 256] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%q, %res : !spyre.buffer<128x256xf16>, !spyre.buffer<128x256xf16>) outs(%y : !spyre.buffer<128x256xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %t = arith.truncf %s : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %q : !spyre.buffer<128x256xf16>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Fewer than 64 rows: the product's row groups would starve the PT.
// CHECK-LABEL: spyre.kernel @few_rows
// CHECK: spyre.fused {
// CHECK: spyre.fused {
spyre.kernel @few_rows(%x: !spyre.buffer<32x256xf16>, %w1: !spyre.buffer<1024x256xf16>, %b1: !spyre.buffer<1024xf16>,
    %w2: !spyre.buffer<256x1024xf16>, %res: !spyre.buffer<32x256xf16>, %y: !spyre.buffer<32x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<32x1024xf16>
  // expected-remark @+1 {{not run as a chain with the next product: fewer than 64 rows}}
  spyre.matmul transpose_rhs ins(%x, %w1 : !spyre.buffer<32x256xf16>, !spyre.buffer<1024x256xf16>)
               outs(%p : !spyre.buffer<32x1024xf16>)
  %h = spyre.alloc() : !spyre.buffer<32x1024xf16>
  spyre.generic domain [32, 1024] {indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b1 : !spyre.buffer<32x1024xf16>, !spyre.buffer<1024xf16>) outs(%h : !spyre.buffer<32x1024xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %g = math.tanh %s : f32
    %t = arith.truncf %g : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %p : !spyre.buffer<32x1024xf16>
  %q = spyre.alloc() : !spyre.buffer<32x256xf16>
  spyre.matmul transpose_rhs ins(%h, %w2 : !spyre.buffer<32x1024xf16>, !spyre.buffer<256x1024xf16>)
               outs(%q : !spyre.buffer<32x256xf16>)
  spyre.dealloc %h : !spyre.buffer<32x1024xf16>
  spyre.generic domain [32, 256] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%q, %res : !spyre.buffer<32x256xf16>, !spyre.buffer<32x256xf16>) outs(%y : !spyre.buffer<32x256xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %t = arith.truncf %s : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %q : !spyre.buffer<32x256xf16>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// The hidden activations are also an output: they must be stored.
// CHECK-LABEL: spyre.kernel @hidden_read_twice
// CHECK: spyre.fused {
// CHECK: spyre.fused {
spyre.kernel @hidden_read_twice(%x: !spyre.buffer<128x256xf16>, %w1: !spyre.buffer<1024x256xf16>, %b1: !spyre.buffer<1024xf16>,
    %w2: !spyre.buffer<256x1024xf16>, %res: !spyre.buffer<128x256xf16>, %y: !spyre.buffer<128x256xf16>,
    %h_out: !spyre.buffer<128x1024xf16>) {
  %p = spyre.alloc() : !spyre.buffer<128x1024xf16>
  // expected-remark @+1 {{not run as a chain with the next product: its epilogue's output is also read by 'spyre.generic'}}
  spyre.matmul transpose_rhs ins(%x, %w1 : !spyre.buffer<128x256xf16>, !spyre.buffer<1024x256xf16>)
               outs(%p : !spyre.buffer<128x1024xf16>)
  %h = spyre.alloc() : !spyre.buffer<128x1024xf16>
  spyre.generic domain [128, 1024] {indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b1 : !spyre.buffer<128x1024xf16>, !spyre.buffer<1024xf16>) outs(%h : !spyre.buffer<128x1024xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %g = math.tanh %s : f32
    %t = arith.truncf %g : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %p : !spyre.buffer<128x1024xf16>
  %q = spyre.alloc() : !spyre.buffer<128x256xf16>
  spyre.matmul transpose_rhs ins(%h, %w2 : !spyre.buffer<128x1024xf16>, !spyre.buffer<256x1024xf16>)
               outs(%q : !spyre.buffer<128x256xf16>)
  spyre.generic domain [128, 256] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%q, %res : !spyre.buffer<128x256xf16>, !spyre.buffer<128x256xf16>) outs(%y : !spyre.buffer<128x256xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %t = arith.truncf %s : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %q : !spyre.buffer<128x256xf16>
  spyre.generic domain [128, 1024] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%h : !spyre.buffer<128x1024xf16>) outs(%h_out : !spyre.buffer<128x1024xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.dealloc %h : !spyre.buffer<128x1024xf16>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// f32 operands: the chain plan refuses them (the PT takes 16-bit inputs; a
// product alone converts them first), and the groups stay apart.
// CHECK-LABEL: spyre.kernel @f32_operands
// CHECK: spyre.fused {
// CHECK: spyre.fused {
spyre.kernel @f32_operands(%x: !spyre.buffer<128x256xf32>, %w1: !spyre.buffer<1024x256xf32>, %b1: !spyre.buffer<1024xf32>,
    %w2: !spyre.buffer<256x1024xf32>, %res: !spyre.buffer<128x256xf32>, %y: !spyre.buffer<128x256xf32>) {
  %p = spyre.alloc() : !spyre.buffer<128x1024xf32>
  // expected-remark @+1 {{not run as a chain with the next product: cannot run the two products as one chain: the matrix unit takes 16-bit inputs here}}
  spyre.matmul transpose_rhs ins(%x, %w1 : !spyre.buffer<128x256xf32>, !spyre.buffer<1024x256xf32>)
               outs(%p : !spyre.buffer<128x1024xf32>)
  %h = spyre.alloc() : !spyre.buffer<128x1024xf32>
  spyre.generic domain [128, 1024] {indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b1 : !spyre.buffer<128x1024xf32>, !spyre.buffer<1024xf32>) outs(%h : !spyre.buffer<128x1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    %g = math.tanh %s : f32
    spyre.yield %g : f32
  }
  spyre.dealloc %p : !spyre.buffer<128x1024xf32>
  %q = spyre.alloc() : !spyre.buffer<128x256xf32>
  spyre.matmul transpose_rhs ins(%h, %w2 : !spyre.buffer<128x1024xf32>, !spyre.buffer<256x1024xf32>)
               outs(%q : !spyre.buffer<128x256xf32>)
  spyre.dealloc %h : !spyre.buffer<128x1024xf32>
  spyre.generic domain [128, 256] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%q, %res : !spyre.buffer<128x256xf32>, !spyre.buffer<128x256xf32>) outs(%y : !spyre.buffer<128x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    spyre.yield %s : f32
  }
  spyre.dealloc %q : !spyre.buffer<128x256xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// GPT-2's MLP over 2048 rows: 16 row groups of 128 rows on 2 slices each, whose
// products the chain plan estimates slower than the two products' own tiles
// (estimates: lowering.md). The groups stay apart, and the hidden activations
// between them keep their deallocation.
// CHECK-LABEL: spyre.kernel @many_rows
// CHECK: %[[H:.*]] = spyre.alloc() : !spyre.buffer<2048x3072xf16>
// CHECK: spyre.fused {
// CHECK: spyre.fused {
// CHECK: spyre.dealloc %[[H]]
spyre.kernel @many_rows(%x: !spyre.buffer<2048x768xf16>, %w1: !spyre.buffer<3072x768xf16>, %b1: !spyre.buffer<3072xf16>,
    %w2: !spyre.buffer<768x3072xf16>, %res: !spyre.buffer<2048x768xf16>, %y: !spyre.buffer<2048x768xf16>) {
  %p = spyre.alloc() : !spyre.buffer<2048x3072xf16>
  // expected-remark @+1 {{not run as a chain with the next product: its estimate,}}
  spyre.matmul transpose_rhs ins(%x, %w1 : !spyre.buffer<2048x768xf16>, !spyre.buffer<3072x768xf16>)
               outs(%p : !spyre.buffer<2048x3072xf16>)
  %h = spyre.alloc() : !spyre.buffer<2048x3072xf16>
  spyre.generic domain [2048, 3072] {indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b1 : !spyre.buffer<2048x3072xf16>, !spyre.buffer<3072xf16>) outs(%h : !spyre.buffer<2048x3072xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %g = math.tanh %s : f32
    %t = arith.truncf %g : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %p : !spyre.buffer<2048x3072xf16>
  %q = spyre.alloc() : !spyre.buffer<2048x768xf16>
  spyre.matmul transpose_rhs ins(%h, %w2 : !spyre.buffer<2048x3072xf16>, !spyre.buffer<768x3072xf16>)
               outs(%q : !spyre.buffer<2048x768xf16>)
  spyre.dealloc %h : !spyre.buffer<2048x3072xf16>
  spyre.generic domain [2048, 768] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%q, %res : !spyre.buffer<2048x768xf16>, !spyre.buffer<2048x768xf16>) outs(%y : !spyre.buffer<2048x768xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %t = arith.truncf %s : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %q : !spyre.buffer<2048x768xf16>
  spyre.return
}


// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// ViT's 197 tokens (384 wide, 1536 hidden): row groups of 25 rows, the last
// of 22. The seven full groups load the weights in step, once; the short
// one a second time (the estimate counted them once per group, and kept two
// groups of 99 on 12 cores: a ViT MLP with its GELU took 59.8 us there, 46.4
// here).
// CHECK-LABEL: spyre.kernel @ragged_groups
// TILE-LABEL: spyre.kernel @ragged_groups
// TILE: spyre.tile = array<i64: 25, 4, 64, 64, 25>
spyre.kernel @ragged_groups(%x: !spyre.buffer<197x384xf16>, %w1: !spyre.buffer<1536x384xf16>, %b1: !spyre.buffer<1536xf16>,
    %w2: !spyre.buffer<384x1536xf16>, %res: !spyre.buffer<197x384xf16>, %y: !spyre.buffer<197x384xf16>) {
  %p = spyre.alloc() : !spyre.buffer<197x1536xf16>
  spyre.matmul transpose_rhs ins(%x, %w1 : !spyre.buffer<197x384xf16>, !spyre.buffer<1536x384xf16>)
               outs(%p : !spyre.buffer<197x1536xf16>)
  %h = spyre.alloc() : !spyre.buffer<197x1536xf16>
  spyre.generic domain [197, 1536] {indexing_maps = [#id, #col, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %b1 : !spyre.buffer<197x1536xf16>, !spyre.buffer<1536xf16>) outs(%h : !spyre.buffer<197x1536xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %g = math.erf %s : f32
    %t = arith.truncf %g : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %p : !spyre.buffer<197x1536xf16>
  %q = spyre.alloc() : !spyre.buffer<197x384xf16>
  spyre.matmul transpose_rhs ins(%h, %w2 : !spyre.buffer<197x1536xf16>, !spyre.buffer<384x1536xf16>)
               outs(%q : !spyre.buffer<197x384xf16>)
  spyre.dealloc %h : !spyre.buffer<197x1536xf16>
  spyre.generic domain [197, 384] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%q, %res : !spyre.buffer<197x384xf16>, !spyre.buffer<197x384xf16>) outs(%y : !spyre.buffer<197x384xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %s = arith.addf %a32, %b32 : f32
    %t = arith.truncf %s : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %q : !spyre.buffer<197x384xf16>
  spyre.return
}
