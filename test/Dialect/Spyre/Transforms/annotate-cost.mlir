// RUN: spyre-opt %s -spyre-annotate-cost | FileCheck %s
// The same kernels on a card with 4 cores: compute takes 8x longer.
// RUN: sed -e 's/^cores = 32/cores = 4/' %S/../../../../lib/Arch/spyre_card.toml > %t.toml
// RUN: spyre-opt %s -spyre-attach-arch="arch=%t.toml" -spyre-annotate-cost | FileCheck %s --check-prefix=SMALL
// RUN: spyre-opt %s -spyre-annotate-cost="report-unknown=true" -verify-diagnostics -o /dev/null
// Kernels get the bound of their ops' compute and their arguments' traffic.
// RUN: spyre-opt %s -spyre-annotate-cost | FileCheck %s --check-prefix=KERNEL
// KERNEL: spyre.kernel @matmul({{.*}}) attributes {spyre.cost = {bound_cycles = 41943.04{{[0-9]*}} : f64, compute_cycles = 21845.33{{[0-9]*}} : f64, device_bytes = 6291456 : i64
// KERNEL: spyre.kernel @exp({{.*}}) attributes {spyre.cost = {bound_cycles = 447392.42{{[0-9]*}} : f64
// KERNEL: spyre.kernel @dynamic({{.*}}) {

// 2 * 1024^3 FLOPs at 1536 MAC/cycle/core on 32 cores = 21845.33 cycles; 6 MiB
// of f16 operands at 150 B/cycle = 41943.04 cycles: memory bound. The floor
// adds the bus's turnaround on the 2 MiB written (the lesser direction):
// 2097152 * 0.00574 = 12037.65 cycles more.
// CHECK-LABEL: spyre.kernel @matmul
// CHECK: spyre.matmul
// CHECK-SAME: spyre.cost = {bound_cycles = 41943.04{{[0-9]*}} : f64, compute_cycles = 21845.33{{[0-9]*}} : f64, device_bytes = 6291456 : i64, floor_cycles = 53980.69{{[0-9]*}} : f64, flops = 2147483648 : i64, memory_cycles = 41943.04{{[0-9]*}} : f64, vector_ops = 0 : i64, written_bytes = 2097152 : i64}
// SMALL-LABEL: spyre.kernel @matmul
// SMALL: bound_cycles = 174762.66{{[0-9]*}} : f64, compute_cycles = 174762.66{{[0-9]*}} : f64
spyre.kernel @matmul(%a: !spyre.buffer<1024x1024xf16>, %b: !spyre.buffer<1024x1024xf16>,
                     %c: !spyre.buffer<1024x1024xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<1024x1024xf16>, !spyre.buffer<1024x1024xf16>)
               outs(%c : !spyre.buffer<1024x1024xf16>)
  spyre.return
}

// exp runs at the vector unit's elementwise rate (the calibrated card's
// transcendental divisor is 1): 2^24 points / (11.2 * 32); 64 MiB at
// 150 B/cycle bound it.
// The floor: as many bytes written as read, 32 MiB of turnaround.
// CHECK-LABEL: spyre.kernel @exp
// CHECK: spyre.cost = {bound_cycles = 447392.42{{[0-9]*}} : f64, compute_cycles = 46811.42{{[0-9]*}} : f64, device_bytes = 67108864 : i64, floor_cycles = 639994.86{{[0-9]*}} : f64, flops = 0 : i64, memory_cycles = 447392.42{{[0-9]*}} : f64, vector_ops = 16777216 : i64, written_bytes = 33554432 : i64}
spyre.kernel @exp(%x: !spyre.buffer<4096x4096xf16>, %y: !spyre.buffer<4096x4096xf16>) {
  spyre.generic domain [4096, 4096] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4096x4096xf16>) outs(%y : !spyre.buffer<4096x4096xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.return
}

