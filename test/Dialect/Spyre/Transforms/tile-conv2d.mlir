// RUN: spyre-opt %s --pass-pipeline='builtin.module(spyre-compile{stop-after=tile})' | FileCheck %s

// A ViT patch embedding (16 x 16 patches of a 224 x 224 image, 384
// channels): 14 output rows. In chunks of 96 channels its 28 units (bands
// of 2 rows x 4 chunks) keep 28 cores busy, and the cores that start the
// same chunk at the same step load its weights in the same cycle, which
// the card reads once: 28.3 us simulated. The estimate used to charge every
// core's weights to the bus (27.5k cycles of it where the card moves 3.9k)
// and kept all 384 channels in one chunk: 7 units, 43.8 us.
// CHECK-LABEL: spyre.kernel @patch_embedding
// CHECK: spyre.conv2d
// CHECK-SAME: spyre.tile = array<i64: 2, 96, 2>
spyre.kernel @patch_embedding(%x: !spyre.buffer<1x3x224x224xf16>, %w: !spyre.buffer<384x3x16x16xf16>, %b: !spyre.buffer<384xf16>, %y: !spyre.buffer<1x384x14x14xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x3x224x224xf16>, !spyre.buffer<384x3x16x16xf16>, !spyre.buffer<384xf16>) outs(%y : !spyre.buffer<1x384x14x14xf16>) stride = [16, 16] padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// A ResNet downsampling shortcut (1 x 1, stride 2, 256 -> 512 channels on
// 56 x 56): chunks of 64 channels whose weights the cores of a step share,
// 36.9 us; it ran all 512 channels in one chunk (bands of 4 rows, 48.0 us).
// CHECK-LABEL: spyre.kernel @shortcut
// CHECK: spyre.conv2d
// CHECK-SAME: spyre.tile = array<i64: 4, 64, 3>
spyre.kernel @shortcut(%x: !spyre.buffer<1x256x56x56xf16>, %w: !spyre.buffer<512x256x1x1xf16>, %y: !spyre.buffer<1x512x28x28xf16>) {
  spyre.conv2d ins(%x, %w : !spyre.buffer<1x256x56x56xf16>, !spyre.buffer<512x256x1x1xf16>) outs(%y : !spyre.buffer<1x512x28x28xf16>) stride = [2, 2] padding = [0, 0] dilation = [1, 1]
  spyre.return
}

// MobileNetV2's 1 x 1 expansion to 144 channels: chunks of 16 channels,
// which divide them, in bands of 8 rows (13.2 us simulated). Halving 144
// down to the PT's rows offered only 144, 72, 36, 18 and 9 channels, and
// the estimate's best of those, 9 channels in bands of 14 rows, ran 19.7 us
// (with a folded BatchNorm's scale, 21.0 -> 14.6).
// CHECK-LABEL: spyre.kernel @expansion
// CHECK: spyre.conv2d
// CHECK-SAME: spyre.tile = array<i64: 8, 16, 0>
spyre.kernel @expansion(%x: !spyre.buffer<1x24x56x56xf16>, %w: !spyre.buffer<144x24x1x1xf16>, %b: !spyre.buffer<144xf32>, %y: !spyre.buffer<1x144x56x56xf16>) {
  spyre.conv2d ins(%x, %w, %b : !spyre.buffer<1x24x56x56xf16>, !spyre.buffer<144x24x1x1xf16>, !spyre.buffer<144xf32>) outs(%y : !spyre.buffer<1x144x56x56xf16>) stride = [1, 1] padding = [0, 0] dilation = [1, 1]
  spyre.return
}
