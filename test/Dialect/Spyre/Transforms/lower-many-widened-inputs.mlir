// RUN: spyre-opt %s --spyre-compile=cores=1 | FileCheck %s

// Thirty-two widened inputs: the body plan's value table grows (rehashes)
// while widened arguments are entered as aliases of their inputs. The alias
// once copied its source entry through a reference that the growth freed,
// so which input an add read depended on heap addresses (a max-pool window
// read the wrong tap about once in forty compiles). Each add must read the
// column loaded for its own input (the LX offset its DMA wrote; offset 0 is
// not printed). Each input reads a column of the 64 x 32 matrix, elements 32
// apart: its DMA moves the run over the gaps, which the add steps over. Under the
// sanitizer run of this suite the old code fails on every compile.
// CHECK-LABEL: spyre.hw.program @many_widened_inputs
// CHECK: spyre.hw.dma #spyre.ref<lx, dl16, [[IN0:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN1:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 2>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN2:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 4>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN3:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 6>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN4:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 8>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN5:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 10>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN6:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 12>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN7:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 14>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN8:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 16>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN9:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 18>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN10:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 20>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN11:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 22>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN12:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 24>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN13:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 26>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN14:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 28>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN15:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 30>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN16:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 32>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN17:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 34>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN18:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 36>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN19:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 38>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN20:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 40>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN21:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 42>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN22:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 44>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN23:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 46>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN24:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 48>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN25:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 50>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN26:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 52>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN27:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 54>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN28:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 56>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN29:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 58>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN30:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 60>
// CHECK-NEXT: spyre.hw.dma #spyre.ref<lx, dl16, [[IN31:(offset = [0-9]+, )?]]{{.*}}>, #spyre.ref<@arg0, dl16, offset = 62>
// CHECK: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN0]]{{.*}}>, #spyre.ref<lx, dl16, [[IN1]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN2]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN3]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN4]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN5]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN6]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN7]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN8]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN9]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN10]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN11]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN12]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN13]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN14]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN15]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN16]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN17]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN18]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN19]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN20]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN21]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN22]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN23]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN24]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN25]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN26]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN27]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN28]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN29]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN30]]
// CHECK-NEXT: spyre.hw.binary "add" {{.*}}, #spyre.ref<lx, dl16, [[IN31]]
spyre.kernel @many_widened_inputs(%x: !spyre.buffer<64x32xf16>, %y: !spyre.buffer<64xf16>) {
  spyre.generic domain [64] {indexing_maps = [
      affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0, 1)>, affine_map<(d0) -> (d0, 2)>, affine_map<(d0) -> (d0, 3)>,
      affine_map<(d0) -> (d0, 4)>, affine_map<(d0) -> (d0, 5)>, affine_map<(d0) -> (d0, 6)>, affine_map<(d0) -> (d0, 7)>,
      affine_map<(d0) -> (d0, 8)>, affine_map<(d0) -> (d0, 9)>, affine_map<(d0) -> (d0, 10)>, affine_map<(d0) -> (d0, 11)>,
      affine_map<(d0) -> (d0, 12)>, affine_map<(d0) -> (d0, 13)>, affine_map<(d0) -> (d0, 14)>, affine_map<(d0) -> (d0, 15)>,
      affine_map<(d0) -> (d0, 16)>, affine_map<(d0) -> (d0, 17)>, affine_map<(d0) -> (d0, 18)>, affine_map<(d0) -> (d0, 19)>,
      affine_map<(d0) -> (d0, 20)>, affine_map<(d0) -> (d0, 21)>, affine_map<(d0) -> (d0, 22)>, affine_map<(d0) -> (d0, 23)>,
      affine_map<(d0) -> (d0, 24)>, affine_map<(d0) -> (d0, 25)>, affine_map<(d0) -> (d0, 26)>, affine_map<(d0) -> (d0, 27)>,
      affine_map<(d0) -> (d0, 28)>, affine_map<(d0) -> (d0, 29)>, affine_map<(d0) -> (d0, 30)>, affine_map<(d0) -> (d0, 31)>,
      affine_map<(d0) -> (d0)>],
      iterator_types = [#spyre.iterator<parallel>]}
      ins(%x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x : !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>, !spyre.buffer<64x32xf16>) outs(%y : !spyre.buffer<64xf16>) {
  ^bb0(%v0: f16, %v1: f16, %v2: f16, %v3: f16, %v4: f16, %v5: f16, %v6: f16, %v7: f16, %v8: f16, %v9: f16, %v10: f16, %v11: f16, %v12: f16, %v13: f16, %v14: f16, %v15: f16, %v16: f16, %v17: f16, %v18: f16, %v19: f16, %v20: f16, %v21: f16, %v22: f16, %v23: f16, %v24: f16, %v25: f16, %v26: f16, %v27: f16, %v28: f16, %v29: f16, %v30: f16, %v31: f16):
    %w0 = arith.extf %v0 : f16 to f32
    %w1 = arith.extf %v1 : f16 to f32
    %w2 = arith.extf %v2 : f16 to f32
    %w3 = arith.extf %v3 : f16 to f32
    %w4 = arith.extf %v4 : f16 to f32
    %w5 = arith.extf %v5 : f16 to f32
    %w6 = arith.extf %v6 : f16 to f32
    %w7 = arith.extf %v7 : f16 to f32
    %w8 = arith.extf %v8 : f16 to f32
    %w9 = arith.extf %v9 : f16 to f32
    %w10 = arith.extf %v10 : f16 to f32
    %w11 = arith.extf %v11 : f16 to f32
    %w12 = arith.extf %v12 : f16 to f32
    %w13 = arith.extf %v13 : f16 to f32
    %w14 = arith.extf %v14 : f16 to f32
    %w15 = arith.extf %v15 : f16 to f32
    %w16 = arith.extf %v16 : f16 to f32
    %w17 = arith.extf %v17 : f16 to f32
    %w18 = arith.extf %v18 : f16 to f32
    %w19 = arith.extf %v19 : f16 to f32
    %w20 = arith.extf %v20 : f16 to f32
    %w21 = arith.extf %v21 : f16 to f32
    %w22 = arith.extf %v22 : f16 to f32
    %w23 = arith.extf %v23 : f16 to f32
    %w24 = arith.extf %v24 : f16 to f32
    %w25 = arith.extf %v25 : f16 to f32
    %w26 = arith.extf %v26 : f16 to f32
    %w27 = arith.extf %v27 : f16 to f32
    %w28 = arith.extf %v28 : f16 to f32
    %w29 = arith.extf %v29 : f16 to f32
    %w30 = arith.extf %v30 : f16 to f32
    %w31 = arith.extf %v31 : f16 to f32
    %s1 = arith.addf %w0, %w1 : f32
    %s2 = arith.addf %s1, %w2 : f32
    %s3 = arith.addf %s2, %w3 : f32
    %s4 = arith.addf %s3, %w4 : f32
    %s5 = arith.addf %s4, %w5 : f32
    %s6 = arith.addf %s5, %w6 : f32
    %s7 = arith.addf %s6, %w7 : f32
    %s8 = arith.addf %s7, %w8 : f32
    %s9 = arith.addf %s8, %w9 : f32
    %s10 = arith.addf %s9, %w10 : f32
    %s11 = arith.addf %s10, %w11 : f32
    %s12 = arith.addf %s11, %w12 : f32
    %s13 = arith.addf %s12, %w13 : f32
    %s14 = arith.addf %s13, %w14 : f32
    %s15 = arith.addf %s14, %w15 : f32
    %s16 = arith.addf %s15, %w16 : f32
    %s17 = arith.addf %s16, %w17 : f32
    %s18 = arith.addf %s17, %w18 : f32
    %s19 = arith.addf %s18, %w19 : f32
    %s20 = arith.addf %s19, %w20 : f32
    %s21 = arith.addf %s20, %w21 : f32
    %s22 = arith.addf %s21, %w22 : f32
    %s23 = arith.addf %s22, %w23 : f32
    %s24 = arith.addf %s23, %w24 : f32
    %s25 = arith.addf %s24, %w25 : f32
    %s26 = arith.addf %s25, %w26 : f32
    %s27 = arith.addf %s26, %w27 : f32
    %s28 = arith.addf %s27, %w28 : f32
    %s29 = arith.addf %s28, %w29 : f32
    %s30 = arith.addf %s29, %w30 : f32
    %s31 = arith.addf %s30, %w31 : f32
    %n = arith.truncf %s31 : f32 to f16
    spyre.yield %n : f16
  }
  spyre.return
}
