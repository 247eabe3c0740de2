
spyre.hw.program @p num_cores = 1 {
  spyre.hw.core 9223372036854775807 {
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

