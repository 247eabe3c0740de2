"""A multilayer perceptron as one kernel, a chain (ChainPlan): the up
projection and its activation, then the down projection and its epilogue,
with the hidden activations kept in LX, against eager."""

import pytest
import torch
import torch.nn.functional as F

from eager_compare import compiled_and_eager
from spyre_mlir.inductor import counters
from test_torch_ops import rand, tolerance


def _mlp(x, w1, b1, w2, b2, residual):
    # GPT-2's block MLP and its residual add.
    return F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2, b2) + residual


def _inputs(rows, d, f, dtype):
    return (rand(rows, d, dtype=dtype), rand(f, d, dtype=dtype) / d ** 0.5,
            rand(f, dtype=dtype) / 4, rand(d, f, dtype=dtype) / f ** 0.5,
            rand(d, dtype=dtype) / 4, rand(rows, d, dtype=dtype))


# Rows, width and hidden units: GPT-2's at 128 tokens; row groups that do not
# divide the rows, slices and output blocks of uneven width; an output one
# stick wide, one hidden slice per row group (its epilogue once read the
# partial sums before the product wrote them); f32 operands,
# which the chain refuses (one kernel of two products, the hidden
# activations through device memory); too few rows for a chain.
@pytest.mark.parametrize("rows, d, f, dtype, chained", [
    (128, 768, 3072, torch.float16, True),
    (100, 192, 704, torch.float16, True),
    (64, 64, 256, torch.float16, True),
    (100, 192, 704, torch.float32, False),
    (32, 256, 1024, torch.float16, False),
])
def test_an_mlp_runs_as_one_kernel(rows, d, f, dtype, chained, kernels):
    inputs = _inputs(rows, d, f, dtype)
    actual, expected = compiled_and_eager(_mlp, *inputs)
    # Two products in a row: the hidden activations are rounded to the
    # output type in both; the second sums f terms.
    torch.testing.assert_close(actual.float(), expected.float(), **tolerance(dtype, f))
    assert counters.kernels_run == 1, kernels
    assert kernels[0].count("spyre.matmul") == 2
    # The hidden activations reach device memory only without the chain.
    hidden = rows * f * inputs[0].element_size()
    written = counters.bus_write_bytes - actual.numel() * actual.element_size()
    assert (written < hidden / 4) if chained else (written > hidden / 2), (written, hidden)


def test_the_chain_is_faster_than_two_kernels(monkeypatch):
    # The same MLP with chains off: two kernels, the hidden activations
    # through device memory.
    from spyre_mlir.inductor import state
    inputs = _inputs(256, 768, 3072, torch.float16)
    chained, _ = compiled_and_eager(_mlp, *inputs)
    chain_cycles = counters.simulated_cycles
    assert counters.kernels_run == 1
    monkeypatch.setattr(state, "chains", False)
    apart, _ = compiled_and_eager(_mlp, *inputs)
    assert counters.kernels_run == 2
    torch.testing.assert_close(chained.float(), apart.float(), **tolerance(torch.float16, 3072))
    assert chain_cycles < counters.simulated_cycles
