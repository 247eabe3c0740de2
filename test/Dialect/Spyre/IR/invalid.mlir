// RUN: spyre-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{the card has no 64-bit integers: use i32}}
spyre.kernel @i64(%a: !spyre.buffer<4xi64>) {
  spyre.return
}

// -----

// expected-error @+1 {{unsupported buffer element type 'f64'}}
spyre.kernel @f64(%a: !spyre.buffer<4xf64>) {
  spyre.return
}

// -----

// expected-error @+1 {{layout has 1 dimensions but the buffer has rank 2}}
spyre.kernel @layout_rank(%a: !spyre.buffer<4x4xf16, #spyre.layout<[0]>>) {
  spyre.return
}

// -----

// expected-error @+1 {{layout order [0, 0] is not a permutation of 0..2}}
spyre.kernel @layout_perm(%a: !spyre.buffer<4x4xf16, #spyre.layout<[0, 0]>>) {
  spyre.return
}

// -----

// expected-error @+1 {{unknown memory space 'hbm'}}
spyre.kernel @space(%a: !spyre.buffer<4xf16, hbm>) {
  spyre.return
}

// -----

// expected-error @+1 {{argument #0 has type 'f32'; kernel arguments are buffers or index values}}
spyre.kernel @scalar_arg(%a: f32) {
  spyre.return
}

// -----

// expected-error @+1 {{kernels return nothing}}
spyre.kernel @returns(%a: index) -> index {
  spyre.return
}

// -----

spyre.kernel @mm_k(%a: !spyre.buffer<16x64xf16>, %b: !spyre.buffer<32x8xf16>, %c: !spyre.buffer<16x8xf32>) {
  // expected-error @+1 {{contraction sizes differ: lhs has K = 64, rhs has K = 32}}
  spyre.matmul ins(%a, %b : !spyre.buffer<16x64xf16>, !spyre.buffer<32x8xf16>) outs(%c : !spyre.buffer<16x8xf32>)
  spyre.return
}

// -----

spyre.kernel @mm_out(%a: !spyre.buffer<16x64xf16>, %b: !spyre.buffer<8x64xf16>, %c: !spyre.buffer<16x16xf32>) {
  // expected-error @+1 {{init has shape 16x16 but the product is 16x8}}
  spyre.matmul transpose_rhs ins(%a, %b : !spyre.buffer<16x64xf16>, !spyre.buffer<8x64xf16>) outs(%c : !spyre.buffer<16x16xf32>)
  spyre.return
}

// -----

spyre.kernel @mm_rank(%a: !spyre.buffer<2x16x64xf16>, %b: !spyre.buffer<64x8xf16>, %c: !spyre.buffer<16x8xf32>) {
  // expected-error @+1 {{lhs must have rank 2, got 3}}
  spyre.matmul ins(%a, %b : !spyre.buffer<2x16x64xf16>, !spyre.buffer<64x8xf16>) outs(%c : !spyre.buffer<16x8xf32>)
  spyre.return
}

// -----

spyre.kernel @mm_int(%a: !spyre.buffer<16x64xi8>, %b: !spyre.buffer<64x8xi8>, %c: !spyre.buffer<16x8xi32>) {
  // expected-error @+1 {{lhs element type 'i8' is not f16, bf16 or f32}}
  spyre.matmul ins(%a, %b : !spyre.buffer<16x64xi8>, !spyre.buffer<64x8xi8>) outs(%c : !spyre.buffer<16x8xi32>)
  spyre.return
}

// -----

spyre.kernel @bmm_batch(%a: !spyre.buffer<2x16x64xf16>, %b: !spyre.buffer<3x64x8xf16>, %c: !spyre.buffer<2x16x8xf16>) {
  // expected-error @+1 {{batch sizes differ: 2, 3, 2}}
  spyre.batch_matmul ins(%a, %b : !spyre.buffer<2x16x64xf16>, !spyre.buffer<3x64x8xf16>) outs(%c : !spyre.buffer<2x16x8xf16>)
  spyre.return
}

