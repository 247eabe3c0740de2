spyre.kernel @k(%a: !spyre.buffer<4611686018427387904x64xf16>, %b: !spyre.buffer<64x64xf16>, %c: !spyre.buffer<4611686018427387904x64xf16>) {
  spyre.matmul ins(%a, %b : !spyre.buffer<4611686018427387904x64xf16>, !spyre.buffer<64x64xf16>) outs(%c : !spyre.buffer<4611686018427387904x64xf16>)
  spyre.return
}