// CHECK-LABEL: spyre.kernel @dynamic
// CHECK-NOT: spyre.cost
// expected-remark @+1 {{no cost estimate for the kernel: operand 0 has a dynamic shape}}
spyre.kernel @dynamic(%x: !spyre.buffer<?xf16>, %y: !spyre.buffer<?xf16>) {
  // expected-remark @+1 {{no cost estimate: operand 0 has a dynamic shape}}
  spyre.copy ins(%x : !spyre.buffer<?xf16>) outs(%y : !spyre.buffer<?xf16>)
  spyre.return
}

// Attention over a projection's heads (a query read through its layout, a
// 1B Llama layer's prefill): both products over every query-key pair,
// 32 x 512 x 513 pairs x (64 + 64) x 2 FLOPs, and three SFU passes per score
// (25,214,976 at 11.2 a cycle on each of 32 cores: 70,354.3 cycles).
// CHECK-LABEL: spyre.kernel @attention
// CHECK: spyre.attention
// CHECK-SAME: compute_cycles = 70354.28{{[0-9]*}} : f64
// CHECK-SAME: flops = 2151677952 : i64
// CHECK-SAME: vector_ops = 25214976 : i64
spyre.kernel @attention(%q: !spyre.buffer<1048576xf16>, %k: !spyre.buffer<4x513x64xf16>,
                        %v: !spyre.buffer<4x513x64xf16>, %o: !spyre.buffer<1x512x32x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<1048576xf16>, !spyre.buffer<4x513x64xf16>, !spyre.buffer<4x513x64xf16>) outs(%o : !spyre.buffer<1x512x32x64xf16>) scale = 0.125 {query_layout = array<i64: 32, 512, 64, 64, 2048>}
  spyre.return
}

// Causal: query i attends to keys 0..i, 512 x 513 / 2 pairs per head.
// CHECK-LABEL: spyre.kernel @causal_attention
// CHECK: spyre.attention
// CHECK-SAME: flops = 1075838976 : i64
// CHECK-SAME: vector_ops = 12607488 : i64
spyre.kernel @causal_attention(%q: !spyre.buffer<1048576xf16>, %k: !spyre.buffer<4x513x64xf16>,
                               %v: !spyre.buffer<4x513x64xf16>, %o: !spyre.buffer<1x512x32x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<1048576xf16>, !spyre.buffer<4x513x64xf16>, !spyre.buffer<4x513x64xf16>) outs(%o : !spyre.buffer<1x512x32x64xf16>) scale = 0.125 causal {query_layout = array<i64: 32, 512, 64, 64, 2048>}
  spyre.return
}

// More queries than keys: rows 0..3 see 1..4 keys, rows 4..7 all 4
// (26 pairs a head, 4 heads, (64 + 64) x 2 FLOPs each).
// CHECK-LABEL: spyre.kernel @causal_more_queries
// CHECK: spyre.attention
// CHECK-SAME: flops = 26624 : i64
// CHECK-SAME: vector_ops = 312 : i64
spyre.kernel @causal_more_queries(%q: !spyre.buffer<4x8x64xf16>, %k: !spyre.buffer<4x4x64xf16>,
                                  %v: !spyre.buffer<4x4x64xf16>, %o: !spyre.buffer<4x8x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<4x8x64xf16>, !spyre.buffer<4x4x64xf16>, !spyre.buffer<4x4x64xf16>) outs(%o : !spyre.buffer<4x8x64xf16>) scale = 0.125 causal
  spyre.return
}

// A bound for vector work counts what each instruction streams, at the
// least: (x - mean) * rstd over 64 x 1024 f16 with per-row f32 statistics
// is two instructions of 6 bytes an element (x's 2, the f32 difference's 4;
// the f16 result's 2 after it), each at the full 11.2 elements a cycle:
// 65536 x 2 / 11.2 / 32 cores = 365.7 cycles. Pricing every instruction at
// all the generic's operands' 12 bytes (5.6 a cycle) gave twice that, a
// "bound" that GPT-2's LayerNorm kernels ran faster than.
// CHECK-LABEL: spyre.kernel @normalize
// CHECK: spyre.generic
// CHECK-SAME: compute_cycles = 365.71{{[0-9]*}} : f64
spyre.kernel @normalize(%x: !spyre.buffer<64x1024xf16>, %m: !spyre.buffer<64xf32>,
                        %r: !spyre.buffer<64xf32>, %y: !spyre.buffer<64x1024xf16>) {
  spyre.generic domain [64, 1024] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
      affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %m, %r : !spyre.buffer<64x1024xf16>, !spyre.buffer<64xf32>, !spyre.buffer<64xf32>)
      outs(%y : !spyre.buffer<64x1024xf16>) {
  ^bb0(%v: f16, %mean: f32, %rstd: f32):
    %w = arith.extf %v : f16 to f32
    %d = arith.subf %w, %mean : f32
    %n = arith.mulf %d, %rstd : f32
    %t = arith.truncf %n : f32 to f16
    spyre.yield %t : f16
  }
  spyre.return
}

