spyre.hw.program @scale num_cores = 1 {
  spyre.hw.buffer @x input : !spyre.buffer<1x1x1x1x1x1x1x4x8xf32>
  spyre.hw.buffer @y output : !spyre.buffer<1x1x1x1x1x1x1x4x8xf32>
  spyre.hw.core 0 {
    spyre.hw.dma #spyre.ref<lx, f32>, #spyre.ref<@x, f32> row 128 x [1, 1, 1] {signal_sem = 0 : i64}
    spyre.hw.loop 4 {
      spyre.hw.binary "mul" #spyre.ref<lx, f32, offset = 128, strides = [32, 4, 0], inc = [32, 0, 0]>, #spyre.ref<lx, f32, strides = [32, 4, 0], inc = [32, 0, 0]> imm 2.0 [1 x 8] {wait_sem = 0 : i64, wait_count = 1 : i64, signal_sem = 1 : i64}
    }
    spyre.hw.dma #spyre.ref<@y, f32>, #spyre.ref<lx, f32, offset = 128> row 128 x [1, 1, 1] {wait_sem = 1 : i64, wait_count = 4 : i64}
  }
}