// -----

spyre.kernel @map_dims(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{indexing map of input #0 has 1 dimensions but the domain has 2 loops}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0) -> (d0, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4x8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @map_results(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{indexing map of output #0 has 1 results but the buffer has rank 2}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4x8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @map_symbols(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{indexing map of input #0 has 1 symbols but 0 are bound}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1)[s0] -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4x8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @map_bounds(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{indexing map of input #0 indexes dim 1 over [1, 8] but its size is 8}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 + 1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4x8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @map_count(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{has 1 indexing maps for 2 operands}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4x8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @iterators(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{has 1 iterator types for 2 loops}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4x8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @store_in_reduction(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4xf16>) {
  // expected-error @+1 {{combiner #0 is 'none' but loop 1 is a reduction}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @reduced_map(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<8xf16>) {
  // expected-error @+1 {{output #0 is reduced (sum) but its map uses reduction loop d1}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<8xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @argmax_type(%x: !spyre.buffer<4x8xf16>, %y: !spyre.buffer<4xf16>) {
  // expected-error @+1 {{output #0 of a 'argmax' reduction cannot have element type 'f16'}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<argmax>]}
      ins(%x : !spyre.buffer<4x8xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @welford_outputs(%x: !spyre.buffer<4x8xf32>, %m: !spyre.buffer<4xf32>) {
  // expected-error @+1 {{combiners write 3 outputs but 1 are given}}
  spyre.generic domain [4, 8] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<reduction>],
      combiners = [#spyre.combiner<welford>]}
      ins(%x : !spyre.buffer<4x8xf32>) outs(%m : !spyre.buffer<4xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

spyre.kernel @yield_type(%x: !spyre.buffer<4xf16>, %y: !spyre.buffer<4xf32>) {
  spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4xf16>) outs(%y : !spyre.buffer<4xf32>) {
  ^bb0(%v: f16):
    // expected-error @+1 {{value #0 has type 'f16' but its output holds 'f32'}}
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @yield_count(%x: !spyre.buffer<4xf16>, %y: !spyre.buffer<4xf16>) {
  spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    // expected-error @+1 {{yields 2 values but the generic has 1 combiners}}
    spyre.yield %v, %v : f16, f16
  }
  spyre.return
}

// -----

spyre.kernel @body_args(%x: !spyre.buffer<4xf16>, %y: !spyre.buffer<4xf16>) {
  // expected-error @+1 {{body argument #0 has type 'f32' but input #0 holds 'f16'}}
  spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f32):
    %t = arith.truncf %v : f32 to f16
    spyre.yield %t : f16
  }
  spyre.return
}

// -----

spyre.kernel @body_op(%x: !spyre.buffer<4xf16>, %y: !spyre.buffer<4xf16>) {
  spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    // expected-error @+1 {{is not allowed in a spyre.generic body}}
    %c = spyre.constant dense<[1.0, 2.0]> : tensor<2xf16> -> !spyre.buffer<2xf16>
    spyre.yield %v : f16
  }
  spyre.return
}

// -----

spyre.kernel @body_capture(%x: !spyre.buffer<4xf16>, %y: !spyre.buffer<4xf16>) {
  %one = arith.constant 1.0 : f16
  // expected-note @+1 {{required by region isolation constraints}}
  spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4xf16>) outs(%y : !spyre.buffer<4xf16>) {
  ^bb0(%v: f16):
    // expected-error @+1 {{using value defined outside the region}}
    %r = arith.addf %v, %one : f16
    spyre.yield %r : f16
  }
  spyre.return
}

// -----

spyre.kernel @domain_count(%x: !spyre.buffer<4xf16>, %y: !spyre.buffer<4xf16>, %n: index) {
  // expected-error @+1 {{expected 1 dynamic domain values}}
  "spyre.generic"(%x, %y) <{static_domain = array<i64: -9223372036854775808>, indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>], operandSegmentSizes = array<i32: 0, 0, 1, 1>}> ({
  ^bb0(%v: f16):
    spyre.yield %v : f16
  }) : (!spyre.buffer<4xf16>, !spyre.buffer<4xf16>) -> ()
  spyre.return
}

