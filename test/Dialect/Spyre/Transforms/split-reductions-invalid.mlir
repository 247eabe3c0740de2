// RUN: spyre-opt %s -spyre-attach-arch -spyre-split-reductions=cores=33 -verify-diagnostics

// expected-error @below {{cores = 33 is not in [0, 32] (the card's cores)}}
module {
  spyre.kernel @k(%x: !spyre.buffer<64xf32>, %y: !spyre.buffer<1xf32>) {
    spyre.return
  }
}
