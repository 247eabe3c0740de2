"""Tiles with a plane loop (GenericPlan.cpp): rows shorter than a stick that
continue along another loop move as whole runs. Kernel-level IR -> pipeline
-> simulator, against numpy, and the device bytes they move."""

import numpy as np
import pytest

from kernels import amap, close, generic, kernel, rounded, run
from spyre_mlir import compiler
from spyre_mlir.ir import Context, Module


def device_bytes(result):
    cores = result.stats["cores"]
    return (sum(c["device_read_bytes"] for c in cores),
            sum(c["device_write_bytes"] for c in cores))


@pytest.mark.parametrize("positions,heads,half", [
    (64, 2, 32), (67, 5, 32), (512, 8, 32),
    # Heads of 128 (Llama 2, Mistral): each half is a whole stick already.
    (64, 4, 64), (67, 3, 64)])
def test_rotary_halves_move_as_whole_sticks(positions, heads, half):
    """y = x * cos + rotate_half(x) * sin, sign included (-x2, x1), over
    positions x heads x two halves: each head's row is read once for x and
    its rotation, cos and sin once per position and head at most."""
    d = 2 * half
    n = positions * heads * d
    x_map = amap(4, f"d0 * {heads * d} + d1 * {d} + d2 * {half} + d3")
    rot_map = amap(4, f"d0 * {heads * d} + d1 * {d} - d2 * {half} + d3 + {half}")
    freq_map = amap(4, f"d0 * {d} + d2 * {half} + d3")
    body = generic((positions, heads, 2, half),
                   [("%x", (n,), "f16"), ("%c", (positions * d,), "f16"),
                    ("%x", (n,), "f16"), ("%s", (positions * d,), "f16")],
                   [("%y", (n,), "f16")], [x_map, freq_map, rot_map, freq_map, x_map], """
%first = spyre.index_expr affine_map<(d0, d1, d2, d3) -> (d2)> : i32
%zero = arith.constant 0 : i32
%is_first = arith.cmpi eq, %first, %zero : i32
%neg = arith.negf %a2 : f16
%r = arith.select %is_first, %neg, %a2 : f16
%p = arith.mulf %a0, %a1 : f16
%q = arith.mulf %r, %a3 : f16
%v = arith.addf %p, %q : f16
spyre.yield %v : f16""")
    src = kernel("rotary", [("x", (n,), "f16"), ("c", (positions * d,), "f16"),
                            ("s", (positions * d,), "f16"), ("y", (n,), "f16")], body)
    rng = np.random.default_rng(positions)
    x = rng.standard_normal(n).astype(np.float16)
    c, s = (rng.standard_normal(positions * d).astype(np.float16) for _ in range(2))
    out, result = run(src, {"arg0": x, "arg1": c, "arg2": s})
    xr = rounded(x).astype(np.float64).reshape(positions, heads, 2, half)
    cr = rounded(c).astype(np.float64).reshape(positions, 1, 2, half)
    sr = rounded(s).astype(np.float64).reshape(positions, 1, 2, half)
    rotated = np.concatenate([-xr[:, :, 1:], xr[:, :, :1]], axis=2)
    close(out["arg3"], (xr * cr + rotated * sr).reshape(-1))
    read, written = device_bytes(result)
    # Halves moved alone read x twice, for itself and its rotation (rows of
    # 32 f16 also as half sticks: 4x). cos and sin are read once per tile,
    # whose rows may be a head's positions.
    assert read <= 1.05 * x.nbytes + heads * (c.nbytes + s.nbytes)
    assert written <= 1.05 * x.nbytes


def test_upsampling_writes_whole_sticks():
    """Nearest upsampling by 2 of 4 x 64 x 64 f16: the output rows are the
    2-wide repeat, continued by the input's columns; the input's columns
    are the planes' elements, each repeated along the col loop."""
    c, h, w = 4, 64, 64
    out_map = amap(5, f"d0 * {4 * h * w} + d1 * {4 * w} + d2 * {2 * w} + d3 * 2 + d4")
    in_map = amap(5, f"d0 * {h * w} + d1 * {w} + d3")
    body = generic((c, h, 2, w, 2), [("%x", (c * h * w,), "f16")],
                   [("%y", (4 * c * h * w,), "f16")], [in_map, out_map],
                   "spyre.yield %a0 : f16")
    src = kernel("up", [("x", (c * h * w,), "f16"), ("y", (4 * c * h * w,), "f16")], body)
    x = np.random.default_rng(3).standard_normal(c * h * w).astype(np.float16)
    out, result = run(src, {"arg0": x})
    expected = rounded(x).reshape(c, h, w).repeat(2, axis=1).repeat(2, axis=2)
    close(out["arg1"], expected.reshape(-1))
    read, written = device_bytes(result)
    assert written == 4 * x.nbytes  # rows of 64 f16: whole sticks
    # Once per row repeat, 32 of 64 columns a row (half sticks): 4x. Element
    # by element, each 2-byte read would cost a stick.
    assert read <= 4.05 * x.nbytes


