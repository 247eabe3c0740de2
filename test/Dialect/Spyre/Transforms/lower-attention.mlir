// RUN: spyre-opt %s -split-input-file --spyre-compile="cores=2 stop-after=tile" | FileCheck %s --check-prefix=TILE
// RUN: spyre-opt %s -split-input-file --spyre-compile="cores=2" | FileCheck %s

// Causal attention, one head of 256 positions on 2 cores, its tile given
// (tile-attention.mlir tests the choice): blocks of 64 query rows, in panels
// of two blocks that share each key/value block loaded; keys in blocks of
// 256.
// A block multiplies only the keys up to its last row (the products past
// the diagonal are never computed), and masks the keys after each row with
// one select over the block's last 63 columns only (every row sees the keys
// before them), whose condition (key after row: an iota and a comparison)
// each core computes once. Values are loaded as rows of 65
// (a column of ones after them), so that the product with the probabilities
// also sums them, into the accumulator's last column: no sum on the SFU. The
// first key block's products write the accumulator (no zeros, no rescaling
// by the running maximum). Scores stay in LX: the only store
// is the output. Core 1 runs the first panel. The PT computes the second block's scores before the SFU
// starts on the first block's (each waits for its own product), and the
// first block's probabilities times values wait for the first block only.
// TILE-LABEL: spyre.kernel @causal
// TILE: spyre.attention {{.*}} causal {spyre.cores = 2 : i64, spyre.tile = array<i64: 128, 256, 64>}
// CHECK-LABEL: spyre.hw.program @causal
// CHECK: spyre.hw.core 0 {
// CHECK: m 64 k 64 n 192 {{{.*}}transpose_b
// CHECK: m 64 k 64 n 256 {{{.*}}transpose_b
// CHECK: spyre.hw.core 1 {
// The query panel is scaled once it and the keys have arrived (the first
// two of the step's three loads), and the first product waits for that
// scaling only: the values are first needed by the first probabilities x
// values, whose exponential waits for them (below). The constants and the
// values' column of ones are filled once per core.
// CHECK: spyre.hw.binary "mul" {{.*}} imm 1.250000e-01 [128 x 64] {signal_sem = [[SFU:5]] : i64, wait_count = 2 : i64, wait_sem = 0 : i64}
// CHECK: spyre.hw.fill #spyre.ref<lx, dl16, {{.*}}, 1.000000e+00 [256 x 1] {signal_sem = [[SFU]] : i64}
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, dl16, {{.*}}, 1.000000e+00 [256 x 1] {signal_sem = [[SFU]] : i64}
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, f32, {{.*}}, 0xFFF0000000000000 [128 x 1] {signal_sem = [[SFU]] : i64}
// CHECK-NOT: [128 x 65]
// CHECK-NEXT: spyre.hw.fill #spyre.ref<lx, f32, offset = [[AFTER:[0-9]+]], strides = [256, 4, 0]>, 1.000000e+00 [64 x 64] {col_step = 1.000000e+00 : f64, row_step = -1.000000e+00 : f64, signal_sem = [[SFU]] : i64}
// CHECK-NEXT: spyre.hw.binary "gt" #spyre.ref<lx, f32, offset = [[AFTER]], {{.*}} [64 x 64]
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, {{.*}}> = {{.*}} m 64 k 64 n 64 {signal_sem = [[PT:4]] : i64, transpose_b, wait_count = 1 : i64, wait_sem = [[SFU]] : i64}
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, {{.*}}> = {{.*}} m 64 k 64 n 128 {signal_sem = [[PT]] : i64, transpose_b}
// CHECK-NEXT: spyre.hw.select #spyre.ref<lx, f32, offset = 4, {{.*}}>, #spyre.ref<lx, f32, offset = [[AFTER]], {{.*}} [64 x 63] {signal_sem = [[SFU]] : i64, wait_count = {{[0-9]+}} : i64, wait_sem = [[PT]] : i64}
// CHECK: spyre.hw.reduce "max" {{.*}} [64 x 64] {accumulate
// CHECK-NOT: spyre.hw.reduce "sum"
// CHECK: spyre.hw.unary "exp" #spyre.ref<lx, dl16, {{.*}} [64 x 64] {signal_sem = [[SFU]] : i64, wait_count = 3 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.matmul #spyre.ref<lx, f32, offset = {{[0-9]+}}, strides = [260, 0, 0]> = {{.*}}, strides = [130, 0, 0]> m 64 k 64 n 65 {signal_sem = [[PT]] : i64, wait_count = {{[0-9]+}} : i64, wait_sem = [[SFU]] : i64}
// CHECK-NEXT: spyre.hw.select {{.*}}, #spyre.ref<lx, f32, offset = [[AFTER]], {{.*}} [64 x 63] {{.*}}wait_count = {{[0-9]+}} : i64, wait_sem = [[PT]] : i64}
// CHECK-NOT: spyre.hw.binary "gt"
// CHECK: spyre.hw.reduce "max" {{.*}} [64 x 128] {accumulate
// CHECK-NOT: [64 x 65]
// The panel, the core's last, is divided by its sums and stored a block of
// rows at a time: the first block once its probabilities x values are done
// (the SFU divides it after the second block's probabilities), its store
// waiting for that division only.
// CHECK: spyre.hw.matmul {{.*}} m 64 k 128 n 65 {signal_sem = [[PT]] : i64
// CHECK-NEXT: spyre.hw.binary "eq" {{.*}} [64 x 1] {signal_sem = [[SFU]] : i64, wait_count = {{[0-9]+}} : i64, wait_sem = [[PT]] : i64}
// CHECK-NEXT: spyre.hw.select
// CHECK-NEXT: spyre.hw.binary "div" #spyre.ref<lx, dl16, {{.*}} [64 x 64] {signal_sem = [[SFU]] : i64}
// CHECK-NEXT: spyre.hw.binary "eq" {{.*}} [64 x 1] {signal_sem = [[SFU]] : i64, wait_count = {{[0-9]+}} : i64, wait_sem = [[PT]] : i64}
// CHECK: spyre.hw.binary "div" #spyre.ref<lx, dl16, {{.*}} [64 x 64] {signal_sem = 1 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16>, #spyre.ref<lx, dl16{{.*}}> row 8192 x [1, 1, 1] {signal_sem = 2 : i64, wait_count = {{[0-9]+}} : i64, wait_sem = [[SFU]] : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 8192>, #spyre.ref<lx, dl16{{.*}}> row 8192 x [1, 1, 1] {signal_sem = 2 : i64, wait_count = 1 : i64, wait_sem = 1 : i64}
// CHECK-NOT: spyre.hw.dma #spyre.ref<@arg3, f32
spyre.kernel @causal(%q: !spyre.buffer<1x256x64xf16>, %k: !spyre.buffer<1x256x64xf16>,
                     %v: !spyre.buffer<1x256x64xf16>, %o: !spyre.buffer<1x256x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<1x256x64xf16>, !spyre.buffer<1x256x64xf16>, !spyre.buffer<1x256x64xf16>) outs(%o : !spyre.buffer<1x256x64xf16>) scale = 0.125 causal {spyre.tile = array<i64: 128, 256, 64>}
  spyre.return
}

