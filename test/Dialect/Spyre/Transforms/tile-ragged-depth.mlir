// RUN: spyre-opt %s -spyre-divide-work -spyre-tile | FileCheck %s

// A decode step's down projection, 1 x 5632 x 2048: each of the 32 cores
// streams 64 columns of the weight, and every K step's load pays the DMA
// latency. 5632 in steps of 1024 is five whole steps and a half one; priced
// as six whole ones (a sixth more PT work and loads than there are) the
// estimate took steps of 512 (eleven latencies): 159.5 us against 162.0
// simulated.
// CHECK-LABEL: spyre.kernel @down_projection
// CHECK: spyre.matmul {{.*}}spyre.tile = array<i64: 1, 64, 1024>
spyre.kernel @down_projection(%x: !spyre.buffer<1x5632xf16>, %w: !spyre.buffer<2048x5632xf16>,
                              %y: !spyre.buffer<1x2048xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<1x5632xf16>, !spyre.buffer<2048x5632xf16>)
      outs(%y : !spyre.buffer<1x2048xf16>)
  spyre.return
}
