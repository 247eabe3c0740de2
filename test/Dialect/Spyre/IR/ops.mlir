// RUN: spyre-opt %s | FileCheck %s --check-prefixes=CHECK,ALIAS
// Round trip: the printed form parses again and prints the same.
// RUN: spyre-opt %s | spyre-opt | FileCheck %s
// RUN: spyre-opt %s -mlir-print-op-generic | spyre-opt | FileCheck %s

// ALIAS: #[[POS:.*]] = affine_map<(d0, d1)[s0] -> (d0 - d1 + s0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: spyre.kernel @types
// CHECK-SAME: !spyre.buffer<1024x?xf16>
// CHECK-SAME: !spyre.buffer<64x64xf32, #spyre.layout<[1, 0]>, lx>
// CHECK-SAME: !spyre.buffer<8x128xbf16, #spyre.layout<[0, 1], stick = 64>>
// CHECK-SAME: !spyre.buffer<i32>
// CHECK-SAME: !spyre.buffer<4xi8, lx>
// CHECK-SAME: !spyre.buffer<2x2xi1>
spyre.kernel @types(%a: !spyre.buffer<1024x?xf16>,
                    %b: !spyre.buffer<64x64xf32, #spyre.layout<[1, 0]>, lx>,
                    %c: !spyre.buffer<8x128xbf16, #spyre.layout<[0, 1], stick = 64>, dram>,
                    %d: !spyre.buffer<i32>, %e: !spyre.buffer<4xi8, lx>,
                    %f: !spyre.buffer<2x2xi1>, %n: index) {
  spyre.return
}

// CHECK-LABEL: spyre.kernel @matmuls
spyre.kernel @matmuls(%a: !spyre.buffer<128x64xf16>, %bt: !spyre.buffer<32x64xf16>,
                      %c: !spyre.buffer<128x32xf32>, %at: !spyre.buffer<64x?xf16>,
                      %b: !spyre.buffer<64x32xf16>, %c2: !spyre.buffer<?x32xf16>,
                      %x: !spyre.buffer<8x128x64xbf16>, %y: !spyre.buffer<8x64x32xbf16>,
                      %z: !spyre.buffer<8x128x32xbf16>) {
  // CHECK: spyre.matmul transpose_rhs ins(%{{.*}}, %{{.*}} : !spyre.buffer<128x64xf16>, !spyre.buffer<32x64xf16>) outs(%{{.*}} : !spyre.buffer<128x32xf32>)
  spyre.matmul transpose_rhs ins(%a, %bt : !spyre.buffer<128x64xf16>, !spyre.buffer<32x64xf16>)
               outs(%c : !spyre.buffer<128x32xf32>)
  // CHECK: spyre.matmul transpose_lhs accumulate ins
  spyre.matmul transpose_lhs accumulate ins(%at, %b : !spyre.buffer<64x?xf16>, !spyre.buffer<64x32xf16>)
               outs(%c2 : !spyre.buffer<?x32xf16>)
  // CHECK: spyre.batch_matmul ins
  spyre.batch_matmul ins(%x, %y : !spyre.buffer<8x128x64xbf16>, !spyre.buffer<8x64x32xbf16>)
                     outs(%z : !spyre.buffer<8x128x32xbf16>)
  spyre.return
}

