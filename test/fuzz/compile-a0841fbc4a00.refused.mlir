spyre.kernel @k(%a: !spyre.buffer<2147483648x64xf16>, %b: !spyre.buffer<64x64xf16>, %c: !spyre.buffer<2147483648x64xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<2147483648x64xf16>, !spyre.buffer<64x64xf16>) outs(%c : !spyre.buffer<2147483648x64xf16>)
  spyre.return
}