// -----

// Grouped-query attention with one mask row for every query: query heads 0
// and 1 read key/value head 0, heads 2 and 3 head 1 (byte offset 1 x 700 x
// 32 x 2); core 0 runs heads 0 and 2. The mask row is loaded with each key
// block and read with a row stride of 0. 700 keys stream in blocks of 512
// and 188.
// TILE-LABEL: spyre.kernel @decode
// TILE: spyre.tile = array<i64: 1, 512, 1>
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
  spyre.attention ins(%q, %k, %v, %m : !spyre.buffer<4x1x32xf16>, !spyre.buffer<2x700x32xf16>, !spyre.buffer<2x700x32xf16>, !spyre.buffer<1x1x700xf32>) outs(%o : !spyre.buffer<4x1x32xf16>) scale = 0.17677669529663687 {spyre.tile = array<i64: 1, 512, 1>}
  spyre.return
}

// -----

// Two key blocks of 512 for one panel of two blocks of 128 rows (a head
// per core): the first step also computes the second step's first scores (after
// its first block's probabilities x values, before its second's), waiting
// for the second step's loads (semaphore 0 at 5: query, keys and values of
// step 1, keys and values of step 2); the second step's first SFU
// instruction waits for that product, the 4th PT signal. The first step's
// probabilities x values write the accumulator, the second's add to it
// after the SFU rescales it.
// TILE-LABEL: spyre.kernel @keys
// TILE: spyre.tile = array<i64: 256, 512, 128>
// CHECK-LABEL: spyre.hw.program @keys
// CHECK: spyre.hw.matmul {{.*}} m 128 k 512 n 65 {signal_sem = 4 : i64
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 128 k 64 n 512 {signal_sem = 4 : i64, transpose_b, wait_count = 5 : i64, wait_sem = 0 : i64}
// CHECK: spyre.hw.matmul {{.*}} m 128 k 512 n 65 {signal_sem = 1 : i64
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 128 k 64 n 512 {signal_sem = 4 : i64, transpose_b, wait_count = 5 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.unary "copy" {{.*}} [128 x 1] {signal_sem = 5 : i64, wait_count = 4 : i64, wait_sem = 4 : i64}
// CHECK: spyre.hw.binary "mul" #spyre.ref<lx, f32, {{.*}} [128 x 65]
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 128 k 512 n 65 {accumulate, signal_sem = 4 : i64
spyre.kernel @keys(%q: !spyre.buffer<2x256x64xf16>, %k: !spyre.buffer<2x1024x64xf16>,
                   %v: !spyre.buffer<2x1024x64xf16>, %o: !spyre.buffer<2x256x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<2x256x64xf16>, !spyre.buffer<2x1024x64xf16>, !spyre.buffer<2x1024x64xf16>) outs(%o : !spyre.buffer<2x256x64xf16>) scale = 0.125 {spyre.tile = array<i64: 256, 512, 128>}
  spyre.return
}

// -----

// A rank-4 target (batch x query length x heads per batch x head size): each
// query row holds its heads, the layout a model's transpose(1, 2) reads, so
// no copy merges them. Head h of batch b stores its rows from row 0 of batch
// b after h heads, one row of 128 bytes every 2 x 64 elements. Core 1
// (heads 1 and 3) starts at its second unit (the start depends on the head:
// see @prefetch); a core's last panel goes out in blocks of 32 rows.
// CHECK-LABEL: spyre.hw.program @rows_hold_heads
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, strides = [256, 0, 0]>, #spyre.ref<lx, {{.*}}> row 128 x [64, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 16384, strides = [256, 0, 0]>, #spyre.ref<lx, {{.*}}> row 128 x [32, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 24576, strides = [256, 0, 0]>, #spyre.ref<lx, {{.*}}> row 128 x [32, 1, 1]
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 16512, strides = [256, 0, 0]>, #spyre.ref<lx, {{.*}}> row 128 x [64, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 128, strides = [256, 0, 0]>, #spyre.ref<lx, {{.*}}> row 128 x [32, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 8320, strides = [256, 0, 0]>, #spyre.ref<lx, {{.*}}> row 128 x [32, 1, 1]
spyre.kernel @rows_hold_heads(%q: !spyre.buffer<4x64x64xf16>, %k: !spyre.buffer<4x64x64xf16>,
                              %v: !spyre.buffer<4x64x64xf16>, %o: !spyre.buffer<2x64x2x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<4x64x64xf16>, !spyre.buffer<4x64x64xf16>, !spyre.buffer<4x64x64xf16>) outs(%o : !spyre.buffer<2x64x2x64xf16>) scale = 0.125 causal
  spyre.return
}