// -----

spyre.kernel @index_expr(%x: !spyre.buffer<4xi32>, %y: !spyre.buffer<4xi32>) {
  spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<4xi32>) outs(%y : !spyre.buffer<4xi32>) {
  ^bb0(%v: i32):
    // expected-error @+1 {{map takes (2 dims, 0 symbols) but the generic has 1 loops and 0 symbols}}
    %i = spyre.index_expr affine_map<(d0, d1) -> (d0)> : i32
    spyre.yield %i : i32
  }
  spyre.return
}

// -----

spyre.kernel @copy_shape(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<8x4xf16>) {
  // expected-error @+1 {{source and target shapes differ}}
  spyre.copy ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>)
  spyre.return
}

// -----

spyre.kernel @copy_type(%a: !spyre.buffer<4xf16>, %b: !spyre.buffer<4xf32>) {
  // expected-error @+1 {{source and target element types differ: 'f16' vs 'f32'}}
  spyre.copy ins(%a : !spyre.buffer<4xf16>) outs(%b : !spyre.buffer<4xf32>)
  spyre.return
}

// -----

spyre.kernel @permute_bad(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<8x4xf16>) {
  // expected-error @+1 {{permutation is not a permutation of the dimensions}}
  spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<8x4xf16>) permutation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @permute_shape(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{target dim 0 has size 4 but source dim 1 has size 8}}
  spyre.permute ins(%a : !spyre.buffer<4x8xf16>) outs(%b : !spyre.buffer<4x8xf16>) permutation = [1, 0]
  spyre.return
}

// -----

spyre.kernel @broadcast_rank(%a: !spyre.buffer<8xf16>, %b: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{source rank 1 plus 2 new dimensions != target rank 2}}
  spyre.broadcast ins(%a : !spyre.buffer<8xf16>) outs(%b : !spyre.buffer<4x8xf16>) dimensions = [0, 1]
  spyre.return
}

// -----

spyre.kernel @slice_bounds(%a: !spyre.buffer<16xf16>, %b: !spyre.buffer<8xf16>) {
  // expected-error @+1 {{dim 0 reads index 17 of a source of size 16}}
  spyre.slice ins(%a : !spyre.buffer<16xf16>) outs(%b : !spyre.buffer<8xf16>) offsets [3] strides [2]
  spyre.return
}

// -----

spyre.kernel @slice_stride(%a: !spyre.buffer<16xf16>, %b: !spyre.buffer<8xf16>) {
  // expected-error @+1 {{stride of dim 0 must be positive}}
  spyre.slice ins(%a : !spyre.buffer<16xf16>) outs(%b : !spyre.buffer<8xf16>) offsets [0] strides [0]
  spyre.return
}

// -----

spyre.kernel @concat_sum(%a: !spyre.buffer<4x8xf16>, %b: !spyre.buffer<4x8xf16>, %c: !spyre.buffer<4x20xf16>) {
  // expected-error @+1 {{inputs add up to 16 along dim 1 but the target has 20}}
  spyre.concat ins(%a, %b : !spyre.buffer<4x8xf16>, !spyre.buffer<4x8xf16>) outs(%c : !spyre.buffer<4x20xf16>) dim = 1
  spyre.return
}

// -----

spyre.kernel @concat_dim(%a: !spyre.buffer<4x8xf16>, %c: !spyre.buffer<4x8xf16>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  spyre.concat ins(%a : !spyre.buffer<4x8xf16>) outs(%c : !spyre.buffer<4x8xf16>) dim = 2
  spyre.return
}

// -----

spyre.kernel @gather_shape(%t: !spyre.buffer<100x16xf16>, %i: !spyre.buffer<5xi32>, %o: !spyre.buffer<5x8xf16>) {
  // expected-error @+1 {{target shape must be table[:axis] ++ indices ++ table[axis+1:]}}
  spyre.gather ins(%t, %i : !spyre.buffer<100x16xf16>, !spyre.buffer<5xi32>) outs(%o : !spyre.buffer<5x8xf16>) axis = 0
  spyre.return
}

