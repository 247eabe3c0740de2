// RUN: spyre-opt %s -split-input-file -spyre-fuse-epilogue="report-missed=true" -verify-diagnostics | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-fuse-epilogue="report-missed=true" -verify-diagnostics -spyre-divide-work -spyre-tile -spyre-plan-memory -spyre-check-lx | FileCheck %s --check-prefix=TILE

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#flat = affine_map<(d0, d1) -> (d0 * 96 + d1)>

// linear + bias + GELU (x @ W.T, W stored as nn.Linear stores it): the
// product, its temporary and the generic that reads it (twice, as Inductor
// exports it) are grouped; the dealloc goes.
// CHECK-LABEL: spyre.kernel @linear_gelu
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: %[[P:.*]] = spyre.alloc() : !spyre.buffer<80x96xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs {{.*}}outs(%[[P]]
// CHECK-NEXT: spyre.generic {{.*}}ins(%[[P]], %{{.*}}, %[[P]] {{.*}}outs(%arg3
// CHECK: spyre.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: spyre.return
// The tile gains a fourth size, the rows of an epilogue strip; the LX
// slots: lhs, rhs, acc, the bias row, the body's temporaries.
// TILE-LABEL: spyre.kernel @linear_gelu
// TILE: spyre.fused attributes {spyre.cores = {{[0-9]+}} : i64, spyre.lx = array<i64: {{[0-9]+, [0-9]+, [0-9]+, [0-9]+, [0-9]+, [0-9, ]+}}>, spyre.tile = array<i64: {{[0-9]+, [0-9]+, [0-9]+, [0-9]+}}>}
spyre.kernel @linear_gelu(%a: !spyre.buffer<80x64xf16>, %w: !spyre.buffer<96x64xf16>,
                          %bias: !spyre.buffer<96xf16>, %y: !spyre.buffer<7680xf16>) {
  %p = spyre.alloc() : !spyre.buffer<80x96xf16>
  spyre.matmul transpose_rhs ins(%a, %w : !spyre.buffer<80x64xf16>, !spyre.buffer<96x64xf16>)
               outs(%p : !spyre.buffer<80x96xf16>)
  spyre.generic domain [80, 96] {indexing_maps = [#id, #col, #id, #flat],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %bias, %p : !spyre.buffer<80x96xf16>, !spyre.buffer<96xf16>, !spyre.buffer<80x96xf16>)
      outs(%y : !spyre.buffer<7680xf16>) {
  ^bb0(%v: f16, %b: f16, %v2: f16):
    %x = arith.extf %v : f16 to f32
    %c = arith.extf %b : f16 to f32
    %s = arith.addf %x, %c : f32
    %half = arith.constant 0.5 : f32
    %h = arith.mulf %s, %half : f32
    %k = arith.constant 0.707106769 : f32
    %x2 = arith.extf %v2 : f16 to f32
    %s2 = arith.addf %x2, %c : f32
    %q = arith.mulf %s2, %k : f32
    %e = math.erf %q : f32
    %one = arith.constant 1.0 : f32
    %e1 = arith.addf %e, %one : f32
    %r = arith.mulf %h, %e1 : f32
    %t = arith.truncf %r : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %p : !spyre.buffer<80x96xf16>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#flat = affine_map<(d0, d1) -> (d0 * 64 + d1)>

// A residual add into an f32 output.
// CHECK-LABEL: spyre.kernel @residual
// CHECK-NEXT: spyre.fused {
// TILE-LABEL: spyre.kernel @residual
// TILE: spyre.tile = array<i64: {{[0-9]+, [0-9]+, [0-9]+, [0-9]+}}>
spyre.kernel @residual(%a: !spyre.buffer<32x48xf16>, %w: !spyre.buffer<48x64xf16>,
                       %r: !spyre.buffer<2048xf32>, %y: !spyre.buffer<2048xf32>) {
  %p = spyre.alloc() : !spyre.buffer<32x64xf16>
  spyre.matmul ins(%a, %w : !spyre.buffer<32x48xf16>, !spyre.buffer<48x64xf16>)
               outs(%p : !spyre.buffer<32x64xf16>)
  spyre.generic domain [32, 64] {indexing_maps = [#id, #flat, #flat],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %r : !spyre.buffer<32x64xf16>, !spyre.buffer<2048xf32>)
      outs(%y : !spyre.buffer<2048xf32>) {
  ^bb0(%v: f16, %b: f32):
    %x = arith.extf %v : f16 to f32
    %s = arith.addf %x, %b : f32
    spyre.yield %s : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row sum of the product is a reduction, not an epilogue: the plan
// refuses it and the two ops stay as they were.
// CHECK-LABEL: spyre.kernel @reduction
// CHECK-NEXT: spyre.alloc
// CHECK-NEXT: spyre.matmul
// CHECK-NEXT: spyre.generic
// TILE-LABEL: spyre.kernel @reduction
// TILE: spyre.matmul {{.*}}spyre.tile = array<i64: {{[0-9]+, [0-9]+, [0-9]+}}>}
spyre.kernel @reduction(%a: !spyre.buffer<32x48xf16>, %w: !spyre.buffer<48x64xf16>,
                        %y: !spyre.buffer<32xf32>) {
  %p = spyre.alloc() : !spyre.buffer<32x64xf16>
  // expected-remark @+1 {{epilogue not fused: cannot run the epilogue on the output tile: the generic is not elementwise over the 32 x 64 product}}
  spyre.matmul ins(%a, %w : !spyre.buffer<32x48xf16>, !spyre.buffer<48x64xf16>)
               outs(%p : !spyre.buffer<32x64xf16>)
  spyre.generic domain [32, 64] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%p : !spyre.buffer<32x64xf16>) outs(%y : !spyre.buffer<32xf32>) {
  ^bb0(%v: f16):
    %x = arith.extf %v : f16 to f32
    spyre.yield %x : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1 * 32 + d0)>

// The generic reads the product transposed: not at the index it writes.
// CHECK-LABEL: spyre.kernel @transposed_read
// CHECK-NEXT: spyre.alloc
spyre.kernel @transposed_read(%a: !spyre.buffer<32x48xf16>, %w: !spyre.buffer<48x32xf16>,
                              %y: !spyre.buffer<32x32xf16>) {
  %p = spyre.alloc() : !spyre.buffer<32x32xf16>
  // expected-remark @+1 {{epilogue not fused: cannot run the epilogue on the output tile: the generic reads the product other than at the output's index}}
  spyre.matmul ins(%a, %w : !spyre.buffer<32x48xf16>, !spyre.buffer<48x32xf16>)
               outs(%p : !spyre.buffer<32x32xf16>)
  spyre.generic domain [32, 32] {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p : !spyre.buffer<32x32xf16>) outs(%y : !spyre.buffer<32x32xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The product is a kernel argument (read after the kernel): nothing to fuse.
// CHECK-LABEL: spyre.kernel @product_is_an_output
// CHECK-NEXT: spyre.matmul
spyre.kernel @product_is_an_output(%a: !spyre.buffer<32x48xf16>, %w: !spyre.buffer<48x32xf16>,
                                   %p: !spyre.buffer<32x32xf16>, %y: !spyre.buffer<32x32xf16>) {
  // expected-remark @+1 {{no epilogue fused: its output is not a temporary of the kernel}}
  spyre.matmul ins(%a, %w : !spyre.buffer<32x48xf16>, !spyre.buffer<48x32xf16>)
               outs(%p : !spyre.buffer<32x32xf16>)
  spyre.generic domain [32, 32] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p : !spyre.buffer<32x32xf16>) outs(%y : !spyre.buffer<32x32xf16>) {
  ^bb0(%v: f16):
    %x = arith.extf %v : f16 to f32
    %m = arith.maximumf %x, %x : f32
    %t = arith.truncf %m : f32 to f16
    spyre.yield %t : f16
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Two readers of the product.
// CHECK-LABEL: spyre.kernel @two_readers
// CHECK-NEXT: spyre.alloc
spyre.kernel @two_readers(%a: !spyre.buffer<32x48xf16>, %w: !spyre.buffer<48x32xf16>,
                          %y: !spyre.buffer<32x32xf16>, %z: !spyre.buffer<32x32xf16>) {
  %p = spyre.alloc() : !spyre.buffer<32x32xf16>
  // expected-remark @+1 {{no epilogue fused: its output is read by more than one op}}
  spyre.matmul ins(%a, %w : !spyre.buffer<32x48xf16>, !spyre.buffer<48x32xf16>)
               outs(%p : !spyre.buffer<32x32xf16>)
  spyre.generic domain [32, 32] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p : !spyre.buffer<32x32xf16>) outs(%y : !spyre.buffer<32x32xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [32, 32] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p : !spyre.buffer<32x32xf16>) outs(%z : !spyre.buffer<32x32xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A gated MLP's gate and up projections (nn.Linear weights, the same x) and
// silu(gate) * up: both products and the generic form one group, both
// temporaries inside it and their deallocs gone.
// CHECK-LABEL: spyre.kernel @gated
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: %[[G:.*]] = spyre.alloc() : !spyre.buffer<64x96xf16>
// CHECK-NEXT: %[[U:.*]] = spyre.alloc() : !spyre.buffer<64x96xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg1 {{.*}}outs(%[[G]]
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg2 {{.*}}outs(%[[U]]
// CHECK-NEXT: spyre.generic {{.*}}ins(%[[G]], %[[U]] {{.*}}outs(%arg3
// CHECK: spyre.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: spyre.return
// The rhs and accumulator slots hold both products' columns.
// TILE-LABEL: spyre.kernel @gated
// TILE: spyre.fused attributes {spyre.cores = {{[0-9]+}} : i64, spyre.lx = array<i64: {{[0-9, ]+}}>, spyre.tile = array<i64: {{[0-9]+, [0-9]+, [0-9]+, [0-9]+}}>}
spyre.kernel @gated(%x: !spyre.buffer<64x128xf16>, %wg: !spyre.buffer<96x128xf16>,
                    %wu: !spyre.buffer<96x128xf16>, %y: !spyre.buffer<64x96xf16>) {
  %g = spyre.alloc() : !spyre.buffer<64x96xf16>
  spyre.matmul transpose_rhs ins(%x, %wg : !spyre.buffer<64x128xf16>, !spyre.buffer<96x128xf16>)
               outs(%g : !spyre.buffer<64x96xf16>)
  %u = spyre.alloc() : !spyre.buffer<64x96xf16>
  spyre.matmul transpose_rhs ins(%x, %wu : !spyre.buffer<64x128xf16>, !spyre.buffer<96x128xf16>)
               outs(%u : !spyre.buffer<64x96xf16>)
  spyre.generic domain [64, 96] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%g, %u : !spyre.buffer<64x96xf16>, !spyre.buffer<64x96xf16>)
      outs(%y : !spyre.buffer<64x96xf16>) {
  ^bb0(%a: f16, %b: f16):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %n = arith.negf %a32 : f32
    %e = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %a32, %d : f32
    %r = arith.mulf %s, %b32 : f32
    %t = arith.truncf %r : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %g : !spyre.buffer<64x96xf16>
  spyre.dealloc %u : !spyre.buffer<64x96xf16>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Products of different lhs: the first is not computed beside the second,
// which alone takes the generic as its epilogue; the first's product goes
// through device memory as before.
// CHECK-LABEL: spyre.kernel @other_lhs
// CHECK-NEXT: %[[G:.*]] = spyre.alloc() : !spyre.buffer<64x96xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg2 {{.*}}outs(%[[G]]
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: %[[U:.*]] = spyre.alloc() : !spyre.buffer<64x96xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg1, %arg3 {{.*}}outs(%[[U]]
// CHECK-NEXT: spyre.generic {{.*}}ins(%[[G]], %[[U]] {{.*}}outs(%arg4
spyre.kernel @other_lhs(%x: !spyre.buffer<64x128xf16>, %x2: !spyre.buffer<64x128xf16>,
                        %wg: !spyre.buffer<96x128xf16>, %wu: !spyre.buffer<96x128xf16>,
                        %y: !spyre.buffer<64x96xf16>) {
  %g = spyre.alloc() : !spyre.buffer<64x96xf16>
  // expected-remark @+1 {{no epilogue fused: 'spyre.matmul' runs between it and its reader}}
  spyre.matmul transpose_rhs ins(%x, %wg : !spyre.buffer<64x128xf16>, !spyre.buffer<96x128xf16>)
               outs(%g : !spyre.buffer<64x96xf16>)
  %u = spyre.alloc() : !spyre.buffer<64x96xf16>
  spyre.matmul transpose_rhs ins(%x2, %wu : !spyre.buffer<64x128xf16>, !spyre.buffer<96x128xf16>)
               outs(%u : !spyre.buffer<64x96xf16>)
  spyre.generic domain [64, 96] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%g, %u : !spyre.buffer<64x96xf16>, !spyre.buffer<64x96xf16>)
      outs(%y : !spyre.buffer<64x96xf16>) {
  ^bb0(%a: f16, %b: f16):
    %r = arith.mulf %a, %b : f16
    spyre.yield %r : f16
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// The generic reads the first product transposed: the pair cannot share
// output tiles, so the plan's reason is remarked and the second product
// alone takes the generic as its epilogue, loading the first's product.
// CHECK-LABEL: spyre.kernel @pair_refused
// CHECK-NEXT: %[[G:.*]] = spyre.alloc() : !spyre.buffer<64x64xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg1 {{.*}}outs(%[[G]]
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: %[[U:.*]] = spyre.alloc() : !spyre.buffer<64x64xf16>
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg2 {{.*}}outs(%[[U]]
// CHECK-NEXT: spyre.generic {{.*}}ins(%[[G]], %[[U]] {{.*}}outs(%arg3
spyre.kernel @pair_refused(%x: !spyre.buffer<64x128xf16>, %wg: !spyre.buffer<64x128xf16>,
                           %wu: !spyre.buffer<64x128xf16>, %y: !spyre.buffer<64x64xf16>) {
  %g = spyre.alloc() : !spyre.buffer<64x64xf16>
  // expected-remark @+2 {{not computed beside the next matmul: cannot run the epilogue on the output tile: the generic reads the product other than at the output's index}}
  // expected-remark @+1 {{no epilogue fused: 'spyre.matmul' runs between it and its reader}}
  spyre.matmul transpose_rhs ins(%x, %wg : !spyre.buffer<64x128xf16>, !spyre.buffer<64x128xf16>)
               outs(%g : !spyre.buffer<64x64xf16>)
  %u = spyre.alloc() : !spyre.buffer<64x64xf16>
  spyre.matmul transpose_rhs ins(%x, %wu : !spyre.buffer<64x128xf16>, !spyre.buffer<64x128xf16>)
               outs(%u : !spyre.buffer<64x64xf16>)
  spyre.generic domain [64, 64] {indexing_maps = [#tr, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%g, %u : !spyre.buffer<64x64xf16>, !spyre.buffer<64x64xf16>)
      outs(%y : !spyre.buffer<64x64xf16>) {
  ^bb0(%a: f16, %b: f16):
    %r = arith.mulf %a, %b : f16
    spyre.yield %r : f16
  }
  spyre.return
}

// -----

// Two products of one lhs and the same shapes that write outputs of the
// kernel (a layer's key and value projections): grouped without an
// epilogue, so that each tile computes both and loads the lhs panel once.
// CHECK-LABEL: spyre.kernel @side_by_side
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg1 {{.*}}outs(%arg3
// CHECK-NEXT: spyre.matmul transpose_rhs ins(%arg0, %arg2 {{.*}}outs(%arg4
// CHECK-NEXT: }
// TILE-LABEL: spyre.kernel @side_by_side
// TILE: spyre.fused attributes {spyre.cores = {{[0-9]+}} : i64, spyre.lx = array<i64: {{.*}}>, spyre.tile = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>}
spyre.kernel @side_by_side(%x: !spyre.buffer<64x128xf16>, %wk: !spyre.buffer<64x128xf16>,
                           %wv: !spyre.buffer<64x128xf16>, %k: !spyre.buffer<64x64xf16>,
                           %v: !spyre.buffer<64x64xf16>) {
  spyre.matmul transpose_rhs ins(%x, %wk : !spyre.buffer<64x128xf16>, !spyre.buffer<64x128xf16>)
               outs(%k : !spyre.buffer<64x64xf16>)
  spyre.matmul transpose_rhs ins(%x, %wv : !spyre.buffer<64x128xf16>, !spyre.buffer<64x128xf16>)
               outs(%v : !spyre.buffer<64x64xf16>)
  spyre.return
}

// -----

// Products that accumulate into their outputs stay apart (the plan would
// load both outputs into one accumulator), as do products of different
// shapes.
// CHECK-LABEL: spyre.kernel @not_side_by_side
// CHECK-NOT: spyre.fused
spyre.kernel @not_side_by_side(%x: !spyre.buffer<64x128xf16>, %wk: !spyre.buffer<128x64xf16>,
                               %wv: !spyre.buffer<128x64xf16>, %wq: !spyre.buffer<128x32xf16>,
                               %k: !spyre.buffer<64x64xf16>, %v: !spyre.buffer<64x64xf16>,
                               %q: !spyre.buffer<64x32xf16>) {
  // expected-remark @+1 {{no epilogue fused: its output is not a temporary of the kernel}}
  spyre.matmul accumulate ins(%x, %wk : !spyre.buffer<64x128xf16>, !spyre.buffer<128x64xf16>)
               outs(%k : !spyre.buffer<64x64xf16>)
  // expected-remark @+1 {{no epilogue fused: its output is not a temporary of the kernel}}
  spyre.matmul accumulate ins(%x, %wv : !spyre.buffer<64x128xf16>, !spyre.buffer<128x64xf16>)
               outs(%v : !spyre.buffer<64x64xf16>)
  // expected-remark @+1 {{no epilogue fused: its output is not a temporary of the kernel}}
  spyre.matmul ins(%x, %wq : !spyre.buffer<64x128xf16>, !spyre.buffer<128x32xf16>)
               outs(%q : !spyre.buffer<64x32xf16>)
  spyre.return
}

// -----

// A rotary embedding over the product viewed as (rows, heads, halves,
// elements): it reads the product where it writes and at the other half of
// the head, and the half as an index. The plan runs it per block of a
// half-head, on tiles of whole heads.
// CHECK-LABEL: spyre.kernel @rotary
// CHECK-NEXT: spyre.fused {
// CHECK: spyre.matmul
// CHECK-NEXT: spyre.generic domain [64, 2, 2, 64]
// TILE-LABEL: spyre.kernel @rotary
// TILE: spyre.tile = array<i64: {{[0-9]+}}, {{128|256}}, {{[0-9]+, [0-9]+}}>
#q = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 128 + d2 * 64 + d3)>
#rot = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 128 - d2 * 64 + d3 + 64)>
#tab = affine_map<(d0, d1, d2, d3) -> (d0, d2 * 64 + d3)>
spyre.kernel @rotary(%x: !spyre.buffer<64x128xf16>, %w: !spyre.buffer<128x256xf16>,
                     %cos: !spyre.buffer<64x128xf16>, %sin: !spyre.buffer<64x128xf16>,
                     %y: !spyre.buffer<64x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<64x256xf16>
  spyre.matmul ins(%x, %w : !spyre.buffer<64x128xf16>, !spyre.buffer<128x256xf16>)
               outs(%p : !spyre.buffer<64x256xf16>)
  spyre.generic domain [64, 2, 2, 64] {indexing_maps = [#q, #tab, #rot, #tab, #q],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %cos, %p, %sin : !spyre.buffer<64x256xf16>, !spyre.buffer<64x128xf16>, !spyre.buffer<64x256xf16>, !spyre.buffer<64x128xf16>)
      outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%a: f16, %c: f16, %r: f16, %s: f16):
    %zero = arith.constant 0 : i32
    %half = spyre.index_expr affine_map<(d0, d1, d2, d3) -> (d2)> : i32
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %c : f16 to f32
    %2 = arith.extf %r : f16 to f32
    %3 = arith.extf %s : f16 to f32
    %4 = arith.mulf %0, %1 : f32
    %5 = arith.cmpi eq, %half, %zero : i32
    %6 = arith.negf %2 : f32
    %7 = arith.select %5, %6, %2 : f32
    %8 = arith.mulf %7, %3 : f32
    %9 = arith.addf %4, %8 : f32
    %10 = arith.truncf %9 : f32 to f16
    spyre.yield %10 : f16
  }
  spyre.return
}

// -----

// The same read of the next head's first half (d1 * 128 + 128 + ...) and an
// index that moves along a half-head are not run on the tiles.
#q = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 128 + d2 * 64 + d3)>
#next = affine_map<(d0, d1, d2, d3) -> (d0, d2 * 64 + d3)>
spyre.kernel @rotary_across_heads(%x: !spyre.buffer<64x128xf16>, %w: !spyre.buffer<128x256xf16>,
                                  %y: !spyre.buffer<64x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<64x256xf16>
  // expected-remark @+1 {{epilogue not fused: cannot run the epilogue on the output tile: the generic reads the product outside the block of 128 columns it writes}}
  spyre.matmul ins(%x, %w : !spyre.buffer<64x128xf16>, !spyre.buffer<128x256xf16>)
               outs(%p : !spyre.buffer<64x256xf16>)
  spyre.generic domain [64, 2, 2, 64] {indexing_maps = [#q, #next, #q],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %p : !spyre.buffer<64x256xf16>, !spyre.buffer<64x256xf16>)
      outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%a: f16, %b: f16):
    %0 = arith.addf %a, %b : f16
    spyre.yield %0 : f16
  }
  spyre.return
}

// -----

#q = affine_map<(d0, d1, d2, d3) -> (d0, d1 * 128 + d2 * 64 + d3)>
spyre.kernel @index_along_a_block(%x: !spyre.buffer<64x128xf16>, %w: !spyre.buffer<128x256xf16>,
                                  %y: !spyre.buffer<64x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<64x256xf16>
  // expected-remark @+1 {{epilogue not fused: cannot run the epilogue on the output tile: spyre.index_expr in the body varies within a block of columns}}
  spyre.matmul ins(%x, %w : !spyre.buffer<64x128xf16>, !spyre.buffer<128x256xf16>)
               outs(%p : !spyre.buffer<64x256xf16>)
  spyre.generic domain [64, 2, 2, 64] {indexing_maps = [#q, #q],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p : !spyre.buffer<64x256xf16>) outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%a: f16):
    %i = spyre.index_expr affine_map<(d0, d1, d2, d3) -> (d3)> : i32
    %0 = arith.sitofp %i : i32 to f16
    %1 = arith.addf %a, %0 : f16
    spyre.yield %1 : f16
  }
  spyre.return
}

// -----

// Blocks of two columns (pairs of a stacked output, scaled per pair) would
// take an instruction per op and pair.
#pairs = affine_map<(d0, d1, d2) -> (d0, d1 * 2 + d2)>
#pair = affine_map<(d0, d1, d2) -> (d1)>
spyre.kernel @pairs(%x: !spyre.buffer<64x128xf16>, %w: !spyre.buffer<128x256xf16>,
                    %s: !spyre.buffer<128xf16>, %y: !spyre.buffer<64x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<64x256xf16>
  // expected-remark @+1 {{epilogue not fused: cannot run the epilogue on the output tile: its innermost loop runs over 2 columns, fewer than 16}}
  spyre.matmul ins(%x, %w : !spyre.buffer<64x128xf16>, !spyre.buffer<128x256xf16>)
               outs(%p : !spyre.buffer<64x256xf16>)
  spyre.generic domain [64, 128, 2] {indexing_maps = [#pairs, #pair, #pairs],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %s : !spyre.buffer<64x256xf16>, !spyre.buffer<128xf16>) outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%a: f16, %b: f16):
    %0 = arith.mulf %a, %b : f16
    spyre.yield %0 : f16
  }
  spyre.return
}

// -----

// A rotary embedding whose 8 heads came as 2 x 4 loops (the views of a
// decode step's query projection): the two head loops are one loop in
// every map, and are merged before the plan, so that an output tile holds
// whole heads, not whole groups of four (a block of 256 columns). The
// halves stay loops of their own: the rotated half reads the other one.
// CHECK-LABEL: spyre.kernel @heads_in_two_loops
// CHECK: spyre.fused
// CHECK: spyre.generic domain [64, 8, 2, 32]
// TILE-LABEL: spyre.kernel @heads_in_two_loops
// TILE: spyre.tile = array<i64: {{[0-9]+}}, 64,
#straight = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 256 + d2 * 64 + d3 * 32 + d4)>
#rotated = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 256 + d2 * 64 - d3 * 32 + d4 + 32)>
#cosines = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3 * 32 + d4)>
#rotary_out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 256 + d2 * 64 + d3 * 32 + d4)>
spyre.kernel @heads_in_two_loops(%x: !spyre.buffer<64x512xf16>, %w: !spyre.buffer<512x512xf16>,
                                 %c: !spyre.buffer<64x64xf16>, %y: !spyre.buffer<64x512xf16>) {
  %p = spyre.alloc() : !spyre.buffer<64x512xf16>
  spyre.matmul ins(%x, %w : !spyre.buffer<64x512xf16>, !spyre.buffer<512x512xf16>)
               outs(%p : !spyre.buffer<64x512xf16>)
  spyre.generic domain [64, 2, 4, 2, 32] {indexing_maps = [#straight, #rotated, #cosines, #rotary_out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %p, %c : !spyre.buffer<64x512xf16>, !spyre.buffer<64x512xf16>, !spyre.buffer<64x64xf16>)
      outs(%y : !spyre.buffer<64x512xf16>) {
  ^bb0(%a: f16, %b: f16, %cos: f16):
    %0 = arith.mulf %a, %cos : f16
    %1 = arith.addf %0, %b : f16
    spyre.yield %1 : f16
  }
  spyre.return
}