// -----

// Heads split from a projection's rows without a copy (GPT-2's packed q, k
// and v: each row holds 2 heads of q, then of k, then of v, 384 elements):
// 1-D operands read through their layouts. A panel's query rows and a key
// block's rows are loaded one row of a head (128 bytes) every 768 bytes;
// values likewise, into rows of 65.
// CHECK-LABEL: spyre.hw.program @packed
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [768, 0, 0]> row 128 x [64, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 0, 0]>, #spyre.ref<@arg1, dl16, strides = [768, 0, 0]> row 128 x [64, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, {{.*}}strides = [130, 0, 0]>, #spyre.ref<@arg2, dl16, strides = [768, 0, 0]> row 128 x [64, 1, 1]
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 0, 0]>, #spyre.ref<@arg0, dl16, offset = 128, strides = [768, 0, 0]> row 128 x [64, 1, 1]
spyre.kernel @packed(%q: !spyre.buffer<24320xf16>, %k: !spyre.buffer<24320xf16>,
                     %v: !spyre.buffer<24320xf16>, %o: !spyre.buffer<1x64x2x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<24320xf16>, !spyre.buffer<24320xf16>, !spyre.buffer<24320xf16>) outs(%o : !spyre.buffer<1x64x2x64xf16>) scale = 0.125 causal {key_layout = array<i64: 2, 64, 64, 64, 384>, query_layout = array<i64: 2, 64, 64, 64, 384>, value_layout = array<i64: 2, 64, 64, 64, 384>}
  spyre.return
}