// -----

spyre.kernel @gather_index(%t: !spyre.buffer<100x16xf16>, %i: !spyre.buffer<5xf32>, %o: !spyre.buffer<5x16xf16>) {
  // expected-error @+1 {{indices must be i32 or i8, got 'f32'}}
  spyre.gather ins(%t, %i : !spyre.buffer<100x16xf16>, !spyre.buffer<5xf32>) outs(%o : !spyre.buffer<5x16xf16>) axis = 0
  spyre.return
}

// -----

spyre.kernel @scatter_shape(%s: !spyre.buffer<4x5x8xf16>, %i: !spyre.buffer<5xi32>, %t: !spyre.buffer<4x16x64xf16>) {
  // expected-error @+1 {{source shape must be table[:axis] ++ table[axis+1:] with the indices' shape at source_axis (axis if not given)}}
  spyre.scatter ins(%s, %i : !spyre.buffer<4x5x8xf16>, !spyre.buffer<5xi32>) outs(%t : !spyre.buffer<4x16x64xf16>) axis = 1
  spyre.return
}

// -----

spyre.kernel @scatter_source_axis(%s: !spyre.buffer<4x5x64xf16>, %i: !spyre.buffer<5xi32>, %t: !spyre.buffer<4x16x64xf16>) {
  // expected-error @+1 {{source shape must be table[:axis] ++ table[axis+1:] with the indices' shape at source_axis}}
  spyre.scatter ins(%s, %i : !spyre.buffer<4x5x64xf16>, !spyre.buffer<5xi32>) outs(%t : !spyre.buffer<4x16x64xf16>) axis = 1 {source_axis = 0 : i64}
  spyre.return
}

// -----

spyre.kernel @scatter_index(%s: !spyre.buffer<4x5x64xf16>, %i: !spyre.buffer<5xi8>, %t: !spyre.buffer<4x16x64xf16>) {
  // expected-error @+1 {{indices must be i32, got 'i8'}}
  spyre.scatter ins(%s, %i : !spyre.buffer<4x5x64xf16>, !spyre.buffer<5xi8>) outs(%t : !spyre.buffer<4x16x64xf16>) axis = 1
  spyre.return
}

// -----

spyre.kernel @scatter_axis(%s: !spyre.buffer<4x5x64xf16>, %i: !spyre.buffer<5xi32>, %t: !spyre.buffer<4x16x64xf16>) {
  // expected-error @+1 {{axis 3 is out of range for a table of rank 3}}
  spyre.scatter ins(%s, %i : !spyre.buffer<4x5x64xf16>, !spyre.buffer<5xi32>) outs(%t : !spyre.buffer<4x16x64xf16>) axis = 3
  spyre.return
}

// -----

spyre.kernel @scatter_type(%s: !spyre.buffer<4x5x64xf32>, %i: !spyre.buffer<5xi32>, %t: !spyre.buffer<4x16x64xf16>) {
  // expected-error @+1 {{source and table}}
  spyre.scatter ins(%s, %i : !spyre.buffer<4x5x64xf32>, !spyre.buffer<5xi32>) outs(%t : !spyre.buffer<4x16x64xf16>) axis = 1
  spyre.return
}

// -----

spyre.kernel @fill_type(%a: !spyre.buffer<4xf16>) {
  // expected-error @+1 {{value of type 'f32' does not match element type 'f16'}}
  spyre.fill 1.0 : f32 outs(%a : !spyre.buffer<4xf16>)
  spyre.return
}

// -----

spyre.kernel @constant_shape() {
  // expected-error @+1 {{value of type 'tensor<3xf16>' does not match the buffer type}}
  %c = spyre.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf16> -> !spyre.buffer<2xf16>
  spyre.return
}

// -----