@pytest.mark.parametrize("cols", [32, 100])
def test_narrow_rows_that_follow_each_other_move_as_one_run(cols):
    """x + 1 of 4096 rows of `cols` f16: each tile's rows are one run on the
    device, not rows that each start part-way into a stick."""
    rows = 4096
    body = generic((rows, cols), [("%x", (rows, cols), "f16")], [("%y", (rows, cols), "f16")],
                   [amap(2, "d0, d1"), amap(2, "d0, d1")], """
%one = arith.constant 1.0 : f16
%v = arith.addf %a0, %one : f16
spyre.yield %v : f16""")
    src = kernel("inc", [("x", (rows, cols), "f16"), ("y", (rows, cols), "f16")], body)
    x = np.random.default_rng(cols).standard_normal((rows, cols)).astype(np.float16)
    out, result = run(src, {"arg0": x})
    close(out["arg1"], rounded(x).astype(np.float64) + 1)
    read, written = device_bytes(result)
    assert read <= 1.05 * x.nbytes and written <= 1.05 * x.nbytes


@pytest.mark.parametrize("window,stride", [(2, 2), (3, 2), (3, 1)])
def test_window_taps_along_a_row_share_their_runs(window, stride):
    """max over a window x window box of a padded 64 x 66 x 66 f16 image:
    the taps of one window row read the image's rows shifted by one element
    each, the next window rows the rows below, each starting where the run
    above ends: all taps load one run per tile row (GenericPlan::shareRuns)."""
    c, h = 64, 66
    out = (h - window) // stride + 1
    ins, maps = [], []
    for kh in range(window):
        for kw in range(window):
            ins.append(("%x", (c * h * h,), "f16"))
            maps.append(amap(3, f"d0 * {h * h} + d1 * {stride * h} + d2 * {stride} + "
                                f"{kh * h + kw}"))
    body = "\n".join(f"%m{k} = arith.maximumf %m{k - 1}, %a{k} : f16" if k else
                     "%m0 = arith.maximumf %a0, %a0 : f16" for k in range(len(ins)))
    body += f"\nspyre.yield %m{len(ins) - 1} : f16"
    src = kernel("pool", [("x", (c * h * h,), "f16"), ("y", (c * out * out,), "f16")],
                 generic((c, out, out), ins, [("%y", (c * out * out,), "f16")],
                         maps + [amap(3, f"d0 * {out * out} + d1 * {out} + d2")], body))
    x = np.random.default_rng(window + stride).standard_normal(c * h * h).astype(np.float16)
    result_out, result = run(src, {"arg0": x})
    img = rounded(x).reshape(c, h, h)
    expected = np.full((c, out, out), -np.inf, dtype=np.float32)
    for kh in range(window):
        for kw in range(window):
            expected = np.maximum(expected, img[:, kh:kh + stride * out:stride,
                                                kw:kw + stride * out:stride])
    close(result_out["arg1"], expected.reshape(-1))
    # All taps load one run a tile row: one load a tile (one store each), not
    # `window` (one per window row) or window^2.
    with Context():
        lowered = str(dict(compiler.compile_stages(Module.parse(src)))["lower"])
    core = lowered.split("spyre.hw.core 0 {")[1].split("spyre.hw.core 1 {")[0]
    loads = core.count("spyre.hw.dma #spyre.ref<lx")
    stores = core.count("spyre.hw.dma #spyre.ref<@arg1")
    assert stores > 0 and loads == stores


@pytest.mark.parametrize("positions,heads,length", [(64, 8, 256), (37, 4, 100)])
def test_planes_along_the_inputs_runs_read_whole_runs(positions, heads, length):
    """exp(x) transposed so that a few heads are innermost (Mamba2's chunked
    scan writes [positions, length, heads] from [heads, positions, length]):
    the output's rows (heads) are continued by the planes (length), along
    which the input runs. Plane by plane, each input element cost a stick
    (32x its bytes in f32)."""
    n = positions * heads * length
    in_map = amap(3, f"d1 * {positions * length} + d0 * {length} + d2")
    out_map = amap(3, f"d0 * {length * heads} + d2 * {heads} + d1")
    body = generic((positions, heads, length), [("%x", (n,), "f32")], [("%y", (n,), "f32")],
                   [in_map, out_map], """
%e = math.exp %a0 : f32
spyre.yield %e : f32""")
    src = kernel("heads", [("x", (n,), "f32"), ("y", (n,), "f32")], body)
    x = np.random.default_rng(heads).standard_normal(n).astype(np.float32)
    out, result = run(src, {"arg0": x})
    expected = np.exp(x.astype(np.float64)).reshape(heads, positions, length).transpose(1, 2, 0)
    close(out["arg1"], expected.reshape(-1))
    read, written = device_bytes(result)
    # Runs of 400 bytes starting anywhere in a stick span up to 5 sticks.
    assert read <= (1.05 if length * 4 % 128 == 0 else 1.65) * x.nbytes
    assert written <= 1.05 * x.nbytes