// -----

// The same projection for a batch of 2 sequences: heads 0-1 are batch 0's,
// 2-3 batch 1's, whose rows start 64 x 384 elements later (the last two
// entries of each layout), not one head later.
// CHECK-LABEL: spyre.hw.program @packed_batches
// CHECK-DAG: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 0, 0]>, #spyre.ref<@arg0, dl16, offset = 49152, strides = [768, 0, 0]> row 128 x [64, 1, 1]
// CHECK-DAG: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [128, 0, 0]>, #spyre.ref<@arg0, dl16, offset = 49280, strides = [768, 0, 0]> row 128 x [64, 1, 1]
spyre.kernel @packed_batches(%q: !spyre.buffer<48896xf16>, %k: !spyre.buffer<48896xf16>,
                             %v: !spyre.buffer<48896xf16>, %o: !spyre.buffer<2x64x2x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<48896xf16>, !spyre.buffer<48896xf16>, !spyre.buffer<48896xf16>) outs(%o : !spyre.buffer<2x64x2x64xf16>) scale = 0.125 causal {key_layout = array<i64: 4, 64, 64, 64, 384, 2, 24576>, query_layout = array<i64: 4, 64, 64, 64, 384, 2, 24576>, value_layout = array<i64: 4, 64, 64, 64, 384, 2, 24576>}
  spyre.return
}

// -----