spyre.kernel @alloc_sizes(%n: index) {
  // expected-error @+1 {{type has 1 dynamic dimensions but 0 sizes are given}}
  %a = spyre.alloc() : !spyre.buffer<?x4xf16>
  spyre.return
}

// -----

spyre.kernel @dim_range(%a: !spyre.buffer<4xf16>) {
  // expected-error @+1 {{dimension 1 is out of range for a buffer of rank 1}}
  %d = spyre.dim %a[1] : !spyre.buffer<4xf16>
  spyre.return
}

// -----

// expected-error @+1 {{body must end with 'spyre.return'}}
spyre.kernel @no_return(%a: !spyre.buffer<4xf16>) {
  spyre.fill 0.0 : f16 outs(%a : !spyre.buffer<4xf16>)
}

// -----

spyre.kernel @fused_one(%a: !spyre.buffer<4xf16>, %b: !spyre.buffer<4xf16>) {
  // expected-error @+1 {{must hold at least two spyre.generic ops}}
  spyre.fused {
    spyre.generic domain [4] {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
        iterator_types = [#spyre.iterator<parallel>]}
        ins(%a : !spyre.buffer<4xf16>) outs(%b : !spyre.buffer<4xf16>) {
    ^bb0(%v: f16):
      spyre.yield %v : f16
    }
  }
  spyre.return
}

// -----

spyre.kernel @fused_other(%a: !spyre.buffer<4xf16>, %b: !spyre.buffer<4xf16>) {
  // expected-error @+1 {{may hold only spyre.generic, spyre.matmul, spyre.alloc and spyre.dealloc, not 'spyre.copy'}}
  spyre.fused {
    spyre.copy ins(%a : !spyre.buffer<4xf16>) outs(%b : !spyre.buffer<4xf16>)
  }
  spyre.return
}

// -----

spyre.kernel @fused_matmul_alone(%a: !spyre.buffer<4x4xf16>, %b: !spyre.buffer<4x4xf16>,
                                 %c: !spyre.buffer<4x4xf16>) {
  // expected-error @+1 {{must hold one spyre.generic after its spyre.matmul ops (the epilogue), or two spyre.matmul ops and no generic, not 1 and 0}}
  spyre.fused {
    spyre.matmul ins(%a, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%c : !spyre.buffer<4x4xf16>)
  }
  spyre.return
}

// -----

spyre.kernel @fused_matmul_after(%a: !spyre.buffer<4x4xf16>, %b: !spyre.buffer<4x4xf16>,
                                 %c: !spyre.buffer<4x4xf16>) {
  // expected-error @+1 {{may hold one spyre.matmul, or two sharing their lhs, before its epilogue}}
  spyre.fused {
    spyre.generic domain [4, 4] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                                  affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%a : !spyre.buffer<4x4xf16>) outs(%b : !spyre.buffer<4x4xf16>) {
    ^bb0(%v: f16):
      spyre.yield %v : f16
    }
    spyre.matmul ins(%a, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%c : !spyre.buffer<4x4xf16>)
  }
  spyre.return
}

// -----

// Two products side by side share their lhs (a gated MLP's gate and up).
spyre.kernel @fused_matmuls_other_lhs(%a: !spyre.buffer<4x4xf16>, %b: !spyre.buffer<4x4xf16>,
                                      %c: !spyre.buffer<4x4xf16>) {
  // expected-error @+1 {{may hold two spyre.matmul ops only when they share their lhs}}
  spyre.fused {
    %p = spyre.alloc() : !spyre.buffer<4x4xf16>
    %q = spyre.alloc() : !spyre.buffer<4x4xf16>
    spyre.matmul ins(%a, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%p : !spyre.buffer<4x4xf16>)
    spyre.matmul ins(%b, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%q : !spyre.buffer<4x4xf16>)
    spyre.generic domain [4, 4] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                                  affine_map<(d0, d1) -> (d0, d1)>,
                                                  affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%p, %q : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
        outs(%c : !spyre.buffer<4x4xf16>) {
    ^bb0(%v: f16, %w: f16):
      %s = arith.mulf %v, %w : f16
      spyre.yield %s : f16
    }
  }
  spyre.return
}

// -----

spyre.kernel @fused_three_matmuls(%a: !spyre.buffer<4x4xf16>, %b: !spyre.buffer<4x4xf16>,
                                  %c: !spyre.buffer<4x4xf16>) {
  // expected-error @+1 {{may hold at most two spyre.matmul ops}}
  spyre.fused {
    %p = spyre.alloc() : !spyre.buffer<4x4xf16>
    spyre.matmul ins(%a, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%p : !spyre.buffer<4x4xf16>)
    spyre.matmul ins(%a, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%p : !spyre.buffer<4x4xf16>)
    spyre.matmul ins(%a, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%p : !spyre.buffer<4x4xf16>)
    spyre.generic domain [4, 4] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                                  affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%p : !spyre.buffer<4x4xf16>) outs(%c : !spyre.buffer<4x4xf16>) {
    ^bb0(%v: f16):
      spyre.yield %v : f16
    }
  }
  spyre.return
}

