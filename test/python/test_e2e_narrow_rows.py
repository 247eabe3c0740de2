"""Rows of a few bytes (T5's relative-position bias: 8 heads per position):
a gather from a small table reads it into LX once and stores whole rows as
one run; a transpose of narrow columns reads them as one run. Kernel-level IR
against numpy with the device bytes they move, and the PyTorch pattern
against eager."""

import numpy as np
import pytest
import torch

from kernels import amap, close, generic, kernel, rounded, run
from spyre_mlir.inductor import counters
from test_e2e_planes import device_bytes


@pytest.mark.parametrize("table_rows,width,count", [(32, 8, 4096), (5, 8, 33), (64, 64, 1000)])
def test_a_gather_from_a_small_table_reads_it_once_per_core(table_rows, width, count):
    src = kernel("lookup", [("t", (table_rows, width), "f16"), ("i", (count,), "i32"),
                            ("o", (count, width), "f16")],
                 f"  spyre.gather ins(%t, %i : !spyre.buffer<{table_rows}x{width}xf16>, "
                 f"!spyre.buffer<{count}xi32>) outs(%o : !spyre.buffer<{count}x{width}xf16>) "
                 "axis = 0\n")
    rng = np.random.default_rng(count)
    table = rng.standard_normal((table_rows, width)).astype(np.float16)
    idx = rng.integers(0, table_rows, count).astype(np.int32)
    out, result = run(src, {"arg0": table, "arg1": idx})
    close(out["arg2"], rounded(table)[idx])
    read, written = device_bytes(result)
    cores = len(result.stats["cores"])
    # The table once per core and the indices, not a stick per row; the
    # output's rows as runs.
    assert read <= cores * (table.nbytes + 256) + idx.nbytes + 128 * cores
    assert written <= count * width * 2 + 256 * cores


@pytest.mark.parametrize("rows,cols", [(8, 4096), (8, 100), (5, 3000), (64, 512)])
def test_narrow_columns_move_as_one_run(rows, cols):
    """y[r, c] = x[c, r] for x of [cols, rows] with rows up to a stick."""
    body = generic((rows, cols), [("%x", (rows * cols,), "f16")], [("%y", (rows * cols,), "f16")],
                   [amap(2, f"d0 + d1 * {rows}"), amap(2, f"d0 * {cols} + d1")],
                   "spyre.yield %a0 : f16")
    src = kernel("transpose", [("x", (rows * cols,), "f16"), ("y", (rows * cols,), "f16")], body)
    x = np.random.default_rng(rows).standard_normal(rows * cols).astype(np.float16)
    out, result = run(src, {"arg0": x})
    close(out["arg1"], rounded(x).reshape(cols, rows).T.reshape(-1))
    read, _ = device_bytes(result)
    # Column by column, every column of `rows` elements cost a stick.
    assert read <= 1.1 * x.nbytes + 256 * len(result.stats["cores"])


@pytest.mark.parametrize("channels,taps,stride,out_len", [(64, 3, 2, 1500), (32, 10, 5, 640),
                                                         (48, 2, 2, 200)])
def test_strided_taps_read_each_row_once(channels, taps, stride, out_len):
    """im2col of a strided 1-D convolution: tap t of output o reads element
    stride * o + t of its channel's row. Each row moves as one run; column
    by column, each output's taps cost a stick (whisper's second convolution
    2336 -> 384 us, wav2vec 2.0's feature extractor's 1610 -> 220)."""
    length = (out_len - 1) * stride + taps
    body = generic((channels, taps, out_len), [("%x", (channels * length,), "f16")],
                   [("%y", (channels * taps * out_len,), "f16")],
                   [amap(3, f"d0 * {length} + d1 + d2 * {stride}"),
                    amap(3, f"d0 * {taps * out_len} + d1 * {out_len} + d2")],
                   "spyre.yield %a0 : f16")
    src = kernel("taps", [("x", (channels * length,), "f16"),
                          ("y", (channels * taps * out_len,), "f16")], body)
    x = np.random.default_rng(taps).standard_normal(channels * length).astype(np.float16)
    out, result = run(src, {"arg0": x})
    rows = rounded(x).reshape(channels, length)
    expected = np.stack([rows[:, t:t + stride * (out_len - 1) + 1:stride] for t in range(taps)], 1)
    close(out["arg1"], expected.reshape(-1))
    read, _ = device_bytes(result)
    assert read <= 1.1 * x.nbytes + 256 * channels


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_a_position_bias_lookup_matches_eager(dtype):
    # T5's: a bias per (query, key) bucket and head, laid out per head.
    table = torch.randn(32, 8).to(dtype)
    buckets = torch.randint(0, 32, (1, 128, 128))

    def bias(table, buckets):
        return torch.nn.functional.embedding(buckets, table).permute(0, 3, 1, 2) * 2

    torch._dynamo.reset()
    counters.reset()
    actual = torch.compile(bias, backend="spyre")(table, buckets)
    assert dict(counters.fallbacks) == {}
    atol = 2 ** -9 * table.abs().max().item() if dtype == torch.float16 else 0
    torch.testing.assert_close(actual, bias(table, buckets), rtol=0, atol=atol)