// Two panels of 256 rows per core (heads 0 and 2 on core 0), three key
// blocks each. The second panel's queries are loaded during the first
// panel's second step, after that step's keys and values, into the query
// slot's other copy, and its first step loads only keys and values: all
// cores change panels at about the same time, and their query loads there
// held up the next keys and values. The first panel's last step scales
// them (its first instruction, waiting for its loads) and starts the second
// panel's first scores after one of its own probabilities x values, which
// follows the scaling on the SFU. The first panel's output is stored in two
// pieces of 128 rows, with its last step and with the next panel's first;
// the second panel, the core's last, a block of 128 rows at a time.
// CHECK-LABEL: spyre.hw.program @prefetch
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}>, #spyre.ref<@arg0, dl16> row 32768
// CHECK: spyre.hw.dma #spyre.ref<lx, {{.*}}>, #spyre.ref<@arg2, dl16, offset = 65536, {{.*}}> row 128 x [512, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[Q1:[0-9]+]]>, #spyre.ref<@arg0, dl16, offset = 65536> row 32768
// CHECK-NOT: @arg0
// CHECK: spyre.hw.binary "mul" #spyre.ref<lx, dl16, offset = [[Q1]], {{.*}} imm 1.250000e-01 [256 x 64] {signal_sem = 5 : i64, wait_count = 8 : i64, wait_sem = 0 : i64}
// CHECK: m 128 k 512 n 65 {accumulate
// CHECK-NEXT: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[Q1]], {{.*}} m 128 k 64 n 512
// CHECK-NOT: @arg0
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16>, #spyre.ref<lx, {{.*}}> row 16384
// CHECK-NOT: @arg0
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 16384>, #spyre.ref<lx, {{.*}}> row 16384
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 65536>, #spyre.ref<lx, {{.*}}> row 16384
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 81920>, #spyre.ref<lx, {{.*}}> row 16384
// CHECK: spyre.hw.core 1 {
spyre.kernel @prefetch(%q: !spyre.buffer<4x256x64xf16>, %k: !spyre.buffer<4x1536x64xf16>,
                       %v: !spyre.buffer<4x1536x64xf16>, %o: !spyre.buffer<4x256x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<4x256x64xf16>, !spyre.buffer<4x1536x64xf16>, !spyre.buffer<4x1536x64xf16>) outs(%o : !spyre.buffer<4x256x64xf16>) scale = 0.125 {spyre.tile = array<i64: 256, 512, 128>}
  spyre.return
}

// -----

// Folded causal panels (tile [128, 128, 64, 1]): one head of 256 positions
// in runs of 64 rows, the first with the last and the second with the third,
// so that each core's panel sees as many keys. Core 0 holds rows 0-63 and
// 192-255: two query loads (offsets 0 and 192 rows of 128 bytes) into one
// panel, rows 0-63 multiply only the first 64 keys, rows 192-255 every key
// of both blocks, and the output goes back to the same two runs. Core 1
// holds rows 64-191, whose second key block ends at key 191.
// CHECK-LABEL: spyre.hw.program @folded
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[Q:[0-9]+]]>, #spyre.ref<@arg0, dl16> row 8192 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}>, #spyre.ref<@arg0, dl16, offset = 24576> row 8192 x [1, 1, 1]
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[Q]], {{.*}} m 64 k 64 n 64 {
// CHECK-NEXT: spyre.hw.matmul {{.*}} m 64 k 64 n 128 {
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16>, {{.*}} row 8192 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 24576>, {{.*}} row 8192 x [1, 1, 1]
// CHECK: spyre.hw.core 1 {
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}>, #spyre.ref<@arg0, dl16, offset = 8192> row 8192 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}>, #spyre.ref<@arg0, dl16, offset = 16384> row 8192 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}>, #spyre.ref<@arg1, dl16, offset = 16384> row 8192 x [1, 1, 1]
// CHECK: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 8192>, {{.*}} row 8192 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg3, dl16, offset = 16384>, {{.*}} row 8192 x [1, 1, 1]
spyre.kernel @folded(%q: !spyre.buffer<1x256x64xf16>, %k: !spyre.buffer<1x256x64xf16>,
                     %v: !spyre.buffer<1x256x64xf16>, %o: !spyre.buffer<1x256x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<1x256x64xf16>, !spyre.buffer<1x256x64xf16>, !spyre.buffer<1x256x64xf16>) outs(%o : !spyre.buffer<1x256x64xf16>) scale = 0.125 causal {spyre.tile = array<i64: 128, 128, 64, 1>}
  spyre.return
}