// CHECK-LABEL: spyre.kernel @generics
spyre.kernel @generics(%x: !spyre.buffer<64x?xf16>, %s: !spyre.buffer<64xf32>,
                       %i: !spyre.buffer<64xi32>, %m: !spyre.buffer<64xf32>,
                       %m2: !spyre.buffer<64xf32>, %w: !spyre.buffer<64xf32>,
                       %flag: !spyre.buffer<64xi1>, %y: !spyre.buffer<64x?xf16>,
                       %n: index) {
  // CHECK: spyre.generic domain [64, %{{.*}}] {{{.*}}combiners = [#spyre.combiner<sum>]
  spyre.generic domain [64, %n] {indexing_maps = [#id2, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<64x?xf16>) outs(%s : !spyre.buffer<64xf32>) {
  ^bb0(%v: f16):
    %e = arith.extf %v : f16 to f32
    spyre.yield %e : f32
  }
  // CHECK: #spyre.combiner<argmax>, #spyre.combiner<welford>, #spyre.combiner<any>
  spyre.generic domain [64, %n] {indexing_maps = [#id2, #row, #row, #row, #row, #row],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<argmax>, #spyre.combiner<welford>, #spyre.combiner<any>]}
      ins(%x : !spyre.buffer<64x?xf16>)
      outs(%i, %m, %m2, %w, %flag : !spyre.buffer<64xi32>, !spyre.buffer<64xf32>,
           !spyre.buffer<64xf32>, !spyre.buffer<64xf32>, !spyre.buffer<64xi1>) {
  ^bb0(%v: f16):
    %e = arith.extf %v : f16 to f32
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %e, %zero : f32
    spyre.yield %v, %e, %pos : f16, f32, i1
  }
  // Elementwise with symbols, a broadcast load and the loop position.
  // CHECK: spyre.generic domain [64, %{{.*}}] symbols(%{{.*}})
  // ALIAS: spyre.index_expr #[[POS]] : i32
  spyre.generic domain [64, %n] symbols(%n) {
      indexing_maps = [affine_map<(d0, d1)[s0] -> (d0, d1)>, affine_map<(d0, d1)[s0] -> (0)>,
                       affine_map<(d0, d1)[s0] -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x, %s : !spyre.buffer<64x?xf16>, !spyre.buffer<64xf32>)
      outs(%y : !spyre.buffer<64x?xf16>) {
  ^bb0(%v: f16, %b: f32):
    %pos = spyre.index_expr affine_map<(d0, d1)[s0] -> (d0 - d1 + s0)> : i32
    %zero = arith.constant 0 : i32
    %causal = arith.cmpi sge, %pos, %zero : i32
    %t = arith.truncf %b : f32 to f16
    %e = math.exp %v : f16
    %sum = arith.addf %e, %t : f16
    %ninf = arith.constant 0xFC00 : f16
    %r = arith.select %causal, %sum, %ninf : f16
    spyre.yield %r : f16
  }
  spyre.return
}

// CHECK-LABEL: spyre.kernel @movement
spyre.kernel @movement(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<8x4xf16>,
                       %c: !spyre.buffer<64xf16>, %d: !spyre.buffer<16x64xf16>,
                       %e: !spyre.buffer<4x32xf16>, %f: !spyre.buffer<4x24xf16>,
                       %t: !spyre.buffer<100x16xf16>, %ids: !spyre.buffer<?x3xi32>,
                       %g: !spyre.buffer<?x3x16xf16>, %o: index,
                       %l: !spyre.buffer<4x8xf16, #spyre.layout<[1, 0]>, lx>) {
  // CHECK: spyre.copy ins(%{{.*}} : !spyre.buffer<4x8xf16>) outs(%{{.*}} : !spyre.buffer<4x8xf16, #spyre.layout<[1, 0]>, lx>)
  spyre.copy ins(%a : !spyre.buffer<4x8xf16>) outs(%l : !spyre.buffer<4x8xf16, #spyre.layout<[1, 0]>, lx>)
  // CHECK: spyre.permute {{.*}} permutation = [1, 0]
  spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>) permutation = [1, 0]
  // CHECK: spyre.broadcast {{.*}} dimensions = [0]
  spyre.broadcast ins(%c : !spyre.buffer<64xf16>) outs(%d : !spyre.buffer<16x64xf16>) dimensions = [0]
  // CHECK: spyre.slice {{.*}} offsets [%{{.*}}, 0] strides [1, 2]
  spyre.slice ins(%d : !spyre.buffer<16x64xf16>) outs(%e : !spyre.buffer<4x32xf16>) offsets [%o, 0] strides [1, 2]
  // CHECK: spyre.concat {{.*}} dim = 1
  spyre.concat ins(%a, %f : !spyre.buffer<4x8xf16>, !spyre.buffer<4x24xf16>) outs(%e : !spyre.buffer<4x32xf16>) dim = 1
  // CHECK: spyre.gather {{.*}} axis = 0
  spyre.gather ins(%t, %ids : !spyre.buffer<100x16xf16>, !spyre.buffer<?x3xi32>) outs(%g : !spyre.buffer<?x3x16xf16>) axis = 0
  // CHECK: spyre.scatter {{.*}} axis = 0
  spyre.scatter ins(%g, %ids : !spyre.buffer<?x3x16xf16>, !spyre.buffer<?x3xi32>) outs(%t : !spyre.buffer<100x16xf16>) axis = 0
  // CHECK: spyre.scatter {{.*}} axis = 0 {source_axis = 0 : i64, unique_indices}
  spyre.scatter ins(%g, %ids : !spyre.buffer<?x3x16xf16>, !spyre.buffer<?x3xi32>) outs(%t : !spyre.buffer<100x16xf16>) axis = 0 {source_axis = 0 : i64, unique_indices}
  // CHECK: spyre.fill 0.000000e+00 : f16 outs
  spyre.fill 0.0 : f16 outs(%d : !spyre.buffer<16x64xf16>)
  // CHECK: spyre.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf16> -> !spyre.buffer<2xf16>
  %k = spyre.constant dense<[1.0, 2.0]> : tensor<2xf16> -> !spyre.buffer<2xf16>
  // CHECK: spyre.alloc(%{{.*}}) : !spyre.buffer<?x16xf32, lx>
  %tmp = spyre.alloc(%o) : !spyre.buffer<?x16xf32, lx>
  // CHECK: spyre.dim %{{.*}}[0] : !spyre.buffer<?x16xf32, lx>
  %sz = spyre.dim %tmp[0] : !spyre.buffer<?x16xf32, lx>
  // CHECK: spyre.dealloc
  spyre.dealloc %tmp : !spyre.buffer<?x16xf32, lx>
  spyre.return
}


// CHECK-LABEL: spyre.kernel @conv2d
spyre.kernel @conv2d(%x: !spyre.buffer<2x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>,
                     %b: !spyre.buffer<4xf16>, %y: !spyre.buffer<2x4x10x8xf16>,
                     %wg: !spyre.buffer<4x4x3x3xf16>) {
  // CHECK: spyre.conv2d ins(%{{.*}}, %{{.*}}, %{{.*}} : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>, !spyre.buffer<4xf16>) outs(%{{.*}} : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1]
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>, !spyre.buffer<4xf16>) outs(%y : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1]
  // CHECK: spyre.conv2d ins(%{{.*}}, %{{.*}} : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%{{.*}} : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1]{{$}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1]
  // CHECK: spyre.conv2d ins(%{{.*}}, %{{.*}}, %{{.*}} : {{.*}}) residual(%{{.*}} : !spyre.buffer<2x4x10x8xf16>) outs(%{{.*}} : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1] relu
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>, !spyre.buffer<4xf16>) residual(%y : !spyre.buffer<2x4x10x8xf16>) outs(%y : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1] relu
  // CHECK: spyre.conv2d ins(%{{.*}}, %{{.*}}, %{{.*}} : {{.*}}) scale(%{{.*}} : !spyre.buffer<4xf16>) outs(%{{.*}} : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1] relu
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>, !spyre.buffer<4xf16>) scale(%b : !spyre.buffer<4xf16>) outs(%y : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1] relu
  // CHECK: spyre.conv2d ins(%{{.*}}, %{{.*}} : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x4x3x3xf16>) outs(%{{.*}} : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1] groups = 2{{$}}
  spyre.conv2d ins(%x, %wg : !spyre.buffer<2x8x10x10xf16>, !spyre.buffer<4x4x3x3xf16>) outs(%y : !spyre.buffer<2x4x10x8xf16>) padding = [1, 0] dilation = [1, 1] groups = 2
  spyre.return
}

// CHECK-LABEL: spyre.kernel @attention
spyre.kernel @attention(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>,
                        %v: !spyre.buffer<2x32x48xf16>, %m: !spyre.buffer<1x1x32xf32>,
                        %o: !spyre.buffer<8x16x48xf16>) {
  // CHECK: spyre.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x48xf16>) outs(%{{.*}} : !spyre.buffer<8x16x48xf16>) scale = 1.250000e-01 causal
  spyre.attention ins(%q, %k, %v : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x48xf16>) outs(%o : !spyre.buffer<8x16x48xf16>) scale = 0.125 causal
  // CHECK: spyre.attention ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}}, !spyre.buffer<1x1x32xf32>) outs(%{{.*}} : !spyre.buffer<8x16x48xf16>) scale = 1.000000e+00{{$}}
  spyre.attention ins(%q, %k, %v, %m : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x48xf16>, !spyre.buffer<1x1x32xf32>) outs(%o : !spyre.buffer<8x16x48xf16>) scale = 1.0
  spyre.return
}
