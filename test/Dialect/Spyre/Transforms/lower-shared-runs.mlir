// RUN: spyre-opt %s --spyre-compile="stop-after=lower" | FileCheck %s

// Inputs reading one buffer's rows shifted by a few elements (a 2 x 2
// pooling window's taps along a row) share one load: the first by base
// loads its runs one element longer and the other reads them one element
// (2 bytes) on. The window's second row starts where the first one's run
// ends (128 elements on, more than a stick): the first row's runs extend
// over it too, and the tile's runs continue one another, one load of
// 1024 bytes instead of four of 256.
// CHECK-LABEL: spyre.hw.program @avg_pool
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16>, #spyre.ref<@arg0, dl16> row 1024 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = 2, strides = [512, 4, 0]>, #spyre.ref<lx, dl16, strides = [512, 4, 0]> [2 x 64]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = 258, strides = [512, 4, 0]>, #spyre.ref<lx, dl16, offset = 256, strides = [512, 4, 0]> [2 x 64]
// CHECK-NOT: spyre.hw.dma #spyre.ref<lx
// CHECK: spyre.hw.core 1 {
#t0 = affine_map<(d0, d1) -> (d0 * 256 + d1 * 2)>
#t1 = affine_map<(d0, d1) -> (d0 * 256 + d1 * 2 + 1)>
#t2 = affine_map<(d0, d1) -> (d0 * 256 + d1 * 2 + 128)>
#t3 = affine_map<(d0, d1) -> (d0 * 256 + d1 * 2 + 129)>
#o = affine_map<(d0, d1) -> (d0 * 64 + d1)>
spyre.kernel @avg_pool(%x: !spyre.buffer<16384xf16>, %y: !spyre.buffer<4096xf16>) {
  spyre.generic domain [64, 64] {indexing_maps = [#t1, #t0, #t3, #t2, #o],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %x, %x, %x : !spyre.buffer<16384xf16>, !spyre.buffer<16384xf16>, !spyre.buffer<16384xf16>, !spyre.buffer<16384xf16>)
      outs(%y : !spyre.buffer<4096xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16, %d: f16):
    %0 = arith.addf %a, %b : f16
    %1 = arith.addf %c, %d : f16
    %2 = arith.addf %0, %1 : f16
    spyre.yield %2 : f16
  }
  spyre.return
}

// The second row's taps start more than a stick past the first row's run
// (256 elements on, the first's runs 128 long): extended over the gap, each
// run would move a stick of elements nobody reads, so each row loads its
// own runs.
// CHECK-LABEL: spyre.hw.program @rows_apart
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [256, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [1024, 0, 0]> row 256 x [2, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = {{[0-9]+}}, strides = [256, 0, 0]>, #spyre.ref<@arg0, dl16, offset = 768, strides = [1024, 0, 0]> row 256 x [2, 1, 1]
#u0 = affine_map<(d0, d1) -> (d0 * 512 + d1 * 2)>
#u1 = affine_map<(d0, d1) -> (d0 * 512 + d1 * 2 + 1)>
#u2 = affine_map<(d0, d1) -> (d0 * 512 + d1 * 2 + 384)>
#u3 = affine_map<(d0, d1) -> (d0 * 512 + d1 * 2 + 385)>
spyre.kernel @rows_apart(%x: !spyre.buffer<32768xf16>, %y: !spyre.buffer<4096xf16>) {
  spyre.generic domain [64, 64] {indexing_maps = [#u1, #u0, #u3, #u2, #o],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %x, %x, %x : !spyre.buffer<32768xf16>, !spyre.buffer<32768xf16>, !spyre.buffer<32768xf16>, !spyre.buffer<32768xf16>)
      outs(%y : !spyre.buffer<4096xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16, %d: f16):
    %0 = arith.addf %a, %b : f16
    %1 = arith.addf %c, %d : f16
    %2 = arith.addf %0, %1 : f16
    spyre.yield %2 : f16
  }
  spyre.return
}

// A 3 x 3 / 2 max pool over 64 channels of 32 x 32 whose output rows (15
// elements, 30 bytes) are the plane loop: each plane's taps share one run
// (its three input rows), and that run reaches into the next plane's (the
// next output row starts two input rows on). All planes of a channel move as
// one run, 29 + 2 + 64 + 4 x 64 = 351 elements, and plane p's views begin
// 128p bytes into it: one load a tile, not one per plane.
// CHECK-LABEL: spyre.hw.program @max_pool
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [702, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [2048, 0, 0]> row 702 x [6, 1, 1]
// CHECK-NEXT: spyre.hw.binary "max" {{.*}}, #spyre.ref<lx, dl16, strides = [702, 4, 0]>, #spyre.ref<lx, dl16, offset = 2, strides = [702, 4, 0]> [6 x 15]
// CHECK-COUNT-7: spyre.hw.binary "max"
// CHECK-NEXT: spyre.hw.binary "max" {{.*}}, #spyre.ref<lx, dl16, offset = 128, strides = [702, 4, 0]>, #spyre.ref<lx, dl16, offset = 130, strides = [702, 4, 0]> [6 x 15]
// CHECK-NOT: spyre.hw.dma #spyre.ref<lx
// CHECK: spyre.hw.dma #spyre.ref<@arg1
#p00 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 0)>
#p01 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 1)>
#p02 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 2)>
#p10 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 32)>
#p11 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 33)>
#p12 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 34)>
#p20 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 64)>
#p21 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 65)>
#p22 = affine_map<(d0, d1, d2) -> (d0 * 1024 + d1 * 64 + d2 * 2 + 66)>
#po = affine_map<(d0, d1, d2) -> (d0 * 225 + d1 * 15 + d2)>
spyre.kernel @max_pool(%x: !spyre.buffer<65536xf16>, %y: !spyre.buffer<14400xf16>) {
  spyre.generic domain [64, 15, 15] {indexing_maps = [#p00, #p01, #p02, #p10, #p11, #p12, #p20, #p21, #p22, #po],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %x, %x, %x, %x, %x, %x, %x, %x : !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>, !spyre.buffer<65536xf16>)
      outs(%y : !spyre.buffer<14400xf16>) {
  ^bb0(%a0: f16, %a1: f16, %a2: f16, %a3: f16, %a4: f16, %a5: f16, %a6: f16, %a7: f16, %a8: f16):
    %m0 = arith.maximumf %a0, %a1 : f16
    %m1 = arith.maximumf %m0, %a2 : f16
    %m2 = arith.maximumf %m1, %a3 : f16
    %m3 = arith.maximumf %m2, %a4 : f16
    %m4 = arith.maximumf %m3, %a5 : f16
    %m5 = arith.maximumf %m4, %a6 : f16
    %m6 = arith.maximumf %m5, %a7 : f16
    %m7 = arith.maximumf %m6, %a8 : f16
    spyre.yield %m7 : f16
  }
  spyre.return
}

// A sum over three rows of 16 (a stride-1 window's rows, read in place by
// pooling.py): the output rows (32 bytes) are the plane loop and each
// input's planes continue its rows, one run of all planes per channel. The
// taps two and three rows on share the first one's run, extended by 32
// elements: one load of 4 x 16 + 32 elements a channel, not three.
// CHECK-LABEL: spyre.hw.program @column_sum
// CHECK: spyre.hw.core 0 {
// CHECK-NEXT: spyre.hw.kernel 1
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, strides = [192, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [512, 0, 0]> row 192 x [8, 1, 1]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, strides = [192, 2, 0]>, #spyre.ref<lx, dl16, offset = 32, strides = [192, 2, 0]> [8 x 16]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, offset = 64, strides = [192, 2, 0]> [8 x 16]
// CHECK-NOT: spyre.hw.dma #spyre.ref<lx
// CHECK: spyre.hw.dma #spyre.ref<@arg1
#v0 = affine_map<(d0, d1, d2) -> (d0 * 256 + d1 * 16 + d2)>
#v1 = affine_map<(d0, d1, d2) -> (d0 * 256 + d1 * 16 + d2 + 16)>
#v2 = affine_map<(d0, d1, d2) -> (d0 * 256 + d1 * 16 + d2 + 32)>
#vo = affine_map<(d0, d1, d2) -> (d0 * 224 + d1 * 16 + d2)>
spyre.kernel @column_sum(%x: !spyre.buffer<16384xf16>, %y: !spyre.buffer<14336xf16>) {
  spyre.generic domain [64, 14, 16] {indexing_maps = [#v0, #v1, #v2, #vo],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %x, %x : !spyre.buffer<16384xf16>, !spyre.buffer<16384xf16>, !spyre.buffer<16384xf16>)
      outs(%y : !spyre.buffer<14336xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %0 = arith.addf %a, %b : f16
    %1 = arith.addf %0, %c : f16
    spyre.yield %1 : f16
  }
  spyre.return
}
