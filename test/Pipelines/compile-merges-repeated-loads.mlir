// RUN: spyre-opt %s --spyre-compile=stop-after=fuse | FileCheck %s --check-prefix=FUSE
// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s --check-prefix=HW

// A 2-wide max with NaN propagation as Inductor emits it: every use of a
// tap is a load of its own. The fuse stage merges the repeated inputs and
// CSE the repeated computation, so the program loads each tap once.
// FUSE-LABEL: spyre.kernel @window_max
// FUSE: ins(%arg0, %arg0 : !spyre.buffer<9xf16>, !spyre.buffer<9xf16>)
// FUSE-COUNT-1: arith.cmpf
// FUSE-NOT: arith.cmpf
// HW-LABEL: spyre.hw.program @window_max
// HW-COUNT-2: spyre.hw.dma #spyre.ref<lx
// HW-NOT: spyre.hw.dma #spyre.ref<lx
spyre.kernel @window_max(%a: !spyre.buffer<9xf16>, %b: !spyre.buffer<8xf16>) {
  spyre.generic domain [8] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0 + 1)>,
      affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0 + 1)>, affine_map<(d0) -> (d0 + 1)>,
      affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%a, %a, %a, %a, %a : !spyre.buffer<9xf16>, !spyre.buffer<9xf16>, !spyre.buffer<9xf16>,
          !spyre.buffer<9xf16>, !spyre.buffer<9xf16>)
      outs(%b : !spyre.buffer<8xf16>) {
  ^bb0(%x0: f16, %y0: f16, %x1: f16, %y1: f16, %y2: f16):
    %gt = arith.cmpf ogt, %y0, %x0 : f16
    %gt2 = arith.cmpf ogt, %y1, %x1 : f16
    %m = arith.select %gt, %y2, %x1 : f16
    %m2 = arith.select %gt2, %m, %x0 : f16
    spyre.yield %m2 : f16
  }
  spyre.return
}
