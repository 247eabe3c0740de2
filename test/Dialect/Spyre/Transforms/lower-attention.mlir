// RUN: spyre-opt %s -split-input-file --spyre-compile="cores=2 stop-after=tile" | FileCheck %s --check-prefix=TILE
// RUN: spyre-opt %s -split-input-file --spyre-compile="cores=2" | FileCheck %s

// Causal attention, one head of 256 positions on 2 cores: query blocks of
// 64 rows (halved from 128 so that each core gets two), keys in one block.
// A query block multiplies only the keys up to its last row (64, 128, 192,
// 256: the products past the diagonal are never computed), and the block on
// the diagonal masks the keys after each row with an iota, a comparison and
// a select. Scores stay in LX: the only store is the output.
// TILE-LABEL: spyre.kernel @causal
// TILE: spyre.attention {{.*}} causal {spyre.cores = 2 : i64, spyre.tile = array<i64: 64, 256>}
// CHECK-LABEL: spyre.hw.program @causal
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, {{.*}}m 64 k 64 n 64 {{{.*}}transpose_b
// CHECK: spyre.hw.fill {{.*}}, 0.000000e+00 [64 x 64] {col_step = 1.000000e+00 : f64, row_step = -1.000000e+00 : f64
// CHECK-NEXT: spyre.hw.binary "gt"
// CHECK-NEXT: spyre.hw.select
// CHECK: spyre.hw.reduce "max" {{.*}} [64 x 64] {accumulate
// CHECK: spyre.hw.unary "exp" #spyre.ref<lx, dl16, {{.*}} [64 x 64]
// CHECK: spyre.hw.reduce "sum" {{.*}} [64 x 64] {accumulate
// CHECK: spyre.hw.matmul {{.*}} m 64 k 64 n 64 {accumulate
// CHECK: spyre.hw.binary "div" #spyre.ref<lx, dl16
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16>, #spyre.ref<lx
// CHECK: spyre.hw.matmul #spyre.ref<lx, f32, {{.*}}m 64 k 64 n 256 {{{.*}}transpose_b
// CHECK-NOT: spyre.hw.dma #spyre.ref<@arg3, f32
// CHECK: spyre.hw.core 1 {
// CHECK-DAG: m 64 k 64 n 128 {{{.*}}transpose_b
// CHECK-DAG: m 64 k 64 n 192 {{{.*}}transpose_b
spyre.kernel @causal(%q: !spyre.buffer<1x256x64xf16>, %k: !spyre.buffer<1x256x64xf16>,
                     %v: !spyre.buffer<1x256x64xf16>, %o: !spyre.buffer<1x256x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<1x256x64xf16>, !spyre.buffer<1x256x64xf16>, !spyre.buffer<1x256x64xf16>) outs(%o : !spyre.buffer<1x256x64xf16>) scale = 0.125 causal
  spyre.return
}

// -----

// Grouped-query attention with one mask row for every query: query heads 0
// and 1 read key/value head 0, heads 2 and 3 head 1 (byte offset 1 x 700 x
// 32 x 2); core 0 runs heads 0 and 2. The mask row is loaded with each key
// block and read with a row stride of 0. 700 keys stream in blocks of 512
// and 188.
// TILE-LABEL: spyre.kernel @decode
// TILE: spyre.tile = array<i64: 1, 512>
// CHECK-LABEL: spyre.hw.program @decode
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg1, dl16> row 32768 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, f32, {{.*}}strides = [2048, 0, 0]>, #spyre.ref<@arg3, f32, strides = [2800, 0, 0]> row 2048 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, {{.*}}>, #spyre.ref<@arg1, dl16, offset = 32768> row 12032 x [1, 1, 1]
// CHECK: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [0, 4, 0]> [1 x 512]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@arg1, dl16, offset = 44800> row 32768 x [1, 1, 1]
// CHECK: spyre.hw.core 1 {
spyre.kernel @decode(%q: !spyre.buffer<4x1x32xf16>, %k: !spyre.buffer<2x700x32xf16>,
                     %v: !spyre.buffer<2x700x32xf16>, %m: !spyre.buffer<1x1x700xf32>,
                     %o: !spyre.buffer<4x1x32xf16>) {
  spyre.attention ins(%q, %k, %v, %m : !spyre.buffer<4x1x32xf16>, !spyre.buffer<2x700x32xf16>, !spyre.buffer<2x700x32xf16>, !spyre.buffer<1x1x700xf32>) outs(%o : !spyre.buffer<4x1x32xf16>) scale = 0.17677669529663687
  spyre.return
}
