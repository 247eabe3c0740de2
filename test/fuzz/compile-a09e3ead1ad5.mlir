
// CHECK-LABEL: spyre.kernel @partial_slice
// CHECK-NEXT: spyre.slice
spyre.kernel @partial_slice(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x4xf16>) {
  spyre.slice ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x4xf16>) offsets [0, 9223372036854775807] strides [1, 1]
  spyre.return
}

