// RUN: spyre-opt %s -split-input-file -spyre-divide-work -spyre-tile | FileCheck %s
// RUN: spyre-opt %s -split-input-file --spyre-compile="stop-after=lower" | FileCheck %s --check-prefix=LOWER

// Rows shorter than a stick continue along another loop (its plane loop):
// a tile spans whole rows and planes enough to fill a stick, so each device
// row moves as one 128-byte run instead of two padded halves. A rotary
// embedding (positions x heads x halves x 32, f16): the halves are the
// planes; the rotated input (-32 along the halves) reads the same run, in
// the other order, and shares its load.
// CHECK-LABEL: spyre.kernel @rotary
// CHECK: spyre.generic domain [64, 2, 2, 32] {{.*}}spyre.tile = array<i64: 1, 2, 2, 32>
// LOWER-LABEL: spyre.hw.program @rotary
// LOWER: spyre.hw.core 0 {
// Both halves of both heads of a position are one 256-byte run of x (the
// rows of the tile follow each other too); cos is one row (all heads read it).
// LOWER-NEXT: spyre.hw.kernel 1
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 256 x [1, 1, 1]
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[COS:[0-9]+]], {{.*}}>, #spyre.ref<@arg1, dl16> row 128 x [1, 1, 1]
// The next position's (double buffered); the rotated x loads nothing more.
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = 256>, #spyre.ref<@arg0, dl16, offset = 256> row 256 x [1, 1, 1]
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[COS1:[0-9]+]], {{.*}}>, #spyre.ref<@arg1, dl16, offset = 128> row 128 x [1, 1, 1]
// First half: x * cos + the second half of x (64 bytes on).
// LOWER-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, dl16, offset = [[T:[0-9]+]], {{.*}}>, #spyre.ref<lx, dl16, strides = [128, 2, 0]>, #spyre.ref<lx, dl16, offset = [[COS]], strides = [0, 2, 0]> [2 x 32]
// LOWER-NEXT: spyre.hw.binary "add" #spyre.ref<lx, dl16, offset = [[Y:[0-9]+]], {{.*}}>, #spyre.ref<lx, dl16, offset = [[T]], {{.*}}>, #spyre.ref<lx, dl16, offset = 64, strides = [128, 2, 0]> [2 x 32]
// Second half: x's second half * cos's + the first half of x.
// LOWER-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, dl16, offset = [[T]], {{.*}}>, #spyre.ref<lx, dl16, offset = 64, strides = [128, 2, 0]>
// LOWER-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = [[T]], {{.*}}>, #spyre.ref<lx, dl16, strides = [128, 2, 0]> [2 x 32]
// LOWER-NEXT: spyre.hw.dma #spyre.ref<@arg2, dl16>, #spyre.ref<lx, dl16, offset = [[Y]]> row 256 x [1, 1, 1]
#x = affine_map<(d0, d1, d2, d3) -> (d0 * 128 + d1 * 64 + d2 * 32 + d3)>
#cos = affine_map<(d0, d1, d2, d3) -> (d0 * 64 + d2 * 32 + d3)>
#rot = affine_map<(d0, d1, d2, d3) -> (d0 * 128 + d1 * 64 - d2 * 32 + d3 + 32)>
spyre.kernel @rotary(%x: !spyre.buffer<8192xf16>, %c: !spyre.buffer<4096xf16>,
                     %y: !spyre.buffer<8192xf16>) {
  spyre.generic domain [64, 2, 2, 32] {indexing_maps = [#x, #cos, #rot, #x],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %c, %x : !spyre.buffer<8192xf16>, !spyre.buffer<4096xf16>, !spyre.buffer<8192xf16>)
      outs(%y : !spyre.buffer<8192xf16>) {
  ^bb0(%a: f16, %b: f16, %r: f16):
    %0 = arith.mulf %a, %b : f16
    %1 = arith.addf %0, %r : f16
    spyre.yield %1 : f16
  }
  spyre.return
}

// -----

// Heads of 128 (Llama 2, Mistral): each half is a whole stick, so straight
// rows need no planes, but the rotated input reads the halves the other way
// round: a tile of both halves reads x once for both inputs.
// CHECK-LABEL: spyre.kernel @rotary_wide
// CHECK: spyre.generic domain [64, 4, 2, 64] {{.*}}spyre.tile = array<i64: 1, 4, 2, 64>
// LOWER-LABEL: spyre.hw.program @rotary_wide
// LOWER: spyre.hw.core 0 {
// LOWER-NEXT: spyre.hw.kernel 1
// A position's four heads are one 1024-byte run of x, its cos one of 256
// bytes; then the next position's (double buffered). The rotated x loads
// nothing: its view is 128 bytes into x's, then at its start.
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 1024 x [1, 1, 1]
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[COS:[0-9]+]], {{.*}}>, #spyre.ref<@arg1, dl16> row 256 x [1, 1, 1]
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = 1024>, #spyre.ref<@arg0, dl16, offset = 1024> row 1024 x [1, 1, 1]
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, {{.*}}>, #spyre.ref<@arg1, dl16, offset = 256> row 256 x [1, 1, 1]
// LOWER-NEXT: spyre.hw.binary "mul" #spyre.ref<lx, dl16, offset = [[T:[0-9]+]], {{.*}}>, #spyre.ref<lx, dl16, strides = [256, 2, 0]>, #spyre.ref<lx, dl16, offset = [[COS]], strides = [0, 2, 0]> [4 x 64]
// LOWER-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = [[T]], {{.*}}>, #spyre.ref<lx, dl16, offset = 128, strides = [256, 2, 0]> [4 x 64]
#xw = affine_map<(d0, d1, d2, d3) -> (d0 * 512 + d1 * 128 + d2 * 64 + d3)>
#cosw = affine_map<(d0, d1, d2, d3) -> (d0 * 128 + d2 * 64 + d3)>
#rotw = affine_map<(d0, d1, d2, d3) -> (d0 * 512 + d1 * 128 - d2 * 64 + d3 + 64)>
spyre.kernel @rotary_wide(%x: !spyre.buffer<32768xf16>, %c: !spyre.buffer<8192xf16>,
                          %y: !spyre.buffer<32768xf16>) {
  spyre.generic domain [64, 4, 2, 64] {indexing_maps = [#xw, #cosw, #rotw, #xw],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %c, %x : !spyre.buffer<32768xf16>, !spyre.buffer<8192xf16>, !spyre.buffer<32768xf16>)
      outs(%y : !spyre.buffer<32768xf16>) {
  ^bb0(%a: f16, %b: f16, %r: f16):
    %0 = arith.mulf %a, %b : f16
    %1 = arith.addf %0, %r : f16
    spyre.yield %1 : f16
  }
  spyre.return
}

// -----

// Nearest upsampling by 2 (channels x rows x row repeat x cols x col
// repeat): the output's rows are the 2-wide col repeat, continued by the
// input's cols; 32 of them fill a stick.
// CHECK-LABEL: spyre.kernel @upsample
// CHECK: spyre.generic domain [4, 64, 2, 64, 2] {{.*}}spyre.tile = array<i64: 1, 32, 1, 32, 2>
#out = affine_map<(c, h, r, w, s) -> (c * 16384 + h * 256 + r * 128 + w * 2 + s)>
#in = affine_map<(c, h, r, w, s) -> (c * 4096 + h * 64 + w)>
spyre.kernel @upsample(%x: !spyre.buffer<16384xf16>, %y: !spyre.buffer<65536xf16>) {
  spyre.generic domain [4, 64, 2, 64, 2] {indexing_maps = [#in, #out],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<16384xf16>) outs(%y : !spyre.buffer<65536xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.return
}

// -----

// No plane loop: rows of a whole stick (64 f16), rows that a reduction
// reads, and a two-dimensional generic (its rows continue each other).
// CHECK-LABEL: spyre.kernel @no_planes
// CHECK: spyre.generic domain [64, 2, 2, 64] {{.*}}spyre.tile = array<i64: {{[0-9]+}}, 1, 1, 64>
// CHECK: spyre.generic domain [64, 2, 32] {{.*}}spyre.tile = array<i64: 1, 2, 32>
// CHECK: spyre.generic domain [256, 32] {{.*}}spyre.tile = array<i64: {{[0-9]+}}, 32>
#wide = affine_map<(d0, d1, d2, d3) -> (d0 * 256 + d1 * 128 + d2 * 64 + d3)>
#rows = affine_map<(d0, d1, d2) -> (d0 * 64 + d1 * 32 + d2)>
#sums = affine_map<(d0, d1, d2) -> (d0 * 2 + d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @no_planes(%a: !spyre.buffer<16384xf16>, %b: !spyre.buffer<16384xf16>,
                        %c: !spyre.buffer<4096xf16>, %d: !spyre.buffer<128xf32>,
                        %e: !spyre.buffer<256x32xf16>, %f: !spyre.buffer<256x32xf16>) {
  spyre.generic domain [64, 2, 2, 64] {indexing_maps = [#wide, #wide],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<16384xf16>) outs(%b : !spyre.buffer<16384xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.generic domain [64, 2, 32] {indexing_maps = [#rows, #sums],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%c : !spyre.buffer<4096xf16>) outs(%d : !spyre.buffer<128xf32>) {
  ^bb0(%v: f16):
    %0 = arith.extf %v : f16 to f32
    spyre.yield %0 : f32
  }
  spyre.generic domain [256, 32] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%e : !spyre.buffer<256x32xf16>) outs(%f : !spyre.buffer<256x32xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

// Whole rows x cols of a few sticks continue along another loop: Swin's
// windows (8 x 7 x 8 x 7 positions of 64 channels) merged back into the
// image, plus a residual. Tiles of one 7 x 64 block (896 bytes) would make
// every core wait out the memory's latency on each operand per block; the
// windows' column loop (d2, continuing the image past a window's row) is
// the plane loop, all 8 windows of an image row in one tile. The residual
// (channel-first: its rows, the window's positions, run along the device)
// moves one run of all planes' rows (8 x 7 positions) per channel.
// CHECK-LABEL: spyre.kernel @window_merge
// CHECK: spyre.generic domain [8, 7, 8, 7, 64] {{.*}}spyre.tile = array<i64: 1, 1, 8, 7, 64>
// LOWER-LABEL: spyre.hw.program @window_merge
// LOWER: spyre.hw.core 0 {
// LOWER-NEXT: spyre.hw.kernel 1
// The windows: a 896-byte block per plane, 3136 elements apart.
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [0, 896, 0]>, #spyre.ref<@arg0, dl16, strides = [0, 6272, 0]> row 896 x [1, 8, 1]
// The residual: 56 positions (112 bytes) per channel.
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [112, 0, 0]>, #spyre.ref<@arg1, dl16, strides = [6272, 0, 0]> row 112 x [64, 1, 1]
// Each plane's view of it: 7 positions (14 bytes) further.
// LOWER-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = [[R:[0-9]+]], strides = [2, 112, 0]> [7 x 64]
// LOWER-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [2, 112, 0]> [7 x 64]
// The image: 8 blocks that follow each other.
// LOWER: spyre.hw.dma #spyre.ref<@arg2, dl16, strides = [0, 896, 0]>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [0, 896, 0]> row 896 x [1, 8, 1]
#win = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 25088 + d1 * 448 + d2 * 3136 + d3 * 64 + d4)>
#chw = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 392 + d1 * 56 + d2 * 7 + d3 + d4 * 3136)>
#img = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 3584 + d1 * 512 + d2 * 448 + d3 * 64 + d4)>
spyre.kernel @window_merge(%w: !spyre.buffer<200704xf16>, %r: !spyre.buffer<200704xf16>,
                           %y: !spyre.buffer<200704xf16>) {
  spyre.generic domain [8, 7, 8, 7, 64] {indexing_maps = [#win, #chw, #img],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>]}
      ins(%w, %r : !spyre.buffer<200704xf16>, !spyre.buffer<200704xf16>)
      outs(%y : !spyre.buffer<200704xf16>) {
  ^bb0(%a: f16, %b: f16):
    %s = arith.addf %a, %b : f16
    spyre.yield %s : f16
  }
  spyre.return
}

// -----

// The other way: a channel-first image (a convolution's output) cut into
// windows, window-major. The loop that continues the output's 7 x 64 block
// (d1, a window's next row) would read 7 positions (14 bytes, a stick) per
// channel and row; the windows' column loop (d2) continues the input's
// rows, and its tiles move the fewest sticks: 56 positions per channel and
// row, the windows' blocks 896 bytes each.
// CHECK-LABEL: spyre.kernel @window_partition
// CHECK: spyre.generic domain [8, 7, 8, 7, 64] {{.*}}spyre.tile = array<i64: 1, 1, 8, 7, 64>
// LOWER-LABEL: spyre.hw.program @window_partition
// LOWER: spyre.hw.core 0 {
// LOWER-NEXT: spyre.hw.kernel 1
// LOWER-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [112, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [6272, 0, 0]> row 112 x [64, 1, 1]
// LOWER: spyre.hw.dma #spyre.ref<@arg1, dl16, strides = [0, 6272, 0]>, #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [0, 896, 0]> row 896 x [1, 8, 1]
#chw = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 392 + d1 * 56 + d2 * 7 + d3 + d4 * 3136)>
#win = affine_map<(d0, d1, d2, d3, d4) -> (d0 * 25088 + d1 * 448 + d2 * 3136 + d3 * 64 + d4)>
spyre.kernel @window_partition(%x: !spyre.buffer<200704xf16>, %y: !spyre.buffer<200704xf16>) {
  spyre.generic domain [8, 7, 8, 7, 64] {indexing_maps = [#chw, #win],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<200704xf16>) outs(%y : !spyre.buffer<200704xf16>) {
  ^bb0(%a: f16):
    %h = arith.constant 0.5 : f16
    %s = arith.mulf %a, %h : f16
    spyre.yield %s : f16
  }
  spyre.return
}
