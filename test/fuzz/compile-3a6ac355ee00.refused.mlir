spyre.kernel @k(%a: !spyre.buffer<2147483648x16xf16>, %b: !spyre.buffer<16x16xf16>, %c: !spyre.buffer<2147483648x16xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<2147483648x16xf16>, !spyre.buffer<16x16xf16>) outs(%c : !spyre.buffer<2147483648x16xf16>)
  spyre.return
}
