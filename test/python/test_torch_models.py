"""Whole models with torch.compile(backend="spyre") against eager: zero CPU
fallbacks (from the counters), outputs within DLFloat16 tolerance; a training
step; dynamic batch sizes."""

import warnings

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir import models
from spyre_mlir.inductor import SpecializationLimitWarning, backend, counters, state


def compiled_forward(model, *args, **compile_kwargs):
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        expected = model(*args)
        actual = torch.compile(model, backend="spyre", **compile_kwargs)(*args)
    return actual, expected


@pytest.mark.parametrize("name,make,inputs", [
    ("mlp", lambda: models.MLP(), lambda: (torch.randn(32, 64),)),
    ("gpt2_block", lambda: models.GPTBlock(), lambda: (torch.randn(2, 16, 128),)),
    ("llama_block", lambda: models.LlamaBlock(), lambda: (torch.randn(2, 16, 128),)),
    ("cnn", lambda: models.SmallCNN(), lambda: (torch.randn(2, 3, 16, 16),)),
    ("gpt", lambda: models.GPT(), lambda: (torch.randint(0, 512, (2, 16)),)),
])
def test_model_runs_on_the_card(name, make, inputs):
    torch.manual_seed(0)
    model = make().eval()
    actual, expected = compiled_forward(model, *inputs())
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run > 0 and counters.simulated_cycles > 0
    # Matrix products take DLFloat16 inputs (9 fraction bits).
    torch.testing.assert_close(actual, expected, rtol=2e-2, atol=5e-3)


def test_strict_mode_raises_on_a_fallback():
    torch._dynamo.reset()
    previous, state.strict = state.strict, True
    try:
        with pytest.raises(Exception, match="would run on the CPU"):
            # singular values have no Spyre kernel (a LAPACK call)
            torch.compile(lambda x: torch.linalg.svdvals(x) * 2, backend="spyre")(torch.randn(8, 8))
    finally:
        state.strict = previous


def test_fallbacks_are_counted_and_still_correct():
    torch._dynamo.reset()
    counters.reset()
    x = torch.randn(8, 8)
    out = torch.compile(lambda x: torch.linalg.svdvals(x) * 2, backend="spyre")(x)
    torch.testing.assert_close(out, torch.linalg.svdvals(x) * 2)
    assert dict(counters.fallbacks) == {"aten._linalg_svd.default": 1}


def training_step(model, x, y, loss_fn):
    loss = loss_fn(model(x), y)
    loss.backward()
    return loss


@pytest.mark.parametrize("loss_name", ["mse", "cross_entropy"])
def test_mlp_training_step_matches_eager_gradients(loss_name):
    torch.manual_seed(0)
    model, reference = models.MLP(), models.MLP()
    reference.load_state_dict(model.state_dict())
    x = torch.randn(32, 64)
    if loss_name == "mse":
        loss_fn, y = F.mse_loss, torch.randn(32, 10)
    else:
        loss_fn, y = F.cross_entropy, torch.randint(0, 10, (32,))
    torch._dynamo.reset()
    counters.reset()
    loss = torch.compile(training_step, backend="spyre")(model, x, y, loss_fn)
    expected = training_step(reference, x, y, loss_fn)
    torch.testing.assert_close(loss, expected, rtol=1e-2, atol=1e-3)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=2e-2, atol=2e-3)
    # Cross-entropy's class pick and its gradient are one-hot comparisons on
    # the card (instead of gather and scatter).
    assert dict(counters.fallbacks) == {}


def test_dynamic_batch_compiles_once_per_shape_and_stays_correct():
    torch.manual_seed(0)
    model = models.MLP().eval()
    torch._dynamo.reset()
    counters.reset()
    compiled = torch.compile(model, backend="spyre", dynamic=True)
    with torch.no_grad():
        for batch in (3, 17, 40):
            x = torch.randn(batch, 64)
            torch.testing.assert_close(compiled(x), model(x), rtol=2e-2, atol=5e-3)
    assert dict(counters.fallbacks) == {}
    # Dynamo traced the graph once (dynamic); it is specialised per batch size:
    # one kernel, both products with their biases (and activation) as
    # epilogues, exported together (a chain; below 64 rows its hidden
    # activations go through device memory).
    assert counters.kernels_run == 3


class Counting(torch.nn.Module):
    """A sliding-window cache's step: tensors computed, and a count of the
    tokens seen that only integer arithmetic reads and that is returned."""

    def forward(self, x, seen: int):
        return torch.relu(x) * 2, seen + 1, 2 * (seen + 1) - 1


