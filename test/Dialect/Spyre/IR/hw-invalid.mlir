// RUN: spyre-opt %s -split-input-file -verify-diagnostics

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{unknown element type 'f64'}}
    spyre.hw.dma #spyre.ref<lx, f64>, #spyre.ref<lx, f32> row 4 x [1, 1, 1]
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{unknown #spyre.ref field 'stride'}}
    spyre.hw.dma #spyre.ref<lx, f32, stride = [1, 2, 3]>, #spyre.ref<lx, f32> row 4 x [1, 1, 1]
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{strides and inc have three entries each}}
    spyre.hw.dma #spyre.ref<lx, f32, strides = [1, 2]>, #spyre.ref<lx, f32> row 4 x [1, 1, 1]
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{src refers to unknown buffer @nope}}
    spyre.hw.dma #spyre.ref<lx, f32>, #spyre.ref<@nope, f32> row 4 x [1, 1, 1]
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.buffer @x input : !spyre.buffer<4xf32>
  spyre.hw.core 0 {
    // expected-error @+1 {{'spyre.hw.matmul' op a must be in LX}}
    spyre.hw.matmul #spyre.ref<lx, f32> = #spyre.ref<@x, f32> x #spyre.ref<lx, dl16> m 1 k 1 n 1
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{unknown function 'gelu'}}
    spyre.hw.unary "gelu" #spyre.ref<lx, f32>, #spyre.ref<lx, f32> [1 x 4]
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{semaphore 64 is outside 0..63}}
    spyre.hw.fill #spyre.ref<lx, f32>, 0.0 [1 x 4] {signal_sem = 64 : i64}
  }
}

// -----

spyre.hw.program @p num_cores = 2 {
  // expected-error @+1 {{core 2 is outside the program's 2 cores}}
  spyre.hw.core 2 {
  }
}

// -----

spyre.hw.program @p num_cores = 2 {
  spyre.hw.core 0 {
  }
  // expected-error @+1 {{core 0 has two streams}}
  spyre.hw.core 0 {
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    spyre.hw.loop 2 {
      spyre.hw.loop 2 {
        spyre.hw.loop 2 {
          // expected-error @+1 {{hardware loops nest at most 3 deep}}
          spyre.hw.loop 2 {
          }
        }
      }
    }
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  // expected-error @+1 {{enum values for attribute 'kind' [input, output, inout, scratch, constant]}}
  spyre.hw.buffer @x temp : !spyre.buffer<4xf32>
}

// -----

spyre.hw.program @p num_cores = 1 {
  // expected-error @+1 {{device buffers need a static shape}}
  spyre.hw.buffer @x input : !spyre.buffer<?xf32>
}

// -----

spyre.hw.program @p num_cores = 1 {
  // expected-error @+1 {{constant buffers, and only they, carry a value}}
  spyre.hw.buffer @x constant : !spyre.buffer<4xf32>
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{takes either a second operand or an immediate}}
    "spyre.hw.binary"() <{func = "add", dst = #spyre.ref<lx, f32>, lhs = #spyre.ref<lx, f32>, rows = 1 : i64, cols = 1 : i64}> : () -> ()
  }
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 0 {
    // expected-error @+1 {{welford writes M2 to aux1 and the count to aux2}}
    spyre.hw.reduce "welford" #spyre.ref<lx, f32>, #spyre.ref<lx, f32> [4 x 16]
  }
}

// -----

// expected-error @+1 {{'spyre.hw.dma' op must be inside a spyre.hw.core}}
spyre.hw.dma #spyre.ref<lx, f32>, #spyre.ref<lx, f32> row 4 x [1, 1, 1]

// -----

// The binary holds at most 8 dimensions per buffer (BufferDesc, docs/binary-format.md).
spyre.hw.program @p num_cores = 1 {
  // expected-error @+1 {{has rank 9; the program binary holds at most 8 dimensions}}
  spyre.hw.buffer @x input : !spyre.buffer<1x1x1x1x1x1x1x1x2xf32>
}

// -----

spyre.hw.program @p num_cores = 1 {
  spyre.hw.buffer @x input : !spyre.buffer<64x64xf16>
  spyre.hw.buffer @ids input : !spyre.buffer<8xi32>
  spyre.hw.core 0 {
    // expected-error @+1 {{'spyre.hw.scatter' op indices are i32 in LX}}
    spyre.hw.scatter #spyre.ref<@x, dl16, strides = [128, 0, 0]>[#spyre.ref<@ids, i32>], #spyre.ref<lx, dl16> row 128 x 8 of 64
  }
}
