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
// of f16 operands at 150 B/cycle = 41943.04 cycles: memory bound.
// CHECK-LABEL: spyre.kernel @matmul
// CHECK: spyre.matmul
// CHECK-SAME: spyre.cost = {bound_cycles = 41943.04{{[0-9]*}} : f64, compute_cycles = 21845.33{{[0-9]*}} : f64, device_bytes = 6291456 : i64, flops = 2147483648 : i64, memory_cycles = 41943.04{{[0-9]*}} : f64, vector_ops = 0 : i64}
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
// CHECK-LABEL: spyre.kernel @exp
// CHECK: spyre.cost = {bound_cycles = 447392.42{{[0-9]*}} : f64, compute_cycles = 46811.42{{[0-9]*}} : f64, device_bytes = 67108864 : i64, flops = 0 : i64, memory_cycles = 447392.42{{[0-9]*}} : f64, vector_ops = 16777216 : i64}
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