def test_returned_integers_do_not_make_new_versions(monkeypatch):
    """The integer is symbolic (dynamic=True); the graph is compiled once,
    not once per value, and the integer results are each call's. (Counted
    at the backend: the kernel cache may hold the kernel from an earlier
    run, so counters.compiles can be 0.)"""
    versions = []
    compile_version = backend._compile
    monkeypatch.setattr(backend, "_compile",
                        lambda gm, args, *rest: versions.append(args) or
                        compile_version(gm, args, *rest))
    torch._dynamo.reset()
    compiled = torch.compile(Counting(), backend="spyre", dynamic=True)
    x = torch.randn(4, 64)
    counters.reset()
    for seen in range(3, 3 + 2 * backend.MAX_SPECIALIZATIONS):
        y, after, odd = compiled(x, seen)
        torch.testing.assert_close(y, torch.relu(x) * 2)
        assert (after, odd) == (seen + 1, 2 * seen + 1)
    assert dict(counters.fallbacks) == {}
    assert len(versions) == 1


def test_shapes_beyond_the_limit_run_on_the_cpu_counted_with_one_warning():
    """A dynamic graph compiles one static version per input shape up to
    MAX_SPECIALIZATIONS; later shapes run on the CPU, counted, and the
    first of them warns, naming the way out for generate's growing cache."""
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: torch.relu(x) * 2, backend="spyre", dynamic=True)
    counters.reset()
    extra = 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # From 2 rows: Dynamo specializes a size of 1 (a graph of its own).
        for rows in range(2, backend.MAX_SPECIALIZATIONS + extra + 2):
            x = torch.randn(rows, 64)
            torch.testing.assert_close(compiled(x), torch.relu(x) * 2)
    limit = [w for w in caught if issubclass(w.category, SpecializationLimitWarning)]
    assert len(limit) == 1 and 'cache_implementation="static"' in str(limit[0].message)
    assert dict(counters.fallbacks) == {"spyre.specialization_limit": extra}


def test_integers_that_reach_tensors_still_make_versions():
    gm = torch.fx.symbolic_trace(lambda x, n: (x * n, n + 1))
    for node in gm.graph.nodes:  # Dynamo's example values
        if node.op == "placeholder":
            node.meta["example_value"] = torch.zeros(2) if node.name == "x" else 3
        elif node.name == "add":
            node.meta["example_value"] = 4
    assert backend._returned_ints(gm) == (set(), {})


def test_fp16_parameters_are_converted_once_and_updates_are_seen():
    torch.manual_seed(0)
    model = models.MLP().eval().half()
    x = torch.randn(8, 64).half()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="spyre")
    converted = []
    with torch.no_grad():
        for _ in range(2):
            counters.reset()
            torch.testing.assert_close(compiled(x).float(), model(x).float(), rtol=2e-2, atol=5e-3)
            converted.append(counters.converted_bytes)
        parameter_bytes = sum(p.numel() * 2 for p in model.parameters())
        assert converted[0] - converted[1] >= parameter_bytes  # parameters: first call only
        model.fc2.bias.add_(1.0)  # an in-place update bumps the version: converted again
        counters.reset()
        torch.testing.assert_close(compiled(x).float(), model(x).float(), rtol=2e-2, atol=5e-3)
        assert counters.converted_bytes > converted[1]


def test_llama_softmax_is_one_kernel(decomposed_attention):
    """Attention decomposed (as when the card refuses the fused kernel):
    Inductor orders the value projection between the attention softmax's
    row sums and its quotients; the product runs first (it needs nothing of
    the softmax), so the softmax stays one kernel and its exponentials never
    reach device memory (before: the maxima and sums in one kernel, the
    quotients in the next)."""
    from spyre_mlir import report
    torch.manual_seed(0)
    block = models.LlamaBlock(128, 4, 2, 256, max_len=64).half().eval()
    x = torch.randn(1, 64, 128).half()
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        actual = torch.compile(block, backend="spyre")(x)
        expected = block(x)
    assert dict(counters.fallbacks) == {}
    torch.testing.assert_close(actual.float(), expected.float(), atol=3e-2, rtol=3e-2)
    softmax = [set(r.ops) for r in report.kernel_rows() if "aten.amax.default" in r.ops]
    assert softmax and all("aten.div.Tensor" in ops for ops in softmax)
