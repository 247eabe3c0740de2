// --verify-diagnostics checks Spyre's errors and remarks where they are
// expected (with -split-input-file, per chunk), and fails on a diagnostic
// nobody expected or an expected one that did not come.
// RUN: spyre-opt %s -split-input-file -spyre-annotate-cost="report-unknown=true" -verify-diagnostics -o /dev/null
// RUN: sed -e 's/no cost estimate/no such text/' %s > %t.mlir
// RUN: not spyre-opt %t.mlir -split-input-file -spyre-annotate-cost="report-unknown=true" -verify-diagnostics -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSED
// MISSED: expected remark "no such text: operand 0 has a dynamic shape" was not produced

// expected-remark @+1 {{no cost estimate for the kernel: operand 0 has a dynamic shape}}
spyre.kernel @dynamic(%x: !spyre.buffer<?xf32>, %y: !spyre.buffer<?xf32>) {
  // expected-remark @+1 {{no cost estimate: operand 0 has a dynamic shape}}
  spyre.copy ins(%x : !spyre.buffer<?xf32>) outs(%y : !spyre.buffer<?xf32>)
  spyre.return
}

// -----

spyre.kernel @bad_copy(%x: !spyre.buffer<8xf32>, %y: !spyre.buffer<4xf32>) {
  // expected-error @+1 {{'spyre.copy' op source and target shapes differ}}
  spyre.copy ins(%x : !spyre.buffer<8xf32>) outs(%y : !spyre.buffer<4xf32>)
  spyre.return
}
