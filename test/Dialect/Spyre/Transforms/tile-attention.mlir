// RUN: spyre-opt %s -split-input-file --spyre-compile=stop-after=tile | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-divide-work -spyre-tile="candidates=3" | FileCheck %s --check-prefix=LIST

// An attention's tile is [panel rows, keys, block rows], ranked by the
// plan's estimate of its busiest core. GPT-2's causal attention (12 heads of
// 512 positions) on 32 cores: panels of 128 rows, 48 units that the cores
// share longest first (a head's last panel sees 4 times the keys of its
// first), and each panel two blocks of 64 rows, so that one block's softmax
// runs while the other's products do. Panels of 512 would read each key
// block once per head but leave 20 cores idle.
// CHECK-LABEL: spyre.kernel @gpt2
// CHECK: spyre.tile = array<i64: 128, 128, 64>
// The chosen tile first, then the next ones by estimate.
// LIST-LABEL: spyre.kernel @gpt2
// LIST: spyre.tile_candidates = [array<i64: 128, 128, 64>, array<i64: {{[0-9, ]+}}>, array<i64: {{[0-9, ]+}}>]
spyre.kernel @gpt2(%q: !spyre.buffer<12x512x64xf16>, %k: !spyre.buffer<12x512x64xf16>,
                   %v: !spyre.buffer<12x512x64xf16>, %o: !spyre.buffer<12x512x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<12x512x64xf16>, !spyre.buffer<12x512x64xf16>, !spyre.buffer<12x512x64xf16>) outs(%o : !spyre.buffer<12x512x64xf16>) scale = 0.125 causal
  spyre.return
}

// -----

// 32 heads of 2048 positions: each core has a head's worth of panels, and
// the keys and values every panel reads again take the bus; panels of 512
// rows read them a quarter as often as panels of 128.
// CHECK-LABEL: spyre.kernel @long
// CHECK: spyre.tile = array<i64: 512, 256, 128>
spyre.kernel @long(%q: !spyre.buffer<32x2048x128xf16>, %k: !spyre.buffer<32x2048x128xf16>,
                   %v: !spyre.buffer<32x2048x128xf16>, %o: !spyre.buffer<32x2048x128xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<32x2048x128xf16>, !spyre.buffer<32x2048x128xf16>, !spyre.buffer<32x2048x128xf16>) outs(%o : !spyre.buffer<32x2048x128xf16>) scale = 0.08838834764831843 causal
  spyre.return
}

// -----

// Decoding: one query row per head against 4096 keys, bound by the bus;
// key blocks long enough that the memory's latency per block is small
// beside it (16 keys a block would be 1.5x slower).
// CHECK-LABEL: spyre.kernel @decode
// CHECK: spyre.tile = array<i64: 1, 512, 1>
spyre.kernel @decode(%q: !spyre.buffer<32x1x128xf16>, %k: !spyre.buffer<32x4096x128xf16>,
                     %v: !spyre.buffer<32x4096x128xf16>, %o: !spyre.buffer<32x1x128xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<32x1x128xf16>, !spyre.buffer<32x4096x128xf16>, !spyre.buffer<32x4096x128xf16>) outs(%o : !spyre.buffer<32x1x128xf16>) scale = 0.08838834764831843
  spyre.return
}

// -----

// Grouped-query attention (16 query heads, 4 key/value heads): the query
// heads of a group are units of equal work that run side by side and load
// the same key/value blocks in the same cycles, which the card reads once
// for the group, so longer key blocks cost less bus time than in @gpt2
// (simulated: 73.1 us with blocks of 256 keys, 72.7 with 512, 72.2 with
// 384; the estimate's error is larger than their differences). Panels of
// a group are not folded (@folded): halved, they would balance the cores
// at no more traffic.
// CHECK-LABEL: spyre.kernel @grouped
// CHECK: spyre.tile = array<i64: 128, 256, 64>
spyre.kernel @grouped(%q: !spyre.buffer<16x512x128xf16>, %k: !spyre.buffer<4x512x128xf16>,
                      %v: !spyre.buffer<4x512x128xf16>, %o: !spyre.buffer<16x512x128xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<16x512x128xf16>, !spyre.buffer<4x512x128xf16>, !spyre.buffer<4x512x128xf16>) outs(%o : !spyre.buffer<16x512x128xf16>) scale = 0.08838834764831843 causal
  spyre.return
}

// -----

// A ViT-B batch of 8 (96 heads of 197 tokens): the panel may hold all of a
// head's rows although 197 is no multiple of the block. Panels ended at the
// last whole block (192 rows), and the 5 rows after them read the head's
// keys and values again: 141.3 us simulated; in one panel, 107.0.
// CHECK-LABEL: spyre.kernel @vit
// CHECK: spyre.tile = array<i64: 197, 197,
spyre.kernel @vit(%q: !spyre.buffer<96x197x64xf16>, %k: !spyre.buffer<96x197x64xf16>,
                  %v: !spyre.buffer<96x197x64xf16>, %o: !spyre.buffer<96x197x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<96x197x64xf16>, !spyre.buffer<96x197x64xf16>, !spyre.buffer<96x197x64xf16>) outs(%o : !spyre.buffer<96x197x64xf16>) scale = 0.125
  spyre.return
}

// -----

// Decoding with grouped heads: the 8 query heads of each of 4 key/value
// heads reach the kernel as 8 rows of one head (inductor/grouped_attention.py).
// Panels of 8 rows would use 4 cores; panels of one row use 32, and the 8
// cores of a head load its key/value blocks in the same cycles, which the
// card reads once (simulated: 12.5 us with 8-row panels of 128 keys, 9.2
// with one-row panels of 256 keys, whose last block holds 2 keys; 8.9 with
// blocks of 192, 192 and 130. Blocks of 384 would take 7.9 us, which the
// estimate does not rank first).
// CHECK-LABEL: spyre.kernel @grouped_decode
// CHECK: spyre.tile = array<i64: 1, 192, 1>
spyre.kernel @grouped_decode(%q: !spyre.buffer<4x8x64xf16>, %k: !spyre.buffer<4x514x64xf16>,
                             %v: !spyre.buffer<4x514x64xf16>, %o: !spyre.buffer<4x8x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<4x8x64xf16>, !spyre.buffer<4x514x64xf16>, !spyre.buffer<4x514x64xf16>) outs(%o : !spyre.buffer<4x8x64xf16>) scale = 0.125
  spyre.return
}

// -----

// 8 heads of 512 positions, causal, on 32 cores: as panels of 128 rows, the
// eight cores with a head's last rows see four times the keys of the eight
// with its first, and the rest wait for them (40.8 us simulated); panels of
// 64 rows balance the cores but read each key/value block twice as often
// (44.5). Folded panels of 128 rows (runs of 64 rows from both ends of a
// head) see as many keys each and read each block once per core: 33.8.
// CHECK-LABEL: spyre.kernel @folded
// CHECK: spyre.tile = array<i64: 128, 192, 32, 1>
spyre.kernel @folded(%q: !spyre.buffer<8x512x64xf16>, %k: !spyre.buffer<8x512x64xf16>,
                     %v: !spyre.buffer<8x512x64xf16>, %o: !spyre.buffer<8x512x64xf16>) {
  spyre.attention ins(%q, %k, %v : !spyre.buffer<8x512x64xf16>, !spyre.buffer<8x512x64xf16>, !spyre.buffer<8x512x64xf16>) outs(%o : !spyre.buffer<8x512x64xf16>) scale = 0.125 causal
  spyre.return
}
