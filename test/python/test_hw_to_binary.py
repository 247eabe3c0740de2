"""Hardware-level IR -> spyre-translate -> binary -> simulator, against numpy."""

import subprocess

import numpy as np

from spyre_mlir import simulator as sim

# exp(x) * 2 over a 64 x 64 f16 input, 16 rows at a time in a hardware loop,
# with the DMA of row block i+1 overlapping the SFU work on block i: the
# loads signal semaphore 0, the SFU waits for load i (wait_count = 1 + iv).
PROGRAM = """
spyre.hw.program @exp2x num_cores = 1 {
  spyre.hw.buffer @x input : !spyre.buffer<64x64xf16>
  spyre.hw.buffer @y output : !spyre.buffer<64x64xf32>
  spyre.hw.core 0 {
    spyre.hw.kernel 1
    spyre.hw.loop 4 {
      spyre.hw.dma #spyre.ref<lx, dl16, inc = [2048, 0, 0]>, #spyre.ref<@x, dl16, inc = [2048, 0, 0]> row 2048 x [1, 1, 1] {signal_sem = 0 : i64}
    }
    spyre.hw.loop 4 {
      spyre.hw.unary "exp" #spyre.ref<lx, f32, offset = 8192, strides = [256, 4, 0], inc = [4096, 0, 0]>, #spyre.ref<lx, dl16, strides = [128, 2, 0], inc = [2048, 0, 0]> [16 x 64] {wait_sem = 0 : i64, wait_count = 1 : i64, wait_inc = array<i64: 1>, signal_sem = 1 : i64}
      spyre.hw.binary "mul" #spyre.ref<lx, f32, offset = 8192, strides = [256, 4, 0], inc = [4096, 0, 0]>, #spyre.ref<lx, f32, offset = 8192, strides = [256, 4, 0], inc = [4096, 0, 0]> imm 2.0 [16 x 64] {signal_sem = 2 : i64}
    }
    spyre.hw.dma #spyre.ref<@y, f32>, #spyre.ref<lx, f32, offset = 8192> row 16384 x [1, 1, 1] {wait_sem = 2 : i64, wait_count = 4 : i64}
  }
}
"""


def test_hand_written_hardware_program_runs(spyre_translate, tmp_path):
    source = tmp_path / "exp2x.mlir"
    source.write_text(PROGRAM)
    binary = tmp_path / "exp2x.spyre"
    subprocess.run([spyre_translate, "--spyre-hw-to-binary", str(source), "-o", str(binary)],
                   check=True, capture_output=True)
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float16)
    result = sim.run(binary.read_bytes(), {"x": x})
    r = sim.dl16()
    expected = np.exp(r.round(x.astype(np.float32))) * 2
    np.testing.assert_allclose(result.outputs["y"], expected, rtol=1e-6)
    kernel = result.stats["kernels"][1]
    assert kernel["vector_ops"] == 2 * 64 * 64
    # Loads overlap compute: the run is shorter than its engines' busy time.
    engines = result.stats["cores"][0]["engines"]
    assert result.cycles < engines["dma"]["busy_cycles"] + engines["sfu"]["busy_cycles"]


def test_invalid_program_is_a_diagnostic(spyre_translate, tmp_path):
    source = tmp_path / "bad.mlir"
    source.write_text(PROGRAM.replace("spyre.hw.loop 4 {\n      spyre.hw.dma", "spyre.hw.loop 5 {\n      spyre.hw.dma"))
    out = subprocess.run([spyre_translate, "--spyre-hw-to-binary", str(source), "-o",
                          str(tmp_path / "bad.spyre")], capture_output=True, text=True)
    assert out.returncode == 1
    assert "is not a valid program" in out.stderr and "of buffer 'x'" in out.stderr


def test_in_process_translation_matches_the_tool(spyre_translate, tmp_path):
    from spyre_mlir import ir
    from spyre_mlir.dialects import spyre

    source = tmp_path / "exp2x.mlir"
    source.write_text(PROGRAM)
    tool = subprocess.run([spyre_translate, "--spyre-hw-to-binary", str(source)],
                          check=True, capture_output=True).stdout
    with ir.Context():
        module = ir.Module.parse(PROGRAM)
        assert spyre.program_binary(module) == tool
        bad = ir.Module.parse(PROGRAM.replace("spyre.hw.loop 4 {\n      spyre.hw.dma",
                                              "spyre.hw.loop 5 {\n      spyre.hw.dma"))
        try:
            spyre.program_binary(bad)
        except ValueError as e:
            assert "is not a valid program" in str(e) and "of buffer 'x'" in str(e)
        else:
            raise AssertionError("an invalid program was written")
