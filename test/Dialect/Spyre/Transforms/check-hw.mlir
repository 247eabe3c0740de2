// RUN: spyre-opt %s -split-input-file -spyre-check-hw -verify-diagnostics | FileCheck %s
// A card with 4 cores: the same program no longer fits.
// RUN: sed -e 's/^cores = 32/cores = 4/' %S/../../../../lib/Arch/spyre_card.toml > %t.toml
// RUN: not spyre-opt %s -split-input-file -spyre-attach-arch="arch=%t.toml" -spyre-check-hw 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not spyre-opt %s -spyre-attach-arch="arch=%t.missing" -spyre-check-hw 2>&1 | FileCheck %s --check-prefix=MISSING

// A valid program passes through unchanged.
// CHECK-LABEL: spyre.hw.program @valid num_cores = 8
// CHECK: spyre.hw.dma
// SMALL: error: 'spyre.hw.program' op uses 8 cores; 'spyre-v2' has 4
// MISSING: error: cannot read architecture description
spyre.hw.program @valid num_cores = 8 {
  spyre.hw.buffer @x input : !spyre.buffer<1024xf32>
  spyre.hw.core 7 {
    spyre.hw.loop 8 {
      spyre.hw.dma #spyre.ref<lx, f32, inc = [512, 0, 0]>, #spyre.ref<@x, f32, inc = [512, 0, 0]> row 512 x [1, 1, 1]
    }
  }
}

// -----

// expected-error @+1 {{core 0, instruction 0: operand 0 accesses bytes [2031616, 2031620) of LX of 1600000 bytes}}
spyre.hw.program @lx_overflow num_cores = 1 {
  spyre.hw.core 0 {
    spyre.hw.fill #spyre.ref<lx, f32, offset = 2031616>, 0.0 [1 x 1]
  }
}
