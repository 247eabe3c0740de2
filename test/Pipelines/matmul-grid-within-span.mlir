// A card whose cores may address only 2 MiB of a tensor each:
// RUN: sed -e 's/^per_core_span_bytes = .*/per_core_span_bytes = 2097152/' %S/../../lib/Arch/spyre_card.toml > %t.toml
// RUN: spyre-opt %s -split-input-file -spyre-attach-arch="arch=%t.toml" --spyre-compile -verify-diagnostics | FileCheck %s

// Three batches of 2 MB outputs: the fastest grid gave a core two batches
// (2.2 MB of @arg0, refused); the grid is now the fastest of those whose
// cores stay within the span (a batch each). With the published 256 MiB span this
// is Qwen2-MoE's 60 experts' 692 MB of weights.
// CHECK: spyre.hw.program @experts num_cores = 32
spyre.kernel @experts(%a: !spyre.buffer<3x1024x512xf16>, %b: !spyre.buffer<3x1024x512xf16>, %c: !spyre.buffer<3x1024x1024xf16>) {
  spyre.batch_matmul transpose_rhs ins(%a, %b : !spyre.buffer<3x1024x512xf16>, !spyre.buffer<3x1024x512xf16>) outs(%c : !spyre.buffer<3x1024x1024xf16>)
  spyre.return
}

// -----

// No grid of 32 cores keeps within 2 MiB: 512 output rows of 2816 columns
// need two grid rows per batch and 11.5 MB of weights per batch six grid
// columns, 36 cores. The lowering says so.
// expected-error @+1 {{more than the per-core span of 2097152 bytes}}
spyre.kernel @too_wide(%a: !spyre.buffer<3x512x2048xf16>, %b: !spyre.buffer<3x2816x2048xf16>, %c: !spyre.buffer<3x512x2816xf16>) {
  spyre.batch_matmul transpose_rhs ins(%a, %b : !spyre.buffer<3x512x2048xf16>, !spyre.buffer<3x2816x2048xf16>) outs(%c : !spyre.buffer<3x512x2816xf16>)
  spyre.return
}
