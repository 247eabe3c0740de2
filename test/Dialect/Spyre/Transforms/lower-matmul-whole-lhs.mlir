// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// Few output rows (a decode step's product): the lhs rows, all of K, are
// loaded once into one slot (rows of 5000 bytes at an LX pitch of whole K
// steps) and each K step's product reads its 512 columns of them; only the
// rhs is loaded per step. The last step runs as two row halves, the second
// one pitch further on.
// CHECK-LABEL: spyre.hw.program @few_rows
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = [[#LHS:]], strides = [5120, 0, 0]>, #spyre.ref<@arg0, dl16, strides = [5000, 0, 0]> row 5000 x [3, 1, 1]
// CHECK-NOT: @arg0,
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#LHS]], strides = [5120, 0, 0]> x {{.*}} m 3 k 512 n 130
// CHECK-NOT: @arg0,
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#LHS+1024]], strides = [5120, 0, 0]> x {{.*}} m 3 k 512 n 130
// CHECK-NOT: @arg0,
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#LHS+4096]], strides = [5120, 0, 0]> x {{.*}} m 1 k 452 n 130
// CHECK: spyre.hw.matmul {{.*}} = #spyre.ref<lx, dl16, offset = [[#LHS+9216]], strides = [5120, 0, 0]> x {{.*}} m 2 k 452 n 130
spyre.kernel @few_rows(%x: !spyre.buffer<3x2500xf16>, %w: !spyre.buffer<130x2500xf16>,
                       %y: !spyre.buffer<3x130xf16>) {
  spyre.matmul transpose_rhs ins(%x, %w : !spyre.buffer<3x2500xf16>, !spyre.buffer<130x2500xf16>)
      outs(%y : !spyre.buffer<3x130xf16>)
  spyre.return
}
