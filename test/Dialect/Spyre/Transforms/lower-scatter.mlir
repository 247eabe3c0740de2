// RUN: spyre-opt %s -split-input-file -spyre-lower-to-hw | FileCheck %s
// RUN: spyre-opt %s -split-input-file -spyre-lower-to-hw | FileCheck %s --check-prefix=UNIQUE
// RUN: spyre-opt %s -split-input-file -spyre-lower-to-hw -spyre-check-hw -o /dev/null
// RUN: sed -e 's/, spyre.cores[^}]*}/}/' -e 's/{spyre.cores[^}]*}//' %s | spyre-opt -split-input-file -spyre-compile | FileCheck %s --check-prefix=AUTO

// A key cache of 3 heads x 16 positions x 64 written at 5 positions: one
// head per unit of work, one unit on core 0 and two on core 1. A unit's
// positions stay on its core, in order (chunks of 2: [0, 2), [2, 4), [4,
// 5)), so that of two equal positions the later row is written last. Each
// step loads its chunk of positions and of rows, double buffered, and the
// DMA engine writes the rows at the positions, after the step's loads; the
// table is read and written (inout): rows no position names keep their
// values.
// CHECK-LABEL: spyre.hw.program @cache_write num_cores = 2
// CHECK: spyre.hw.buffer @cache inout
// CHECK: spyre.hw.core 0 {
// CHECK: spyre.hw.dma #spyre.ref<lx, i32, offset = 4096>, #spyre.ref<@pos, i32> row 8 x [1, 1, 1]
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, offset = 4352>, #spyre.ref<@keys, dl16> row 256 x [1, 1, 1]
// CHECK: spyre.hw.scatter #spyre.ref<@cache, dl16, strides = [128, 0, 0]>[#spyre.ref<lx, i32, offset = 4096>], #spyre.ref<lx, dl16, offset = 4352, strides = [128, 0, 0]> row 128 x 2 of 16 {signal_sem = 1 : i64, wait_count = 2 : i64, wait_sem = 0 : i64}
// CHECK: spyre.hw.scatter #spyre.ref<@cache, dl16, strides = [128, 0, 0]>[#spyre.ref<lx, i32, offset = 4104>], {{.*}} row 128 x 2 of 16
// CHECK: spyre.hw.scatter #spyre.ref<@cache, dl16, strides = [128, 0, 0]>[{{.*}} row 128 x 1 of 16
// CHECK: spyre.hw.core 1 {
// The second head: its positions' rows 5 x 128 bytes on, its table 2048.
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, offset = 4352>, #spyre.ref<@keys, dl16, offset = 640> row 256 x [1, 1, 1]
// CHECK: spyre.hw.scatter #spyre.ref<@cache, dl16, offset = 2048, strides = [128, 0, 0]>
// CHECK: spyre.hw.scatter #spyre.ref<@cache, dl16, offset = 2048, strides = [128, 0, 0]>
// CHECK: spyre.hw.scatter #spyre.ref<@cache, dl16, offset = 2048, strides = [128, 0, 0]>{{.*}} row 128 x 1 of 16
// CHECK: spyre.hw.scatter #spyre.ref<@cache, dl16, offset = 4096, strides = [128, 0, 0]>
// CHECK-NOT: spyre.hw.core 2
// CHECK: // -----

// Scheduled by the pipeline (the schedules given here deleted): one head
// per core, all 5 positions in one step.
// AUTO-LABEL: spyre.hw.program @cache_write num_cores = 3
// AUTO-COUNT-3: spyre.hw.scatter {{.*}} row 128 x 5 of 16
spyre.kernel @cache_write(%keys: !spyre.buffer<3x5x64xf16> {spyre.name = "keys"},
                          %pos: !spyre.buffer<5xi32> {spyre.name = "pos"},
                          %cache: !spyre.buffer<3x16x64xf16> {spyre.name = "cache"}) {
  spyre.scatter ins(%keys, %pos : !spyre.buffer<3x5x64xf16>, !spyre.buffer<5xi32>)
                outs(%cache : !spyre.buffer<3x16x64xf16>) axis = 1
                {spyre.cores = 2 : i64, spyre.tile = array<i64: 2, 64>, spyre.lx = array<i64: 4096, 4352>}
  spyre.return
}

// -----

// The keys as a projection holds them, [positions, heads, dim]
// (source_axis = 0): a head's rows are 3 x 128 bytes apart. Positions that
// do not repeat (unique_indices) are chunks of their own, shared among
// cores: 3 heads x 3 chunks of 2, 9 units on 6 cores, where without them a
// core would write a head's 6 rows.
// UNIQUE-LABEL: spyre.hw.program @prompt_write num_cores = 6
// UNIQUE: spyre.hw.core 0 {
// UNIQUE: spyre.hw.dma #spyre.ref<lx, i32{{.*}}>, #spyre.ref<@pos, i32> row 8 x [1, 1, 1]
// UNIQUE-NEXT: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@keys, dl16, strides = [384, 0, 0]> row 128 x [2, 1, 1]
// UNIQUE-NEXT: spyre.hw.scatter #spyre.ref<@cache, dl16, strides = [128, 0, 0]>{{.*}} row 128 x 2 of 16
// UNIQUE: spyre.hw.core 1 {
// UNIQUE: spyre.hw.dma #spyre.ref<lx, i32{{.*}}>, #spyre.ref<@pos, i32, offset = 8> row 8 x [1, 1, 1]
// UNIQUE-NEXT: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@keys, dl16, offset = 768, strides = [384, 0, 0]> row 128 x [2, 1, 1]
// UNIQUE: spyre.hw.core 2 {
// The second head: 128 bytes on in each position's row of the keys.
// UNIQUE: spyre.hw.dma #spyre.ref<lx, dl16{{.*}}>, #spyre.ref<@keys, dl16, offset = 128, strides = [384, 0, 0]> row 128 x [2, 1, 1]
// UNIQUE-NEXT: spyre.hw.scatter #spyre.ref<@cache, dl16, offset = 2048, strides = [128, 0, 0]>
// UNIQUE-NOT: spyre.hw.core 6
// Scheduled by the pipeline: 3 heads x 6 unique positions on 18 cores.
// AUTO-LABEL: spyre.hw.program @prompt_write num_cores = 18
spyre.kernel @prompt_write(%keys: !spyre.buffer<6x3x64xf16> {spyre.name = "keys"},
                           %pos: !spyre.buffer<6xi32> {spyre.name = "pos"},
                           %cache: !spyre.buffer<3x16x64xf16> {spyre.name = "cache"}) {
  spyre.scatter ins(%keys, %pos : !spyre.buffer<6x3x64xf16>, !spyre.buffer<6xi32>)
                outs(%cache : !spyre.buffer<3x16x64xf16>) axis = 1
                {source_axis = 0 : i64, unique_indices, spyre.cores = 6 : i64, spyre.tile = array<i64: 2, 64>, spyre.lx = array<i64: 512, 0>}
  spyre.return
}
