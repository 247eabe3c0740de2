// RUN: spyre-opt %s -split-input-file -spyre-fuse-rows | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-fuse-rows="report-missed=true" -verify-diagnostics -o /dev/null

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A softmax: the row maxima and sums become temporaries of the group, their
// deallocs go. exp(x - max), which the sum and the normalization both
// compute, is computed once per row tile by a member of its own after the
// maxima, into an f32 tile that the two read (ShareExpressions.cpp).
// CHECK-LABEL: spyre.kernel @softmax
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: %[[E:.*]] = spyre.alloc() : !spyre.buffer<64000xf32>
// CHECK-NEXT: %[[MX:.*]] = spyre.alloc() : !spyre.buffer<64xf32>
// CHECK-NEXT: %[[SM:.*]] = spyre.alloc() : !spyre.buffer<64xf32>
// CHECK-NEXT: spyre.generic {{.*}}outs(%[[MX]]
// CHECK: spyre.generic {{.*}}ins(%arg0, %[[MX]] {{.*}}outs(%[[E]]
// CHECK: math.exp
// CHECK: spyre.generic {{.*}}ins(%[[E]] {{.*}}outs(%[[SM]]
// CHECK-NOT: math.exp
// CHECK: spyre.generic {{.*}}ins(%[[SM]], %[[E]] {{.*}}outs(%arg1
// CHECK-NOT: math.exp
// CHECK: spyre.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: spyre.return
spyre.kernel @softmax(%x: !spyre.buffer<64x1000xf32>, %y: !spyre.buffer<64x1000xf32>) {
  %mx = spyre.alloc() : !spyre.buffer<64xf32>
  %sm = spyre.alloc() : !spyre.buffer<64xf32>
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x : !spyre.buffer<64x1000xf32>) outs(%mx : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x, %mx : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>) outs(%sm : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32, %m: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    spyre.yield %e : f32
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mx, %sm : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>, !spyre.buffer<64xf32>)
      outs(%y : !spyre.buffer<64x1000xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    spyre.yield %q : f32
  }
  spyre.dealloc %mx : !spyre.buffer<64xf32>
  spyre.dealloc %sm : !spyre.buffer<64xf32>
  spyre.return
}

// -----

