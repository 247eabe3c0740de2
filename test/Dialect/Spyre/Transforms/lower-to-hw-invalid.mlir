// RUN: spyre-opt %s -split-input-file -spyre-lower-to-hw -verify-diagnostics
// A card whose cores may address only 1 KiB of a tensor each:
// RUN: sed -e 's/^per_core_span_bytes = .*/per_core_span_bytes = 1024/' %S/../../../../lib/Arch/spyre_card.toml > %t.toml
// RUN: not spyre-opt %s -split-input-file -spyre-attach-arch="arch=%t.toml" -spyre-lower-to-hw 2>&1 | FileCheck %s --check-prefix=SPAN
// SPAN: core 0 would address 2048 bytes of buffer @arg0, more than the per-core span of 1024 bytes

#id = affine_map<(d0) -> (d0)>
spyre.kernel @unscheduled(%x: !spyre.buffer<512xf32>, %y: !spyre.buffer<512xf32>) {
  // expected-error @+1 {{is not scheduled: it needs spyre.cores, spyre.tile and spyre.lx}}
  spyre.generic domain [512] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>]}
      ins(%x : !spyre.buffer<512xf32>) outs(%y : !spyre.buffer<512xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

#id = affine_map<(d0) -> (d0)>
spyre.kernel @span(%x: !spyre.buffer<512xf32>, %y: !spyre.buffer<512xf32>) {
  spyre.generic domain [512] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>],
      spyre.cores = 1 : i64, spyre.tile = array<i64: 512>, spyre.lx = array<i64: 0, 4096>}
      ins(%x : !spyre.buffer<512xf32>) outs(%y : !spyre.buffer<512xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

// expected-error @+1 {{argument 2 is a dynamic size; the hardware level needs static shapes}}
spyre.kernel @dynamic(%x: !spyre.buffer<?xf32>, %y: !spyre.buffer<?xf32>, %n: index) {
  spyre.return
}

// -----

spyre.kernel @movement(%x: !spyre.buffer<8xf32>, %y: !spyre.buffer<8xf32>) {
  // expected-error @+1 {{'spyre.copy' must be rewritten as spyre.generic (spyre-generalize) first}}
  spyre.copy ins(%x : !spyre.buffer<8xf32>) outs(%y : !spyre.buffer<8xf32>)
  spyre.return
}

// -----

#id = affine_map<(d0) -> (d0)>
spyre.kernel @too_many_cores(%x: !spyre.buffer<512xf32>, %y: !spyre.buffer<512xf32>) {
  // expected-error @+1 {{spyre.cores = 33 is not in [1, 32]}}
  spyre.generic domain [512] {indexing_maps = [#id, #id], iterator_types = [#spyre.iterator<parallel>],
      spyre.cores = 33 : i64, spyre.tile = array<i64: 16>, spyre.lx = array<i64: 0, 128>}
      ins(%x : !spyre.buffer<512xf32>) outs(%y : !spyre.buffer<512xf32>) {
  ^bb0(%v: f32):
    spyre.yield %v : f32
  }
  spyre.return
}

// -----

// One tap of stride 1 has nothing to gather.
spyre.kernel @conv_gather_one_tap(%x: !spyre.buffer<1x2x4x4xf16>, %w: !spyre.buffer<3x2x1x1xf16>, %y: !spyre.buffer<1x3x4x4xf16>) {
  // expected-error @+1 {{spyre.tile of this convolution is [output rows of a band in [1, 4], output channels of a chunk in [1, 3], one of 0 (0: a product per tap; 1: the taps gathered, copied out of the weights; 2: gathered in the weights' own order; 3: as 1, in one product that writes the result)]}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x2x4x4xf16>, !spyre.buffer<3x2x1x1xf16>) outs(%y : !spyre.buffer<1x3x4x4xf16>) padding = [0, 0] dilation = [1, 1]
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 3, 1>, spyre.lx = array<i64: 0, 128, 256, 384, 512, 640, 768>}
  spyre.return
}

// -----

// A strided convolution's taps are no shifted views of the rows: they are
// always gathered.
spyre.kernel @conv_strided_per_tap(%x: !spyre.buffer<1x2x8x8xf16>, %w: !spyre.buffer<3x2x3x3xf16>, %y: !spyre.buffer<1x3x4x4xf16>) {
  // expected-error @+1 {{spyre.tile of this convolution is [output rows of a band in [1, 4], output channels of a chunk in [1, 3], one of 1, 2, 3 (0: a product per tap; 1: the taps gathered, copied out of the weights; 2: gathered in the weights' own order; 3: as 1, in one product that writes the result)]}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x2x8x8xf16>, !spyre.buffer<3x2x3x3xf16>) outs(%y : !spyre.buffer<1x3x4x4xf16>) stride = [2, 2] padding = [1, 1] dilation = [1, 1]
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 3, 0>, spyre.lx = array<i64: 0, 128, 256, 384, 512, 640, 768>}
  spyre.return
}

// -----

// Grouped weights are built in LX: no product reads them as loaded.
spyre.kernel @conv_grouped_natural(%x: !spyre.buffer<1x4x4x4xf16>, %w: !spyre.buffer<4x2x3x3xf16>, %y: !spyre.buffer<1x4x4x4xf16>) {
  // expected-error @+1 {{spyre.tile of this convolution is [output rows of a band in [1, 4], output channels of a chunk in [1, 4] that is a multiple of 2 (whole groups) and divides 4 or divides 2, one of 0, 1, 3 (0: a product per tap; 1: the taps gathered, copied out of the weights; 2: gathered in the weights' own order; 3: as 1, in one product that writes the result)]}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x4x4x4xf16>, !spyre.buffer<4x2x3x3xf16>) outs(%y : !spyre.buffer<1x4x4x4xf16>) padding = [1, 1] dilation = [1, 1] groups = 2
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 4, 2>, spyre.lx = array<i64: 0, 128, 256, 384, 512, 640, 768>}
  spyre.return
}

// -----

// A grouped convolution's chunk reads its groups' input channels: a chunk
// of 3 output channels would split the second group of 2.
spyre.kernel @conv_grouped_split_group(%x: !spyre.buffer<1x4x4x4xf16>, %w: !spyre.buffer<4x2x3x3xf16>, %y: !spyre.buffer<1x4x4x4xf16>) {
  // expected-error @+1 {{output channels of a chunk in [1, 4] that is a multiple of 2 (whole groups) and divides 4 or divides 2}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x4x4x4xf16>, !spyre.buffer<4x2x3x3xf16>) outs(%y : !spyre.buffer<1x4x4x4xf16>) padding = [1, 1] dilation = [1, 1] groups = 2
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 3, 1>, spyre.lx = array<i64: 0, 128, 256, 384, 512, 640, 768>}
  spyre.return
}

// -----

// A product that writes the result leaves no room for a ReLU after it.
spyre.kernel @conv_writes_before_relu(%x: !spyre.buffer<1x4x4x4xf16>, %w: !spyre.buffer<4x1x3x3xf16>, %y: !spyre.buffer<1x4x4x4xf16>) {
  // expected-error @+1 {{one of 0, 1 (0: a product per tap}}
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x4x4x4xf16>, !spyre.buffer<4x1x3x3xf16>) outs(%y : !spyre.buffer<1x4x4x4xf16>) padding = [1, 1] dilation = [1, 1] groups = 4 relu
      {spyre.cores = 1 : i64, spyre.tile = array<i64: 4, 2, 3>, spyre.lx = array<i64: 0, 128, 256, 384, 512, 640, 768>}
  spyre.return
}
