// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// The residual an epilogue adds is loaded with the tile's last step, after its
// operands. The product waits for the operands only (load semaphore 0 at 2,
// the lhs and rhs panels); a one-element copy on the SFU waits for the
// residual (3), and the epilogue after it for the product (release
// semaphore 6). Before, the product waited for the residual too and the PT
// sat idle while it loaded (GPT-2's MLP down projection: 11 us a tile).
// CHECK-LABEL: spyre.hw.program @residual_down
// CHECK: spyre.hw.matmul {{.*}} m 128 k 1024 n 128 {signal_sem = 6 : i64, wait_count = 2 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.unary "copy" {{.*}} [1 x 1] {wait_count = 3 : i64, wait_sem = 0 : i64}
// CHECK-NEXT: spyre.hw.binary "add" {{.*}} {signal_sem = 1 : i64, wait_count = 1 : i64, wait_sem = 6 : i64}

#id = affine_map<(d0, d1) -> (d0, d1)>
spyre.kernel @residual_down(%x: !spyre.buffer<256x1024xf16>, %w: !spyre.buffer<1024x256xf16>,
                            %r: !spyre.buffer<256x256xf16>, %y: !spyre.buffer<256x256xf16>) {
  %p = spyre.alloc() : !spyre.buffer<256x256xf16>
  spyre.matmul ins(%x, %w : !spyre.buffer<256x1024xf16>, !spyre.buffer<1024x256xf16>)
               outs(%p : !spyre.buffer<256x256xf16>)
  spyre.generic domain [256, 256] {indexing_maps = [#id, #id, #id], iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%p, %r : !spyre.buffer<256x256xf16>, !spyre.buffer<256x256xf16>) outs(%y : !spyre.buffer<256x256xf16>) {
  ^bb0(%a: f16, %b: f16):
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %b : f16 to f32
    %2 = arith.addf %0, %1 : f32
    %3 = arith.truncf %2 : f32 to f16
    spyre.yield %3 : f16
  }
  spyre.return
}