// -----

// A chain's second product reads its first epilogue's output.
spyre.kernel @fused_chain_unlinked(%a: !spyre.buffer<4x4xf16>, %b: !spyre.buffer<4x4xf16>,
                                   %c: !spyre.buffer<4x4xf16>) {
  // expected-error @+1 {{with two spyre.matmul and two spyre.generic ops must be a chain: a product, its epilogue, a product of the epilogue's output, its epilogue}}
  spyre.fused {
    %p = spyre.alloc() : !spyre.buffer<4x4xf32>
    %h = spyre.alloc() : !spyre.buffer<4x4xf16>
    %q = spyre.alloc() : !spyre.buffer<4x4xf32>
    spyre.matmul ins(%a, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%p : !spyre.buffer<4x4xf32>)
    spyre.generic domain [4, 4] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                                  affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%p : !spyre.buffer<4x4xf32>) outs(%h : !spyre.buffer<4x4xf16>) {
    ^bb0(%v: f32):
      %t = arith.truncf %v : f32 to f16
      spyre.yield %t : f16
    }
    spyre.matmul ins(%b, %b : !spyre.buffer<4x4xf16>, !spyre.buffer<4x4xf16>)
                 outs(%q : !spyre.buffer<4x4xf32>)
    spyre.generic domain [4, 4] {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                                  affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = [#spyre.iterator<parallel>, #spyre.iterator<parallel>]}
        ins(%q : !spyre.buffer<4x4xf32>) outs(%c : !spyre.buffer<4x4xf16>) {
    ^bb0(%v: f32):
      %t = arith.truncf %v : f32 to f16
      spyre.yield %t : f16
    }
  }
  spyre.return
}

// -----

// expected-error @+1 {{custom op 'spyre.frobnicate' is unknown}}
spyre.frobnicate

// -----

// expected-error @+1 {{buffer has more than 2^63 elements}}
spyre.kernel @huge(%a: !spyre.buffer<4294967296x4294967296x4xf32>) {
  spyre.return
}

// -----

#b = affine_map<(d0, d1) -> (d1)>
spyre.kernel @huge_domain(%x: !spyre.buffer<64xf32>, %y: !spyre.buffer<64xf32>) {
  // expected-error @+1 {{domain has more than 2^63 points}}
  spyre.generic domain [4611686018427387904, 64] {indexing_maps = [#b, #b],
      iterator_types = [#spyre.iterator<reduction>, #spyre.iterator<parallel>],
      combiners = [#spyre.combiner<sum>]}
      ins(%x : !spyre.buffer<64xf32>) outs(%y : !spyre.buffer<64xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

// An empty body (found by scripts/fuzz.py: the verifier asserted).
// expected-error @+1 {{body must end with 'spyre.return'}}
spyre.kernel @empty(%a: !spyre.buffer<4xf32>) {
}

// -----

spyre.kernel @attention_rank(%q: !spyre.buffer<16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{query must have rank 3 (heads x length x head size), or be 1-D with a layout, not rank 2}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_layout_rank(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{query_layout needs a 1-D query (the view's span), not '!spyre.buffer<8x16x64xf16>'}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0 {query_layout = array<i64: 8, 16, 64, 64, 1536>}
  spyre.return
}

// -----

spyre.kernel @attention_layout_size(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<4096xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{key_layout must be [heads, length, head size, head stride, row stride] or [..., heads per batch, batch stride], none negative}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<4096xf16>, !spyre.buffer<4096xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0 {key_layout = array<i64: 2, 32, 64>}
  spyre.return
}

// -----

spyre.kernel @attention_layout_span(%q: !spyre.buffer<23000xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{query_layout spans 23552 elements, more than the 23000 of its buffer}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<23000xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0 {query_layout = array<i64: 8, 16, 64, 64, 1536>}
  spyre.return
}

// -----

// Sizes near 2^63 (a fuzzed input): refused, not wrapped into a small span.
spyre.kernel @attention_layout_huge(%q: !spyre.buffer<23000xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{query_layout spans or holds 2^63 elements or more}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<23000xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0 {query_layout = array<i64: 9223372036854775807, 16, 64, 64, 1536>}
  spyre.return
}

// -----

spyre.kernel @attention_layout_batches(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<4096xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{key_layout's heads per batch (3) must divide its heads (2)}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<4096xf16>, !spyre.buffer<4096xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0 {key_layout = array<i64: 2, 32, 64, 64, 128, 3, 2048>}
  spyre.return
}

// -----

spyre.kernel @attention_layout_shape(%q: !spyre.buffer<23552xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{query and key head sizes differ: 32 vs 64}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<23552xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0 {query_layout = array<i64: 8, 16, 32, 64, 1536>}
  spyre.return
}

// -----

spyre.kernel @attention_heads(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<3x32x64xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{key/value heads (3) must divide query heads (8)}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<3x32x64xf16>, !spyre.buffer<3x32x64xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_head_size(%q: !spyre.buffer<8x16x32xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{query and key head sizes differ: 32 vs 64}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x32xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_types(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf32>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{query and operand element types differ: 'f16' vs 'f32'}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf32>, !spyre.buffer<2x32x64xf32>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_mask_rows(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %m: !spyre.buffer<1x4x32xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{mask rows (4) must be 1 or the query length (16)}}
  spyre.attention ins(%q, %k, %k, %m : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<1x4x32xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_mask_batch(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %m: !spyre.buffer<3x16x32xf16>, %o: !spyre.buffer<8x16x64xf16>) {
  // expected-error @+1 {{mask batch (3) must divide query heads (8)}}
  spyre.attention ins(%q, %k, %k, %m : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<3x16x32xf16>) outs(%o : !spyre.buffer<8x16x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_target(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8x8x64xf16>) {
  // expected-error @+1 {{target (8x8x64) must be heads x query length x value head size (8x16x64)}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8x8x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_target_heads(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<2x16x3x64xf16>) {
  // expected-error @+1 {{a rank-4 target (2x16x3x64) must be batch x query length x heads per batch x value head size, with batch x heads per batch = 8 heads, query length 16, value head size 64}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<2x16x3x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_target_length(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<2x8x4x64xf16>) {
  // expected-error @+1 {{a rank-4 target (2x8x4x64) must be batch x query length x heads per batch x value head size}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<2x8x4x64xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @attention_target_rank(%q: !spyre.buffer<8x16x64xf16>, %k: !spyre.buffer<2x32x64xf16>, %o: !spyre.buffer<8192xf16>) {
  // expected-error @+1 {{target must have rank 3 (heads x length x head size) or 4 (batch x length x heads per batch x head size), not 1}}
  spyre.attention ins(%q, %k, %k : !spyre.buffer<8x16x64xf16>, !spyre.buffer<2x32x64xf16>, !spyre.buffer<2x32x64xf16>) outs(%o : !spyre.buffer<8192xf16>) scale = 1.0
  spyre.return
}

// -----

spyre.kernel @conv_rank(%x: !spyre.buffer<8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{input must have rank 4, not 3}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_channels(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x6x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{weight's input channels (6) must be the input's (8)}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x6x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_height(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x10x8xf16>) {
  // expected-error @+1 {{target height must be 8, not 10}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x10x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_too_large(%x: !spyre.buffer<1x8x4x4xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x1x1xf16>) {
  // expected-error @+1 {{the kernel (3 taps, dilation 3) is larger than the padded input (4)}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x4x4xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x1x1xf16>) padding = [0, 0] dilation = [3, 1]
  spyre.return
}

// -----

spyre.kernel @conv_padding(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{padding must not be negative, not -1}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [-1, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_stride(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{stride must be at least 1, not 0}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) stride = [0, 1] padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_stride_rank(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{stride and dilation must have two values (rows, columns), padding two (rows, columns) or four (before them, then after)}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) stride = [2] padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_strided_height(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x5x4xf16>) {
  // expected-error @+1 {{target height must be 4, not 5}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x5x4xf16>) stride = [2, 2] padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_dilation(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{dilation must be at least 1, not 0}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 0]
  spyre.return
}

// -----

spyre.kernel @conv_pairs(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{stride and dilation must have two values (rows, columns), padding two (rows, columns) or four (before them, then after)}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_padding_three(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{padding two (rows, columns) or four (before them, then after)}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0, 1] dilation = [1, 1]
  spyre.return
}

// -----

// One more column after than before: 10 + 0 + 1 - 2 = 9 columns.
spyre.kernel @conv_padding_after(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{target width must be 9, not 8}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0, 0, 1] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_padding_negative(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{padding must not be negative, not -1}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0, 0, -1] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_bias(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %b: !spyre.buffer<8xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{bias must have one value per output channel (4), not '!spyre.buffer<8xf16>'}}
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>, !spyre.buffer<8xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_scale(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %s: !spyre.buffer<4x1xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{scale must have one value per output channel (4), not '!spyre.buffer<4x1xf16>'}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) scale(%s : !spyre.buffer<4x1xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_scale_type(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %s: !spyre.buffer<4xi32>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{scale must hold the input's element type ('f16') or f32, not 'i32'}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) scale(%s : !spyre.buffer<4xi32>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_types(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf32>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{input and operand element types differ: 'f16' vs 'f32'}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf32>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_residual(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %r: !spyre.buffer<1x4x8x1xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{residual must be shaped as the target ('!spyre.buffer<1x4x8x8xf16>'), not '!spyre.buffer<1x4x8x1xf16>'}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) residual(%r : !spyre.buffer<1x4x8x1xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// -----

spyre.kernel @conv_groups_divide(%x: !spyre.buffer<1x6x10x10xf16>, %w: !spyre.buffer<4x2x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{the output channels (4) must divide into 3 groups}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x6x10x10xf16>, !spyre.buffer<4x2x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1] groups = 3
  spyre.return
}

// -----

spyre.kernel @conv_groups_weight(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{weight's input channels (8) must be the input's per group (4)}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1] groups = 2
  spyre.return
}

// -----

spyre.kernel @conv_groups_zero(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{groups must be at least 1, not 0}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1] groups = 0
  spyre.return
}

// -----

spyre.kernel @conv2d_relu_max_without_relu(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{relu_max needs relu}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1] relu_max = 6.0
  spyre.return
}

// -----

spyre.kernel @conv2d_relu_max_not_positive(%x: !spyre.buffer<1x8x10x10xf16>, %w: !spyre.buffer<4x8x3x3xf16>, %y: !spyre.buffer<1x4x8x8xf16>) {
  // expected-error @+1 {{relu_max must be positive and finite}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x8x10x10xf16>, !spyre.buffer<4x8x3x3xf16>) outs(%y : !spyre.buffer<1x4x8x8xf16>) padding = [0, 0] dilation = [1, 1] relu relu_max = -1.0
  spyre.return
}