#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Statistics per position of a channel-first image ([channels, positions]),
// its normalization written channel-first, and a copy of that into a
// channel-last tensor, which Inductor iterates over its own output
// ([channels, positions]): the copy's loops turn to the group's [positions,
// channels], and on the group's row tiles (positions) the normalization and
// the copy store their channel-first tiles a run of the tile's positions per
// channel. One group: x is loaded once and the normalization's output read
// from LX (SegFormer's first kernel 33.9 -> 19.1 us with the rest of its
// LayerNorms).
// CHECK-LABEL: spyre.kernel @channel_first_rows
// CHECK-NEXT: spyre.fused {
// CHECK: spyre.generic domain [256, 64] {combiners = [#spyre.combiner<sum>]
// CHECK: spyre.generic domain [256, 64] {indexing_maps = [#[[T:map[0-9]*]], #[[R:map[0-9]*]], #[[T]]]
// CHECK: spyre.generic domain [256, 64] {indexing_maps = [#[[T]], #[[ID:map[0-9]*]]]
// CHECK-SAME: outs(%arg2
// CHECK: spyre.return
spyre.kernel @channel_first_rows(%x: !spyre.buffer<64x256xf16>, %y: !spyre.buffer<64x256xf16>,
                                 %z: !spyre.buffer<256x64xf16>) {
  %sum = spyre.alloc() : !spyre.buffer<256xf32>
  spyre.generic domain [256, 64] {indexing_maps = [#t, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<64x256xf16>) outs(%sum : !spyre.buffer<256xf32>) {
  ^bb0(%v: f16):
    %w = arith.extf %v : f16 to f32
    spyre.yield %w : f32
  }
  spyre.generic domain [256, 64] {indexing_maps = [#t, #row, #t],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %sum : !spyre.buffer<64x256xf16>, !spyre.buffer<256xf32>) outs(%y : !spyre.buffer<64x256xf16>) {
  ^bb0(%v: f16, %s: f32):
    %w = arith.extf %v : f16 to f32
    %d = arith.subf %w, %s : f32
    %h = arith.truncf %d : f32 to f16
    spyre.yield %h : f16
  }
  spyre.generic domain [64, 256] {indexing_maps = [#id, #t],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%y : !spyre.buffer<64x256xf16>) outs(%z : !spyre.buffer<256x64xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.dealloc %sum : !spyre.buffer<256xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Rows of two million f32 elements: no tile of whole rows fits LX.
// CHECK-LABEL: spyre.kernel @long_rows
// CHECK-NOT: spyre.fused
spyre.kernel @long_rows(%x: !spyre.buffer<4x2000000xf32>, %y: !spyre.buffer<4x2000000xf32>) {
  %s = spyre.alloc() : !spyre.buffer<4xf32>
  // expected-remark @+1 {{not fused with the next 1 generic(s): a tile of whole rows of every member does not fit the usable LX}}
  spyre.generic domain [4, 2000000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<4x2000000xf32>) outs(%s : !spyre.buffer<4xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [4, 2000000] {indexing_maps = [#id, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %s : !spyre.buffer<4x2000000xf32>, !spyre.buffer<4xf32>) outs(%y : !spyre.buffer<4x2000000xf32>) {
  ^bb0(%v: f32, %t: f32):
    %q = arith.divf %v, %t : f32
    spyre.yield %q : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Unrelated generics (no shared input, no temporary between them) stay apart.
// CHECK-LABEL: spyre.kernel @unrelated
// CHECK-NOT: spyre.fused
spyre.kernel @unrelated(%a: !spyre.buffer<8x64xf32>, %b: !spyre.buffer<8x64xf32>,
                        %c: !spyre.buffer<8x64xf32>, %d: !spyre.buffer<8x64xf32>) {
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<8x64xf32>) outs(%b : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%c : !spyre.buffer<8x64xf32>) outs(%d : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The second reads a kernel argument the first writes: in the group it reads
// it from LX, and the first still stores it.
// CHECK-LABEL: spyre.kernel @read_after_write
// CHECK-NEXT: spyre.fused
spyre.kernel @read_after_write(%a: !spyre.buffer<8x64xf32>, %b: !spyre.buffer<8x64xf32>,
                               %c: !spyre.buffer<8x64xf32>) {
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<8x64xf32>) outs(%b : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a, %b : !spyre.buffer<8x64xf32>, !spyre.buffer<8x64xf32>) outs(%c : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32, %w: f32):
    %s = arith.addf %v, %w : f32
    spyre.yield %s : f32
  }
  spyre.return
}

// -----

#x3 = affine_map<(d0, d1, d2) -> (d0 * 4096 + d1 * 64 + d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0 * 64 + d1)>
#col = affine_map<(d0, d1, d2) -> (d2)>
#x2 = affine_map<(d0, d1) -> (d0 * 64 + d1)>
#r2 = affine_map<(d0, d1) -> (d0)>

// Inductor's softmax of (heads, rows, cols) scores: the maxima over three
// loops (a column mask makes the heads and rows separate loops), the sums
// and quotients over (heads * rows, cols). The latter run over the group's
// three loops, their maps rewritten, and all three fuse.
// CHECK-LABEL: spyre.kernel @merged_rows
// CHECK-NEXT: spyre.fused {
// CHECK: spyre.generic domain [4, 64, 64]
// CHECK: spyre.generic domain [4, 64, 64] {combiners = [#spyre.combiner<sum>], indexing_maps = [#[[X3:map[0-9]*]], #[[R3:map[0-9]*]]],
// CHECK: spyre.generic domain [4, 64, 64] {indexing_maps = [#[[X3]], #[[R3]], #[[X3]]],
// CHECK: spyre.return
spyre.kernel @merged_rows(%x: !spyre.buffer<16384xf32>, %mask: !spyre.buffer<64xf32>,
                          %y: !spyre.buffer<16384xf32>) {
  %mx = spyre.alloc() : !spyre.buffer<256xf32>
  %sm = spyre.alloc() : !spyre.buffer<256xf32>
  spyre.generic domain [4, 64, 64] {indexing_maps = [#x3, #col, #r3],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x, %mask : !spyre.buffer<16384xf32>, !spyre.buffer<64xf32>)
      outs(%mx : !spyre.buffer<256xf32>) {
  ^bb0(%v: f32, %m: f32):
    %a = arith.addf %v, %m : f32
    spyre.yield %a : f32
  }
  spyre.generic domain [256, 64] {indexing_maps = [#x2, #r2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<16384xf32>) outs(%sm : !spyre.buffer<256xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [256, 64] {indexing_maps = [#x2, #r2, #x2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %sm : !spyre.buffer<16384xf32>, !spyre.buffer<256xf32>)
      outs(%y : !spyre.buffer<16384xf32>) {
  ^bb0(%v: f32, %s: f32):
    %q = arith.divf %v, %s : f32
    spyre.yield %q : f32
  }
  spyre.dealloc %mx : !spyre.buffer<256xf32>
  spyre.dealloc %sm : !spyre.buffer<256xf32>
  spyre.return
}

// -----

#x3 = affine_map<(d0, d1, d2) -> (d0 * 4096 + d1 * 64 + d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0 * 64 + d1)>
#x2 = affine_map<(d0, d1) -> (d0 * 64 + d1)>
#r2 = affine_map<(d0, d1) -> (d0)>

// The second generic's first loop (128) is not the group's leading loops
// merged (4 x 64): it keeps its loops and runs apart.
// CHECK-LABEL: spyre.kernel @other_rows
// CHECK-NOT: spyre.fused
// CHECK: spyre.generic domain [128, 64]
spyre.kernel @other_rows(%x: !spyre.buffer<16384xf32>, %y: !spyre.buffer<8192xf32>) {
  %mx = spyre.alloc() : !spyre.buffer<256xf32>
  spyre.generic domain [4, 64, 64] {indexing_maps = [#x3, #r3],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>,
                        #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x : !spyre.buffer<16384xf32>) outs(%mx : !spyre.buffer<256xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [128, 64] {indexing_maps = [#x2, #r2, #x2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mx : !spyre.buffer<16384xf32>, !spyre.buffer<256xf32>)
      outs(%y : !spyre.buffer<8192xf32>) {
  ^bb0(%v: f32, %s: f32):
    %q = arith.divf %v, %s : f32
    spyre.yield %q : f32
  }
  spyre.dealloc %mx : !spyre.buffer<256xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// One row of 32000 scores (a sampling step): its noise, forty vector
// operations a score in the real thing, then their maximum. As a group its
// one row runs on one core; alone, the elementwise generic runs on all of
// them, which is worth its temporary's round trip: left apart.
// CHECK-LABEL: spyre.kernel @one_long_row
// CHECK-NOT: spyre.fused
// CHECK: spyre.return
spyre.kernel @one_long_row(%x: !spyre.buffer<1x32000xf32>, %u: !spyre.buffer<1x32000xf32>,
                           %y: !spyre.buffer<1xf32>) {
  %noisy = spyre.alloc() : !spyre.buffer<1x32000xf32>
  // expected-remark @+1 {{not fused with the next 1 generic(s): its rows leave cores idle that its members alone would use}}
  spyre.generic domain [1, 32000] {indexing_maps = [#id, #id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %u : !spyre.buffer<1x32000xf32>, !spyre.buffer<1x32000xf32>)
      outs(%noisy : !spyre.buffer<1x32000xf32>) {
  ^bb0(%v: f32, %r: f32):
    %l1 = math.log %r : f32
    %n1 = arith.negf %l1 : f32
    %l2 = math.log %n1 : f32
    %g = arith.negf %l2 : f32
    %a = arith.addf %v, %g : f32
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %a : f32
    %d = arith.mulf %c, %v : f32
    spyre.yield %d : f32
  }
  spyre.generic domain [1, 32000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%noisy : !spyre.buffer<1x32000xf32>) outs(%y : !spyre.buffer<1xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.dealloc %noisy : !spyre.buffer<1x32000xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// One short row (a decode step's RMSNorm over 2048): apart, the second op's
// transfers and wait cost more than the cores the group leaves idle save.
// CHECK-LABEL: spyre.kernel @one_short_row
// CHECK: spyre.fused
spyre.kernel @one_short_row(%x: !spyre.buffer<1x2048xf32>, %y: !spyre.buffer<1xf32>) {
  %scaled = spyre.alloc() : !spyre.buffer<1x2048xf32>
  spyre.generic domain [1, 2048] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<1x2048xf32>) outs(%scaled : !spyre.buffer<1x2048xf32>) {
  ^bb0(%v: f32):
    %a = arith.mulf %v, %v : f32
    %b = arith.addf %a, %v : f32
    %c = arith.mulf %b, %v : f32
    %d = arith.addf %c, %a : f32
    %e = arith.mulf %d, %v : f32
    %f = arith.addf %e, %b : f32
    %g = arith.mulf %f, %v : f32
    %h = arith.addf %g, %c : f32
    spyre.yield %h : f32
  }
  spyre.generic domain [1, 2048] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%scaled : !spyre.buffer<1x2048xf32>) outs(%y : !spyre.buffer<1xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.dealloc %scaled : !spyre.buffer<1x2048xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0, d1) -> (d0 * 16 + d1)>

// A copy of another tensor between the maxima and the normalization (Bloom's
// value heads between its softmax's exponentials and their sum) shares no
// buffer with the softmax: the softmax is grouped, its maxima in LX, and the
// copy runs after the group.
// CHECK-LABEL: spyre.kernel @copy_between
// CHECK-NEXT: spyre.fused {
// CHECK: spyre.generic {{.*}}outs(%[[MX:.*]] : !spyre.buffer<64xf32>)
// CHECK: spyre.generic {{.*}}ins(%arg0, %[[MX]] {{.*}}outs(%arg1
// CHECK: spyre.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: spyre.generic {{.*}}ins(%arg2 {{.*}}outs(%arg3
// CHECK-NOT: spyre.dealloc
// CHECK: spyre.return
spyre.kernel @copy_between(%x: !spyre.buffer<64x1000xf32>, %y: !spyre.buffer<64x1000xf32>,
                           %v: !spyre.buffer<1024xf16>, %w: !spyre.buffer<1024xf16>) {
  %mx = spyre.alloc() : !spyre.buffer<64xf32>
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x : !spyre.buffer<64x1000xf32>) outs(%mx : !spyre.buffer<64xf32>) {
  ^bb0(%a: f32):
    spyre.yield %a : f32
  }
  spyre.generic domain [64, 16] {indexing_maps = [#v, #v],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%v : !spyre.buffer<1024xf16>) outs(%w : !spyre.buffer<1024xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mx : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64x1000xf32>) {
  ^bb0(%a: f32, %m: f32):
    %d = arith.subf %a, %m : f32
    spyre.yield %d : f32
  }
  spyre.dealloc %mx : !spyre.buffer<64xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The op between reads what the first wrote, on other rows: the first may
// not run after it, so nothing is passed over and nothing groups.
// CHECK-LABEL: spyre.kernel @reader_between
// CHECK-NOT: spyre.fused
// CHECK: spyre.return
spyre.kernel @reader_between(%x: !spyre.buffer<64x1000xf32>, %y: !spyre.buffer<64x1000xf32>,
                             %z: !spyre.buffer<32x2xf32>) {
  %mx = spyre.alloc() : !spyre.buffer<64xf32>
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x : !spyre.buffer<64x1000xf32>) outs(%mx : !spyre.buffer<64xf32>) {
  ^bb0(%a: f32):
    spyre.yield %a : f32
  }
  spyre.generic domain [32, 2] {indexing_maps = [affine_map<(d0, d1) -> (d0 * 2 + d1)>, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%mx : !spyre.buffer<64xf32>) outs(%z : !spyre.buffer<32x2xf32>) {
  ^bb0(%a: f32):
    spyre.yield %a : f32
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mx : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64x1000xf32>) {
  ^bb0(%a: f32, %m: f32):
    %d = arith.subf %a, %m : f32
    spyre.yield %d : f32
  }
  spyre.dealloc %mx : !spyre.buffer<64xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A generic that nothing joins, then two that group: passed over while the
// first looked for a partner, they are scanned again and grouped.
// CHECK-LABEL: spyre.kernel @group_after_lone
// CHECK-NEXT: spyre.generic {{.*}}ins(%arg0 {{.*}}outs(%arg1
// CHECK: spyre.fused {
// CHECK: combiners = [#spyre.combiner<max>]
// CHECK: ins(%arg2, %{{.*}}outs(%arg3
// CHECK: spyre.return
spyre.kernel @group_after_lone(%a: !spyre.buffer<8x64xf32>, %b: !spyre.buffer<8x64xf32>,
                               %x: !spyre.buffer<64x1000xf32>, %y: !spyre.buffer<64x1000xf32>) {
  %mx = spyre.alloc() : !spyre.buffer<64xf32>
  spyre.generic domain [8, 64] {indexing_maps = [#id, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a : !spyre.buffer<8x64xf32>) outs(%b : !spyre.buffer<8x64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x : !spyre.buffer<64x1000xf32>) outs(%mx : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mx : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64x1000xf32>) {
  ^bb0(%v: f32, %m: f32):
    %d = arith.subf %v, %m : f32
    spyre.yield %d : f32
  }
  spyre.dealloc %mx : !spyre.buffer<64xf32>
  spyre.return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#v = affine_map<(d0, d1) -> (d0 * 16 + d1)>
#gaps = affine_map<(d0, d1) -> (d0 * 64 + d1)>

// The copy between writes rows of 16 elements 64 apart (a head of Bloom's
// values into its place): it runs best alone, and is passed over all the same.
// CHECK-LABEL: spyre.kernel @copy_with_gaps_between
// CHECK-NEXT: spyre.fused {
// CHECK: combiners = [#spyre.combiner<max>]
// CHECK: ins(%arg0, %{{.*}}outs(%arg1
// CHECK: spyre.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: spyre.generic {{.*}}ins(%arg2 {{.*}}outs(%arg3
spyre.kernel @copy_with_gaps_between(%x: !spyre.buffer<64x1000xf32>, %y: !spyre.buffer<64x1000xf32>,
                                     %v: !spyre.buffer<1024xf16>, %w: !spyre.buffer<4096xf16>) {
  %mx = spyre.alloc() : !spyre.buffer<64xf32>
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<max>]}
      ins(%x : !spyre.buffer<64x1000xf32>) outs(%mx : !spyre.buffer<64xf32>) {
  ^bb0(%a: f32):
    spyre.yield %a : f32
  }
  spyre.generic domain [64, 16] {indexing_maps = [#v, #gaps],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%v : !spyre.buffer<1024xf16>) outs(%w : !spyre.buffer<4096xf16>) {
  ^bb0(%a: f16):
    spyre.yield %a : f16
  }
  spyre.generic domain [64, 1000] {indexing_maps = [#id, #row, #id],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %mx : !spyre.buffer<64x1000xf32>, !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64x1000xf32>) {
  ^bb0(%a: f32, %m: f32):
    %d = arith.subf %a, %m : f32
    spyre.yield %d : f32
  }
  spyre.dealloc %mx : !spyre.buffer<64xf32>
  spyre.return
}

// -----

#flat = affine_map<(d0) -> (d0)>
#x2 = affine_map<(d0, d1) -> (d0 * 64 + d1)>
#r2 = affine_map<(d0, d1) -> (d0)>
#c2 = affine_map<(d0, d1) -> (d1)>

// A residual sum Inductor iterates over its linear index, then an RMSNorm
// of it (T5's layer): the sum takes the norm's loops, its rows row-major
// as the norm reads them, and the three group; the sum's temporary stays
// in LX (its dealloc goes).
// CHECK-LABEL: spyre.kernel @flat_producer
// CHECK-NEXT: spyre.fused {
// CHECK-NEXT: spyre.alloc() : !spyre.buffer<8192xf16>
// CHECK-NEXT: spyre.alloc() : !spyre.buffer<128xf32>
// CHECK-NEXT: spyre.generic domain [128, 64] {indexing_maps = [#[[X:map[0-9]*]], #[[X]], #[[X]]], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
// CHECK: spyre.generic domain [128, 64] {combiners = [#spyre.combiner<sum>]
// CHECK: spyre.generic domain [128, 64]
// CHECK-NOT: spyre.dealloc
// CHECK: spyre.return
spyre.kernel @flat_producer(%a: !spyre.buffer<8192xf16>, %b: !spyre.buffer<8192xf16>,
                            %g: !spyre.buffer<64xf16>, %y: !spyre.buffer<8192xf16>) {
  %h = spyre.alloc() : !spyre.buffer<8192xf16>
  %ss = spyre.alloc() : !spyre.buffer<128xf32>
  spyre.generic domain [8192] {indexing_maps = [#flat, #flat, #flat],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%a, %b : !spyre.buffer<8192xf16>, !spyre.buffer<8192xf16>)
      outs(%h : !spyre.buffer<8192xf16>) {
  ^bb0(%u: f16, %v: f16):
    %s = arith.addf %u, %v : f16
    spyre.yield %s : f16
  }
  spyre.generic domain [128, 64] {indexing_maps = [#x2, #r2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%h : !spyre.buffer<8192xf16>) outs(%ss : !spyre.buffer<128xf32>) {
  ^bb0(%v: f16):
    %e = arith.extf %v : f16 to f32
    %q = arith.mulf %e, %e : f32
    spyre.yield %q : f32
  }
  spyre.generic domain [128, 64] {indexing_maps = [#c2, #x2, #r2, #x2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%g, %h, %ss : !spyre.buffer<64xf16>, !spyre.buffer<8192xf16>, !spyre.buffer<128xf32>)
      outs(%y : !spyre.buffer<8192xf16>) {
  ^bb0(%w: f16, %v: f16, %s: f32):
    %e = arith.extf %v : f16 to f32
    %r = math.rsqrt %s : f32
    %n = arith.mulf %e, %r : f32
    %t = arith.truncf %n : f32 to f16
    %o = arith.mulf %w, %t : f16
    spyre.yield %o : f16
  }
  spyre.dealloc %h : !spyre.buffer<8192xf16>
  spyre.dealloc %ss : !spyre.buffer<128xf32>
  spyre.return
}

// -----

#flat = affine_map<(d0) -> (d0)>
#t2 = affine_map<(d0, d1) -> (d1 * 128 + d0)>
#x2 = affine_map<(d0, d1) -> (d0 * 64 + d1)>
#r2 = affine_map<(d0, d1) -> (d0)>

// The reader takes the flat sum's elements in another order (columns of a
// 64 x 128 buffer as its rows): the sum keeps its one loop and runs apart.
// CHECK-LABEL: spyre.kernel @flat_producer_read_transposed
// CHECK-NEXT: spyre.alloc
// CHECK-NEXT: spyre.generic domain [8192]
spyre.kernel @flat_producer_read_transposed(%a: !spyre.buffer<8192xf16>,
                                            %b: !spyre.buffer<8192xf16>,
                                            %y: !spyre.buffer<8192xf16>) {
  %h = spyre.alloc() : !spyre.buffer<8192xf16>
  %ss = spyre.alloc() : !spyre.buffer<128xf32>
  spyre.generic domain [8192] {indexing_maps = [#flat, #flat, #flat],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%a, %b : !spyre.buffer<8192xf16>, !spyre.buffer<8192xf16>)
      outs(%h : !spyre.buffer<8192xf16>) {
  ^bb0(%u: f16, %v: f16):
    %s = arith.addf %u, %v : f16
    spyre.yield %s : f16
  }
  spyre.generic domain [128, 64] {indexing_maps = [#t2, #r2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%h : !spyre.buffer<8192xf16>) outs(%ss : !spyre.buffer<128xf32>) {
  ^bb0(%v: f16):
    %e = arith.extf %v : f16 to f32
    spyre.yield %e : f32
  }
  spyre.generic domain [128, 64] {indexing_maps = [#x2, #r2, #x2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%a, %ss : !spyre.buffer<8192xf16>, !spyre.buffer<128xf32>)
      outs(%y : !spyre.buffer<8192xf16>) {
  ^bb0(%v: f16, %s: f32):
    %e = arith.extf %v : f16 to f32
    %n = arith.mulf %e, %s : f32
    %t = arith.truncf %n : f32 to f16
    spyre.yield %t : f16
  }
  spyre.dealloc %h : !spyre.buffer<8192xf16>
  spyre.dealloc %ss : !spyre.buffer<128xf32>
  spyre.return
}

// -----

#flat = affine_map<(d0) -> (d0)>
#x2 = affine_map<(d0, d1) -> (d0 * 2000000 + d1)>
#r2 = affine_map<(d0, d1) -> (d0)>

// Rows too long for LX: no group forms, and the flat sum gets its one loop
// back.
// CHECK-LABEL: spyre.kernel @flat_producer_long_rows
// CHECK-NEXT: spyre.alloc
// CHECK-NEXT: spyre.alloc
// CHECK-NEXT: spyre.generic domain [8000000]
// CHECK-NOT: spyre.fused
spyre.kernel @flat_producer_long_rows(%a: !spyre.buffer<8000000xf32>,
                                      %b: !spyre.buffer<8000000xf32>,
                                      %y: !spyre.buffer<4xf32>) {
  %h = spyre.alloc() : !spyre.buffer<8000000xf32>
  %ss = spyre.alloc() : !spyre.buffer<4xf32>
  // expected-remark @+1 {{not fused with the next 1 generic(s): a tile of whole rows of every member does not fit the usable LX}}
  spyre.generic domain [8000000] {indexing_maps = [#flat, #flat, #flat],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%a, %b : !spyre.buffer<8000000xf32>, !spyre.buffer<8000000xf32>)
      outs(%h : !spyre.buffer<8000000xf32>) {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    spyre.yield %s : f32
  }
  spyre.generic domain [4, 2000000] {indexing_maps = [#x2, #r2],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%h : !spyre.buffer<8000000xf32>) outs(%ss : !spyre.buffer<4xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.generic domain [4] {indexing_maps = [#flat, #flat],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%ss : !spyre.buffer<4xf32>) outs(%y : !spyre.buffer<4xf32>) {
  ^bb0(%v: f32):
    %q = arith.mulf %v, %v : f32
    spyre.yield %q : f32
  }
  spyre.dealloc %h : !spyre.buffer<8000000xf32>
  spyre.dealloc %ss : !spyre.buffer<4xf32>
  spyre.return
}
