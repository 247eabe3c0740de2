// RUN: spyre-translate --spyre-hw-to-binary %s -split-input-file -verify-diagnostics -o /dev/null

// The loop walks past the end of @x: the simulator's validator, run by the
// writer, names the instruction and the bytes.
// expected-error @+1 {{is not a valid program for 'spyre-v2': core 0, instruction 1: operand 1 accesses bytes [0, 256) of buffer 'x' of 128 bytes}}
spyre.hw.program @past_the_end num_cores = 1 {
  spyre.hw.buffer @x input : !spyre.buffer<32xf32>
  spyre.hw.core 0 {
    spyre.hw.loop 2 {
      spyre.hw.dma #spyre.ref<lx, f32>, #spyre.ref<@x, f32, inc = [128, 0, 0]> row 128 x [1, 1, 1]
    }
  }
}

// -----

// expected-error @+1 {{uses 64 cores; 'spyre-v2' has 32}}
spyre.hw.program @too_many_cores num_cores = 64 {
}

// -----

// expected-error @+1 {{expected one spyre.hw.program, found 0}}
module {
}
