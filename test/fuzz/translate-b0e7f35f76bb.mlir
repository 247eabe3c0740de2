module {
  spyre.hw.program @fill num_cores = 4 {
    spyre.hw.buffer @arg0 output : !spyre.buffer<4xbf16>
    spyre.hw.core 0 {
      spyre.hw.kernel 1
    }
    spyre.hw.core 1 {
      spyre.hw.kernel 1
    }
    spyre.hw.core 2 {
      spyre.hw.kernel 1
    }
    spyre.hw.core 9223372036854775807 {
      spyre.hw.kernel 1
      spyre.hw.fill #spyre.ref<lx, dl16, offset = 128, strides = [8, 2, 0]>, 1.500000e+00 [1 x 4]
      spyre.hw.unary "copy" #spyre.ref<lx, dl16, strides = [0, 2, 0]>, #spyre.ref<lx, dl16, offset = 128, strides = [8, 2, 0]> [1 x 4] {signal_sem = 1 : i64}
      spyre.hw.dma #spyre.ref<@arg0, dl16>, #spyre.ref<lx, dl16, strides = [8, 0, 0]> row 8 x [1, 1, 1] {signal_sem = 33 : i64, wait_count = 1 : i64, wait_sem = 1 : i64}
    }
  }
}