// An embedding lookup reads the rows it gathers, not its table: 4 rows of
// 2048 f16 (16 KiB), the 4 i32 indices and the 16 KiB written; counting
// the 131 MB table made a decode step's lookup "bound" 5,000 times slower
// than it ran.
// CHECK-LABEL: spyre.kernel @embedding
// CHECK: spyre.gather
// CHECK-SAME: device_bytes = 32784 : i64
// KERNEL: spyre.kernel @embedding({{.*}}) attributes {spyre.cost = {{{.*}}device_bytes = 32784 : i64
spyre.kernel @embedding(%table: !spyre.buffer<32000x2048xf16>, %ids: !spyre.buffer<4xi32>,
                        %out: !spyre.buffer<4x2048xf16>) {
  spyre.gather ins(%table, %ids : !spyre.buffer<32000x2048xf16>, !spyre.buffer<4xi32>) outs(%out : !spyre.buffer<4x2048xf16>) axis = 0
  spyre.return
}

// A count of the scores at or above one of 31 thresholds per row (a
// sampling step's search): the threshold varies along the rows only and the
// squared score along the columns only, so each is counted where it can
// differ (31 and 32000 points), not at all 992000: the compare, its
// widening and the sum at every point, 3 x 992000 + 32000 + 4 x 31 + 2.
// CHECK-LABEL: spyre.kernel @per_row_threshold
// CHECK: spyre.generic
// CHECK-SAME: vector_ops = 3008126 : i64
spyre.kernel @per_row_threshold(%x: !spyre.buffer<32000xf32>, %lh: !spyre.buffer<2xf32>,
                                %count: !spyre.buffer<31xi32>) {
  spyre.generic domain [31, 32000] {combiners = [#spyre.combiner<sum>],
      indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (0)>,
                       affine_map<(d0, d1) -> (1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x, %lh, %lh : !spyre.buffer<32000xf32>, !spyre.buffer<2xf32>, !spyre.buffer<2xf32>)
      outs(%count : !spyre.buffer<31xi32>) {
  ^bb0(%v: f32, %low: f32, %high: f32):
    %ways = arith.constant 3.200000e+01 : f32
    %s = arith.mulf %v, %v : f32
    %range = arith.subf %high, %low : f32
    %step = arith.divf %range, %ways : f32
    %j = spyre.index_expr affine_map<(d0, d1) -> (d0 + 1)> : i32
    %jf = arith.sitofp %j : i32 to f32
    %o = arith.mulf %step, %jf : f32
    %t = arith.addf %low, %o : f32
    %ok = arith.cmpf oge, %s, %t : f32
    %n = arith.extui %ok : i1 to i32
    spyre.yield %n : i32
  }
  spyre.return
}

// A buffer read and written in place counts as written only (the floor may
// be low, never high): no turnaround, the floor is the bound.
// KERNEL-LABEL: spyre.kernel @in_place
// KERNEL-SAME: bound_cycles = 8.192000e+01 : f64
// KERNEL-SAME: floor_cycles = 8.192000e+01 : f64
// KERNEL-SAME: written_bytes = 12288 : i64
spyre.kernel @in_place(%x: !spyre.buffer<64x96xf16>) {
  spyre.generic domain [64, 96] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<64x96xf16>) outs(%x : !spyre.buffer<64x96xf16>) {
  ^bb0(%v: f16):
    %e = math.exp %v : f16
    spyre.yield %e : f16
  }
  spyre.return
}
