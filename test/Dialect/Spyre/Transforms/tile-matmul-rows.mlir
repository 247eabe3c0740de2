// RUN: spyre-opt %s --pass-pipeline='builtin.module(spyre-compile{stop-after=tile})' | FileCheck %s

// Row tiles that divide the rows exactly. 800 rows in tiles of 256 leave a
// last tile of 32: its cores run ahead of the others of their grid column
// and read the shared rhs panels again, and the product took longer
// (216.2 us simulated) than at 1024 rows (192.0). Four tiles of 200 rows
// keep every core in step: 160.7 us.
// CHECK-LABEL: spyre.kernel @rows_800
// CHECK: spyre.matmul
// CHECK-SAME: spyre.tile = array<i64: 200,
spyre.kernel @rows_800(%x: !spyre.buffer<800x2048xf16>, %w: !spyre.buffer<2048x2048xf16>, %y: !spyre.buffer<800x2048xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<800x2048xf16>, !spyre.buffer<2048x2048xf16>) outs(%y : !spyre.buffer<800x2048xf16>)
  spyre.return
}

// A ViT-B/16 batch of 8 (197 tokens each): 8 tiles of 197 rows, not 256-row
// tiles with a last one of 40 (318.0 -> 265.2 us).
// CHECK-LABEL: spyre.kernel @vit_tokens
// CHECK: spyre.matmul
// CHECK-SAME: spyre.tile = array<i64: 197,
spyre.kernel @vit_tokens(%x: !spyre.buffer<1576x2048xf16>, %w: !spyre.buffer<2048x2048xf16>, %y: !spyre.buffer<1576x2048xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<1576x2048xf16>, !spyre.buffer<2048x2048xf16>) outs(%y : !spyre.buffer<1576x2048xf16>)
  spyre.return
}

// Rows that are a power of two keep their tiles.
// CHECK-LABEL: spyre.kernel @rows_1024
// CHECK: spyre.matmul
// CHECK-SAME: spyre.tile = array<i64: 256, 256, 512>
spyre.kernel @rows_1024(%x: !spyre.buffer<1024x2048xf16>, %w: !spyre.buffer<2048x2048xf16>, %y: !spyre.buffer<1024x2048xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<1024x2048xf16>, !spyre.buffer<2048x2048xf16>) outs(%y : !spyre.buffer<1024x2048xf16>)
  spyre.return
}
