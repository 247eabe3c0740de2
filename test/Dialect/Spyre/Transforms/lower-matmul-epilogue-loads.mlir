// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// A product with an epilogue ends each tile's last step with SFU work (the
// SiLU here) long after the PT is done with its operands. The matmul, not
// the step's end, releases the operand slots: it signals the release
// semaphore (6), the epilogue chains on it, and the next operand load waits
// for it and goes ahead of the tile's store, which waits for the epilogue
// (semaphore 1). Before, that load queued behind the store and the PT ran
// dry while the SFU finished the epilogue.
// CHECK-LABEL: spyre.hw.program @silu_up
// CHECK: spyre.hw.matmul {{.*}} m 256 k 512 n 256 {signal_sem = 6 : i64
// CHECK: spyre.hw.unary "neg" {{.*}} {wait_count = [[RELEASED:[0-9]+]] : i64, wait_sem = 6 : i64}
// CHECK: spyre.hw.binary "div" {{.*}} {signal_sem = 1 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, {{.*}}, #spyre.ref<@arg1, {{.*}} {signal_sem = 0 : i64, wait_count = [[RELEASED]] : i64, wait_sem = 6 : i64}
// CHECK-NEXT: spyre.hw.dma #spyre.ref<@arg2, {{.*}} {signal_sem = 2 : i64, wait_count = {{[0-9]+}} : i64, wait_sem = 1 : i64}

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @silu_up(%x: !spyre.buffer<256x4096xf16>, %w: !spyre.buffer<4096x512xf16>,
                      %y: !spyre.buffer<256x512xf16>) {
  %p = spyre.alloc() : !spyre.buffer<256x512xf16>
  spyre.matmul ins(%x, %w : !spyre.buffer<256x4096xf16>, !spyre.buffer<4096x512xf16>)
               outs(%p : !spyre.buffer<256x512xf16>)
  spyre.generic domain [256, 512] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p : !spyre.buffer<256x512xf16>) outs(%y : !spyre.buffer<256x512xf16>) {
  ^bb0(%a: f16):
    %0 = arith.extf %a : f16 to f32
    %1 = arith.negf %0 : f32
    %2 = math.exp %1 : f32
    %c = arith.constant 1.0 : f32
    %3 = arith.addf %2, %c : f32
    %4 = arith.divf %0, %3 : f32
    %5 = arith.truncf %4 : f32 to f16
    spyre.yield %5 : f16
  }
  spyre.return
}
