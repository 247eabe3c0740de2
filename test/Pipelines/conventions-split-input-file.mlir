// -split-input-file runs the passes on each chunk separately and joins the
// results with the separator; an error in one chunk does not stop the next.
// RUN: spyre-opt %s -split-input-file -spyre-annotate-cost | FileCheck %s
// RUN: not spyre-opt %s -split-input-file -spyre-divide-work="cores=33" 2>&1 | FileCheck %s --check-prefix=EACH

// CHECK-LABEL: spyre.kernel @first
// CHECK-SAME: spyre.cost
// CHECK: // -----
// CHECK-LABEL: spyre.kernel @second
// CHECK-SAME: spyre.cost

// Each chunk fails on its own.
// EACH-COUNT-2: cores = 33 is not in [0, 32]

spyre.kernel @first(%x: !spyre.buffer<64x256xf16>, %y: !spyre.buffer<64x256xf16>) {
  spyre.copy ins(%x : !spyre.buffer<64x256xf16>) outs(%y : !spyre.buffer<64x256xf16>)
  spyre.return
}

// -----

spyre.kernel @second(%x: !spyre.buffer<128xf32>, %y: !spyre.buffer<128xf32>) {
  spyre.copy ins(%x : !spyre.buffer<128xf32>) outs(%y : !spyre.buffer<128xf32>)
  spyre.return
}
