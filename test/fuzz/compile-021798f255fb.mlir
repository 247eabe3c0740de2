
// Heads split from a projection's rows without a copy (GPT-2's packed q, k
// and v: each row holds 2 heads of q, then of k, then of v, 384 elements):
// 1-D operands read through their layouts. A panel's query rows and a key
// block's rows are loaded one row of a head (128 bytes) every 768 bytes;
// values likewise, into rows of 65.
// CHECK-LABEL: spyre.hw.program @packed
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [768, 0, 0]> row 128 x [64, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 1048576, 0]>, #spyre.ref<@arg1, dl16, strides = [768, 0, 0]> row 128 x [64, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, {{.*}}strides = [130, 0, 0]>, #spyre.ref<@arg2, dl16, strides = [768, 0, 0]> row 128 x [64, 1, 1]
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 0, 0]>, #spyre.ref<@arg0, dl16, offset = 128, strides = [768, 0, 0]> row 128 x [64, 1, 1]
spyre.kernel @packed(%q: !spyre.buffer<24320xf16>, %k: !spyre.buffer<24320xf16>,
                     %v: !spyre.buffer<24320xf16>, %o: !spyre.buffer<1x64x2x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<24320xf16>, !spyre.buffer<24320xf16>, !spyre.buffer<24320xf16>) outs(%o : !spyre.buffer<1x64x2x64xf16>) scale = 0.125 causal {key_layout = array<i64: 2, 64, 64, 64, 384>, query_layout = array<i64: 2, 64, 64, 64, 384>, value_layout = array<i64: 9223372036854775807, 64, 64, 64, 384>}
  spyre.return
}

