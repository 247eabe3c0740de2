// Text nested deeper than the parser's recursion can take is refused with a
// diagnostic instead of overflowing the stack (spyre-mlir/Nesting.h: at most 256
// levels of brackets of any kind).
// RUN: python3 -c "print('module {' * 4000 + '}' * 4000)" | not spyre-opt 2>&1 | FileCheck %s
// RUN: python3 -c "print('module {' * 4000 + '}' * 4000)" | not spyre-translate --spyre-hw-to-binary 2>&1 | FileCheck %s
// RUN: python3 -c "print('module attributes {a = ' + '[' * 100000 + ']' * 100000 + '} {}')" > %t.mlir
// RUN: not spyre-opt %t.mlir 2>&1 | FileCheck %s
// RUN: not spyre-translate --spyre-hw-to-binary %t.mlir -o %t.bin 2>&1 | FileCheck %s
// CHECK: error: line 1, column {{[0-9]+}}: the input nests deeper than 256 levels

// Real IR is far shallower: this file (comments and strings do not count).
// RUN: spyre-opt %s | FileCheck %s --check-prefix=SHALLOW
// SHALLOW: spyre.kernel @k
// "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((
spyre.kernel @k(%a: !spyre.buffer<4xf32>) attributes {note = "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["} {
  spyre.return
}

// MLIR 22's parser aborts on dense arrays of index (found by scripts/fuzz.py).
// RUN: echo "module attributes {a.b = array<index: 2, 8>} {}" | not spyre-opt 2>&1 | FileCheck %s --check-prefix=INDEX
// INDEX: error: line 1, column {{[0-9]+}}: dense arrays of index (array<index: ...>) are not supported; use i64
