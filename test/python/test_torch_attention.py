"""Attention with torch.compile(backend="spyre") against eager: the whole
scaled_dot_product_attention signature (scale, boolean and additive masks,
is_causal, grouped-query attention) forward and backward,
nn.MultiheadAttention and nn.TransformerEncoderLayer (eval-mode fast path).
Zero CPU fallbacks, results within DLFloat16 tolerance."""

import math
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from eager_compare import kernel_runs
from spyre_mlir.inductor import counters
from test_torch_ops import tolerance

B, H, L, S, E = 2, 4, 16, 12, 16


def compiled(fn, *args):
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        return torch.compile(fn, backend="spyre")(*args)


def close(actual, expected, depth):
    torch.testing.assert_close(actual, expected, **tolerance(torch.float16, depth))


def attention_close(actual, expected):
    """An attention output is a weighted average of values: its error
    does not grow with the keys, as a sum's does, but with the values'
    magnitude (the 16-bit probabilities and values). A tolerance scaled with
    the square root of the keys let an output with the wrong queries' rows
    (off by 0.18) pass."""
    eps = 2.0 ** -9
    scale = max(1.0, expected.float().abs().max().item())
    torch.testing.assert_close(actual.float(), expected.float(), rtol=4 * eps, atol=4 * eps * scale)


def masks():
    torch.manual_seed(1)
    keep = torch.rand(B, 1, L, S) > 0.3
    keep[0, 0, 3] = False  # a row with every position masked: zeros, as eager
    return {"bool": keep, "float": torch.randn(L, S), "bool_2d": torch.rand(L, S) > 0.5}


SDPA = {
    "plain": dict(),
    "scale": dict(scale=0.3),
    "causal": dict(is_causal=True),
    "causal_scale": dict(is_causal=True, scale=0.2),
    "bool_mask": dict(attn_mask="bool"),
    "bool_mask_2d": dict(attn_mask="bool_2d"),
    "float_mask_scale": dict(attn_mask="float", scale=0.5),
    "gqa": dict(enable_gqa=True),
    "gqa_causal": dict(enable_gqa=True, is_causal=True),
    "gqa_bool_mask_scale": dict(enable_gqa=True, attn_mask="bool", scale=0.4),
    "dropout_zero": dict(dropout_p=0.0),
}


def sdpa_inputs(kwargs, dtype=torch.float32):
    torch.manual_seed(0)
    kv_heads = H // 2 if kwargs.get("enable_gqa") else H
    q = torch.randn(B, H, L, E, dtype=dtype)
    k, v = (torch.randn(B, kv_heads, S, E, dtype=dtype) for _ in range(2))
    kwargs = dict(kwargs)
    if isinstance(kwargs.get("attn_mask"), str):
        mask = masks()[kwargs["attn_mask"]]
        kwargs["attn_mask"] = mask.to(dtype) if mask.is_floating_point() else mask
    return q, k, v, kwargs


@pytest.mark.parametrize("name", list(SDPA))
def test_sdpa(name):
    q, k, v, kwargs = sdpa_inputs(SDPA[name])

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    actual = compiled(fn, q, k, v)
    assert dict(counters.fallbacks) == {}
    attention_close(actual, fn(q, k, v))


def test_sdpa_float16():
    q, k, v, kwargs = sdpa_inputs(SDPA["gqa_causal"], torch.float16)

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    actual = compiled(fn, q, k, v)
    assert dict(counters.fallbacks) == {}
    assert actual.dtype == torch.float16
    attention_close(actual.float(), fn(q, k, v).float())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_decode_attention_reads_the_cache_as_stored(dtype):
    """16-bit queries, keys and values go to the matrix products as they are,
    with f32 sums: an f32 copy of the keys and values (written to device
    memory and read back) made this decode step 58,384 cycles, 28,047
    without (fp16)."""
    torch.manual_seed(0)
    q = torch.randn(1, 8, 1, 64).to(dtype)
    k, v = (torch.randn(1, 8, 512, 64).to(dtype) for _ in range(2))
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v)  # noqa: E731
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="spyre")
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, k, v), fn(q, k, v), **tolerance(dtype, 512))
        counters.reset()
        compiled(q, k, v)
    assert dict(counters.fallbacks) == {}
    assert counters.simulated_cycles < 40_000


def test_sdpa_layout_of_transposed_inputs():
    """As transformers calls it: heads split from (B, L, H*E) by a view and a
    transpose, the result transposed back and viewed."""
    torch.manual_seed(0)
    x = torch.randn(B, L, H * E)

    def fn(x):
        q = x.view(B, L, H, E).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, q * 2, q + 1, is_causal=True, scale=0.3)
        return out.transpose(1, 2).reshape(B, L, H * E)

    actual = compiled(fn, x)
    assert dict(counters.fallbacks) == {}
    close(actual, fn(x), E)


@pytest.mark.parametrize("name", ["causal", "float_mask_scale", "gqa_bool_mask_scale"])
def test_sdpa_gradients(name):
    """The backward too: the CPU flash-attention backward must not be given
    anything but its own forward's results."""
    q, k, v, kwargs = sdpa_inputs(SDPA[name])
    weights = torch.randn(B, H, L, E)

    def fn(q, k, v):
        return (F.scaled_dot_product_attention(q, k, v, **kwargs) * weights).sum()

    def gradients(f):
        inputs = [t.clone().requires_grad_() for t in (q, k, v)]
        f(*inputs).backward()
        return [t.grad for t in inputs]

    expected = gradients(fn)
    torch._dynamo.reset()
    counters.reset()
    actual = gradients(torch.compile(fn, backend="spyre"))
    assert dict(counters.fallbacks) == {}
    for a, e in zip(actual, expected):
        scale = e.abs().max()
        close(a / scale, e / scale, max(E, S))


def test_sdpa_dropout_in_training():
    """Dropout's random numbers are generated on the card (random.py): no
    fallbacks; the values differ from eager's, so only their effect is checked."""
    q, k, v, _ = sdpa_inputs({})
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.5),
                        backend="spyre")(q, k, v)
    assert out.shape == q.shape and bool(torch.isfinite(out).all())
    assert dict(counters.fallbacks) == {}
    assert not torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-2)


EMBED, HEADS, LEN = 32, 4, 8


def mha_inputs():
    torch.manual_seed(0)
    x = torch.randn(B, LEN, EMBED)
    padding = torch.zeros(B, LEN, dtype=torch.bool)
    padding[1, LEN // 2:] = True
    return x, padding, nn.Transformer.generate_square_subsequent_mask(LEN)


MHA = {
    "weights": lambda m, x, pad, causal: m(x, x, x),
    "per_head_weights": lambda m, x, pad, causal: m(x, x, x, average_attn_weights=False),
    "no_weights": lambda m, x, pad, causal: m(x, x, x, need_weights=False)[0],
    "key_padding": lambda m, x, pad, causal: m(x, x, x, key_padding_mask=pad),
    "causal": lambda m, x, pad, causal: m(x, x, x, attn_mask=causal, need_weights=False)[0],
    "cross": lambda m, x, pad, causal: m(x, x[:, :5] * 2, x[:, :5] + 1),
}


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("name", list(MHA))
def test_multihead_attention(name, batch_first):
    x, pad, causal = mha_inputs()
    module = nn.MultiheadAttention(EMBED, HEADS, batch_first=batch_first).eval()
    if not batch_first:
        x = x.transpose(0, 1).contiguous()

    def fn(x):
        return MHA[name](module, x, pad, causal)

    actual = compiled(fn, x)
    assert dict(counters.fallbacks) == {}
    with torch.no_grad():
        expected = fn(x)
    if isinstance(expected, torch.Tensor):
        actual, expected = (actual,), (expected,)
    for a, e in zip(actual, expected):
        close(a, e, EMBED)


@pytest.mark.parametrize("mask_type", [None, 0, 1, 2])
@pytest.mark.parametrize("need_weights", [True, False])
def test_native_multi_head_attention(mask_type, need_weights):
    """nn.MultiheadAttention's fast-path op, with each kind of mask (nonzero
    entries are masked out)."""
    x, pad, causal = mha_inputs()
    module = nn.MultiheadAttention(EMBED, HEADS, batch_first=True).eval()
    mask = {None: None, 0: causal, 1: pad, 2: torch.rand(B, HEADS, LEN, LEN) > 0.6}[mask_type]
    args = (EMBED, HEADS, module.in_proj_weight, module.in_proj_bias, module.out_proj.weight,
            module.out_proj.bias, mask, need_weights, True, mask_type)

    def fn(x):
        return torch._native_multi_head_attention(x, x, x, *args)

    actual = compiled(fn, x)
    assert dict(counters.fallbacks) == {}
    with torch.no_grad():
        expected = fn(x)
    close(actual[0], expected[0], EMBED)
    if need_weights:
        close(actual[1], expected[1], EMBED)


ENCODER = {
    "relu": dict(),
    "gelu_norm_first": dict(activation="gelu", norm_first=True),
}


@pytest.mark.parametrize("mask", [None, "key_padding", "causal"])
@pytest.mark.parametrize("name", list(ENCODER))
def test_transformer_encoder_layer(name, mask):
    """Eval mode without gradients: the fast path, one CPU kernel in eager."""
    x, pad, causal = mha_inputs()
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(EMBED, HEADS, 2 * EMBED, batch_first=True,
                                       **ENCODER[name]).eval()
    kwargs = {None: {}, "key_padding": dict(src_key_padding_mask=pad),
              "causal": dict(src_mask=causal, is_causal=True)}[mask]

    def fn(x):
        return layer(x, **kwargs)

    actual = compiled(fn, x)
    assert dict(counters.fallbacks) == {}
    with torch.no_grad():
        expected = fn(x)
    close(actual, expected, 2 * EMBED)


def test_transformer_encoder():
    x, _, _ = mha_inputs()
    torch.manual_seed(0)
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(EMBED, HEADS, 2 * EMBED, batch_first=True), 2,
        enable_nested_tensor=False).eval()
    actual = compiled(encoder, x)
    assert dict(counters.fallbacks) == {}
    with torch.no_grad():
        expected = encoder(x)
    close(actual, expected, 2 * EMBED)


def repeat_kv(x, n_rep):
    """Hugging Face's repeat_kv: each key/value head repeated for its query heads."""
    b, heads, s, d = x.shape
    return x[:, :, None, :, :].expand(b, heads, n_rep, s, d).reshape(b, heads * n_rep, s, d)


def llama_attention(q, k, v, mask):
    rep = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, repeat_kv(k, rep), repeat_kv(v, rep),
                                          attn_mask=mask, scale=0.125)


def interleaved_attention(q, k, v, mask):
    """The repeat as other models write it (spyre_mlir.models.LlamaBlock),
    positionally and by keyword."""
    rep = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, k.repeat_interleave(rep, dim=1),
                                          torch.repeat_interleave(v, repeats=rep, dim=-3),
                                          attn_mask=mask, scale=0.125)


def decode_inputs(dtype=torch.float16):
    torch.manual_seed(0)
    q = torch.randn(1, 8, 1, 64).to(dtype)
    k, v = (torch.randn(1, 2, 128, 64).to(dtype) for _ in range(2))
    mask = torch.zeros(1, 1, 1, 128, dtype=dtype)
    mask[..., 100:] = -math.inf
    return q, k, v, mask


def dynamo_graph(fn, *args):
    from torch._dynamo.testing import EagerAndRecordGraphs
    recorder = EagerAndRecordGraphs()
    torch._dynamo.reset()
    torch.compile(fn, backend=recorder)(*args)
    return recorder.graphs[0]


@pytest.mark.parametrize("fn", [llama_attention, interleaved_attention])
def test_repeated_heads_become_grouped_query_attention(fn):
    """The pre-grad pass gives attention the unrepeated key/value heads with
    enable_gqa=True; the graph computes what it did."""
    from spyre_mlir.inductor.grouped_attention import ungroup_repeated_heads
    args = decode_inputs(torch.float32)
    gm = dynamo_graph(fn, *args)
    assert ungroup_repeated_heads(gm.graph) == 1
    gm.recompile()
    (attention,) = [n for n in gm.graph.nodes if n.target is F.scaled_dot_product_attention or
                    n.target is torch._C._nn.scaled_dot_product_attention]
    assert attention.kwargs["enable_gqa"] is True
    assert not [n for n in gm.graph.nodes if n.target in ("expand", "reshape") or
                "repeat_interleave" in str(n.target)]
    out = gm(*args)  # Dynamo's graphs return their outputs as a sequence
    torch.testing.assert_close(out[0], fn(*args))


def repeated_then_written(k, v):
    keys, values = repeat_kv(k, 4), repeat_kv(v, 4)
    k.index_copy_(2, torch.tensor([3]), torch.full_like(k[:, :, :1], 10.0))
    return keys, values


@pytest.mark.parametrize("fn", [
    # Key and value heads repeated a different number of times.
    lambda q, k, v, m: F.scaled_dot_product_attention(q, repeat_kv(k, 4), repeat_kv(v, 4)[:, :4]
                                                      .repeat(1, 2, 1, 1), attn_mask=m),
    # Repeated along another axis: not the head repeat enable_gqa means.
    lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k[:, :, :, None].expand(1, 2, 128, 4, 64).reshape(1, 8, 128, 64)[:, :, :128],
        repeat_kv(v, 4), attn_mask=m),
    # The cache written in place after the repeat (a copy) and before
    # attention: attention must see the values of the repeat.
    lambda q, k, v, m: F.scaled_dot_product_attention(
        q, *repeated_then_written(k, v), attn_mask=m),
    # Interleaved along the sequence, or a repeat per head (a tensor).
    lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k.repeat_interleave(4, dim=2)[:, :, :128].repeat(1, 4, 1, 1), repeat_kv(v, 4),
        attn_mask=m),
    lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k.repeat_interleave(torch.tensor([4, 4]), dim=1), repeat_kv(v, 4), attn_mask=m),
], ids=["mismatched_values", "other_axis", "written_after_the_repeat", "interleaved_rows",
        "interleaved_by_tensor"])
def test_other_repeats_are_left_alone(fn):
    from spyre_mlir.inductor.grouped_attention import ungroup_repeated_heads
    args = decode_inputs(torch.float32)
    gm = dynamo_graph(fn, *args)
    assert ungroup_repeated_heads(gm.graph) == 0


def test_decode_with_repeated_heads_reads_each_head_once(monkeypatch):
    """Compiled end to end: the same values as eager, and fewer simulated
    cycles than with the copies of the repeated heads that the pass removes."""
    from spyre_mlir.inductor import backend
    args = decode_inputs()

    def simulated(config):
        monkeypatch.setattr(backend, "CONFIG", config)
        out = compiled(llama_attention, *args)
        assert dict(counters.fallbacks) == {}
        torch.testing.assert_close(out, llama_attention(*args), **tolerance(torch.float16, 128))
        return counters.simulated_cycles

    grouped = simulated(dict(backend.CONFIG))
    repeated = simulated({k: v for k, v in backend.CONFIG.items() if k != "pre_grad_custom_pass"})
    assert grouped < repeated


# --------------------------------------------------------------------------
# Fused attention (inductor/attention.py, AttentionPlan.cpp): one kernel whose
# scores never reach device memory.

def _ran_fused():
    return "attention" in counters.cycles_per_kernel


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("name", ["plain", "causal", "bool_mask", "float_mask_scale",
                                  "gqa_causal", "gqa_bool_mask_scale"])
def test_sdpa_runs_as_one_fused_kernel(name, dtype):
    q, k, v, kwargs = sdpa_inputs(SDPA[name], dtype)

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    actual = compiled(fn, q, k, v)
    assert dict(counters.fallbacks) == {}
    assert _ran_fused()
    mask = kwargs.get("attn_mask")
    if mask is not None and mask.is_floating_point():
        kwargs["attn_mask"] = mask.float()
    attention_close(actual.float(), fn(q.float(), k.float(), v.float()))


def _fused_sdpa_matches_f32(q, k, v, causal):
    """Compiled scaled_dot_product_attention runs as the fused kernel, with
    no fallback, and matches eager in f32 within a sum over the keys."""
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    actual = compiled(fn, q, k, v)
    assert _ran_fused() and dict(counters.fallbacks) == {}
    attention_close(actual.float(), fn(q.float(), k.float(), v.float()))


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_over_several_key_blocks(causal):
    """More keys than one block holds (512): the online softmax rescales
    what earlier blocks summed when a later block raises a row's maximum
    (the last keys are made larger to force it)."""
    torch.manual_seed(0)
    q = torch.randn(1, 2, 600, 32, dtype=torch.float16)
    k, v = (torch.randn(1, 2, 600, 32, dtype=torch.float16) for _ in range(2))
    k[:, :, 520:] *= 3
    _fused_sdpa_matches_f32(q, k, v, causal)


@pytest.mark.parametrize("shape", [(8, 512, 64), (4, 1000, 32)], ids=["gpt2", "ragged"])
def test_causal_panels_fold(shape):
    """Few heads of causal attention on 32 cores: each core's panel of query
    rows is two runs, one from each end of a head, so that every panel sees
    about as many keys (AttentionPlan: a fourth tile size of 1). 1000 rows
    in runs of 64 leave a last run of 40, paired with the first. The
    output goes back to both runs of rows."""
    from spyre_mlir import compiler
    from spyre_mlir.ir import Context, Module
    torch.manual_seed(0)
    heads, length, size = shape
    q, k, v = (torch.randn(1, heads, length, size, dtype=torch.float16) for _ in range(3))
    _fused_sdpa_matches_f32(q, k, v, True)
    (kernel,) = [k for k in counters.per_kernel if "spyre.attention" in k.mlir]
    with Context():
        tiled = str(compiler.compile_module(Module.parse(kernel.mlir), stop_after="tile"))
    assert re.search(r"spyre.tile = array<i64: \d+, \d+, \d+, 1>", tiled), tiled


def test_causal_blocks_that_straddle_a_key_block():
    """32 heads of 768 positions, 96 wide: blocks of 128 query rows, key
    blocks of 448, so the rows 384-511 meet the second key block 64 keys
    after their diagonal starts. Each core computes the causal pattern
    once; such a block reads it 63 columns in."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 32, 768, 96, dtype=torch.float16) for _ in range(3))
    _fused_sdpa_matches_f32(q, k, v, True)


def test_heads_are_written_as_the_model_reads_them():
    """Heads as a model makes them, a projection viewed as (batch, length,
    heads, size) and transposed: the result is laid out as the query (as
    from the CPU's kernel), which the kernel writes directly, so merging the
    heads back (transpose(1, 2).contiguous()) copies nothing. Two kernels:
    attention, reading the split heads where they are (a third copied them
    apart before), and the output projection; another copied the output
    into rows when the kernel wrote heads apart (123.7 -> 111.8 us)."""
    torch.manual_seed(0)
    x = torch.randn(2, 300, 3 * 512, dtype=torch.float16)
    w = torch.randn(512, 512, dtype=torch.float16) / 16

    def fn(x, w):
        q, k, v = (t.view(2, 300, 8, 64).transpose(1, 2) for t in x.split(512, -1))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return o.transpose(1, 2).contiguous().reshape(2, 300, 512) @ w

    actual = compiled(fn, x, w)
    assert _ran_fused() and dict(counters.fallbacks) == {}
    assert counters.kernels_run == 2, dict(counters.cycles_per_kernel)
    close(actual.float(), fn(x.float(), w.float()), 512)


def test_fused_attention_keeps_scores_out_of_device_memory():
    """The kernel writes only its output: the 8 heads x 256 x 256 f32
    scores (2 MiB) are never stored, nor read back."""
    from spyre_mlir import simulator as sim
    from spyre_mlir.inductor import attention
    from spyre_mlir.inductor.kernel_cache import compile_cached
    heads, length, size = 8, 256, 64
    mlir = attention.kernel_mlir((heads, length, size), (heads, length, size),
                                 (heads, length, size), None, torch.float16, None, 0.125, True)
    q, k, v = (torch.randn(heads, length, size, dtype=torch.float16) for _ in range(3))
    result = sim.run(compile_cached(mlir), {"arg0": q, "arg1": k, "arg2": v})
    (kernel,) = result.stats["kernels"].values()
    one_tensor = heads * length * size * 2
    assert kernel["device_write_bytes"] == one_tensor
    scores = heads * length * length * 4
    # q once, k and v once per query block (up to its diagonal): less than
    # storing the scores and reading them back would take.
    assert kernel["device_read_bytes"] < 2 * scores
    expected = F.scaled_dot_product_attention(q.float().unsqueeze(0), k.float().unsqueeze(0),
                                              v.float().unsqueeze(0), is_causal=True, scale=0.125)
    attention_close(torch.as_tensor(result.outputs["arg3"]).float(), expected[0])


@pytest.mark.parametrize("causal, keys, size", [(True, 1024, 64), (True, 1024, 128),
                                                 (False, 1536, 64)],
                         ids=["causal", "causal-d128", "full"])
@pytest.mark.parametrize("batch", [0, 2], ids=["heads-apart", "rows-hold-heads"])
def test_many_panels_per_core(causal, keys, size, batch):
    """On 4 cores, 8 heads of 1024 query rows are 4 panels of 512 rows per
    core, of one to four key blocks: each core loads its next panel's
    queries during the panel before (and, with three blocks, scales them
    and starts their first scores there too) and stores a finished panel's
    output in pieces over the next steps, while the slot's other copy is in
    use; its last panel a block of rows at a time, as each is done (with
    128-wide heads, key blocks of 256: the rows before the last block's are
    done a step earlier). The output matches eager in f32, in both layouts
    of the target."""
    from spyre_mlir import compiler
    from spyre_mlir import simulator as sim
    from spyre_mlir.inductor import attention
    heads, length = 8, 1024
    mlir = attention.kernel_mlir((heads, length, size), (heads, keys, size),
                                 (heads, keys, size), None, torch.float16, None, 0.125, causal,
                                 batch=batch)
    torch.manual_seed(0)
    q = torch.randn(heads, length, size, dtype=torch.float16)
    k, v = (torch.randn(heads, keys, size, dtype=torch.float16) for _ in range(2))
    result = sim.run(compiler.compile_kernel(mlir, cores=4), {"arg0": q, "arg1": k, "arg2": v})
    expected = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal,
                                              scale=0.125)
    if batch:  # (batch, length, heads / batch, size)
        expected = expected.view(batch, heads // batch, length, size).transpose(1, 2)
    attention_close(torch.as_tensor(result.outputs["arg3"]), expected)


@pytest.mark.parametrize("masked", [False, True], ids=["plain", "mask"])
def test_grouped_decode_rows_run_on_all_cores(masked):
    """A decode step of grouped-query attention reaches the kernel as 4 key/
    value heads of 8 query rows (the heads of a group): panels of one row
    put it on all 32 cores, the 8 of a head loading its keys and values
    together, and the output matches eager."""
    from spyre_mlir import compiler, ir
    from spyre_mlir import simulator as sim
    from spyre_mlir.inductor import attention
    keys = 514
    mask_shape = (1, 1, keys) if masked else None
    mlir = attention.kernel_mlir((4, 8, 64), (4, keys, 64), (4, keys, 64), mask_shape,
                                 torch.float16, torch.float16 if masked else None, 0.125, False)
    with ir.Context():
        module = compiler.parse_module(mlir)
        compiler.compile_module(module, stop_after="tile")
        (op,) = compiler.ops_where(module, lambda o: "spyre.tile" in o.attributes)
        assert list(ir.DenseI64ArrayAttr(op.attributes["spyre.tile"]))[0] == 1
    torch.manual_seed(0)
    q = torch.randn(4, 8, 64, dtype=torch.float16)
    k, v = (torch.randn(4, keys, 64, dtype=torch.float16) for _ in range(2))
    inputs = {"arg0": q, "arg1": k, "arg2": v}
    mask = None
    if masked:
        mask = torch.zeros(1, 1, keys, dtype=torch.float16)
        mask[..., :3] = float("-inf")
        inputs["arg3"] = mask
    result = sim.run(compiler.compile_kernel(mlir), inputs)
    out = result.outputs["arg4" if masked else "arg3"]
    expected = F.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), scale=0.125,
        attn_mask=None if mask is None else mask.float())
    attention_close(torch.as_tensor(out), expected)


def test_attention_the_card_refuses_is_decomposed(decomposed_attention):
    """When the compiler refuses the fused kernel, attention still runs on
    the card as products and a softmax (no CPU fallback)."""
    q, k, v, kwargs = sdpa_inputs(SDPA["causal"])

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    actual = compiled(fn, q, k, v)
    assert not _ran_fused() and dict(counters.fallbacks) == {}
    attention_close(actual, fn(q, k, v))


def test_the_attention_op_runs_on_the_card_in_eager():
    """torch.ops.spyre.attention called directly (heads flattened, mask
    per batch) runs the same kernel."""
    torch.manual_seed(0)
    q = torch.randn(4, 5, 16)
    k, v = (torch.randn(2, 7, 16) for _ in range(2))
    mask = torch.randn(2, 1, 7)
    counters.reset()
    out = torch.ops.spyre.attention(q, k, v, mask, 0.25, False)
    assert counters.kernels_run == 1
    heads_k, heads_v = k.repeat_interleave(2, 0), v.repeat_interleave(2, 0)
    expected = F.scaled_dot_product_attention(q, heads_k, heads_v,
                                              attn_mask=mask.repeat_interleave(2, 0), scale=0.25)
    attention_close(out, expected)


def test_heads_split_from_one_projection_are_read_in_place():
    """q, k and v split from one projection (GPT-2's) are strided views of
    its rows, with the projection's bias added: the product computes its
    rows with the bias once, and the attention kernel reads its heads from
    them (query_layout and the others), with no kernel that copies the heads
    apart. An eager call with such views reads them in place too; only an
    operand whose rows' elements are apart is re-laid on the host, counted
    as a CPU fallback."""
    from spyre_mlir import models
    torch.manual_seed(0)
    block = models.GPTBlock(64, 4).eval()
    x = torch.randn(1, 32, 64)
    actual = compiled(block, x)
    assert _ran_fused() and dict(counters.fallbacks) == {}
    close(actual, block(x), 64)
    [attention] = [k for k in counters.per_kernel if k.name == "attention"]
    assert all(f"{name}_layout" in attention.mlir for name in ("query", "key", "value"))
    # Both LayerNorms, the projection with its bias, the attention, the output
    # projection with the residual, and the MLP's two products in one kernel:
    # before, a kernel between the projection and the attention added the
    # bias and copied the heads apart.
    assert counters.kernels_run == 6
    # A batch of sequences: each batch's heads a whole projection apart.
    x2 = torch.randn(2, 32, 64)
    close(compiled(block, x2), block(x2), 64)
    [attention] = [k for k in counters.per_kernel if k.name == "attention"]
    assert "query_layout = array<i64: 8, 32, 16, 16, 192, 4, 6144>" in attention.mlir
    assert counters.kernels_run == 6 and dict(counters.fallbacks) == {}

    q = torch.randn(5, 4, 16).transpose(0, 1)
    k, v = torch.randn(4, 7, 16), torch.randn(4, 7, 16)
    counters.reset()
    out = torch.ops.spyre.attention(q, k, v, None, 0.25, False)
    assert dict(counters.fallbacks) == {}
    attention_close(out, F.scaled_dot_product_attention(q, k, v, scale=0.25))
    q_apart = torch.randn(4, 16, 5).transpose(1, 2)
    counters.reset()
    out = torch.ops.spyre.attention(q_apart, k, v, None, 0.25, False)
    assert dict(counters.fallbacks) == {"spyre.attention (host copy of a strided input)": 1}
    attention_close(out, F.scaled_dot_product_attention(q_apart, k, v, scale=0.25))


def _heads_per_batch(base):
    """q of a batch of 2 packed projections, (2, 4, 5, 16): a batch's heads
    are one projection row (192) apart, its batches 5 rows."""
    return base[..., :64].view(2, 5, 4, 16).transpose(1, 2)


@pytest.mark.parametrize("make_q, layout", [
    # Every head the same row: a head stride of 0.
    (lambda: torch.randn(1, 5, 16).expand(4, 5, 16), "4, 5, 16, 0, 16"),
    # One query row per head, each the first half of a longer row.
    (lambda: torch.randn(4, 1, 32)[:, :, :16], "4, 1, 16, 32, 0"),
    # Heads in batches whose stride is not a whole number of heads.
    (lambda: _heads_per_batch(torch.randn(2, 5, 192)), "8, 5, 16, 16, 192, 4, 960"),
], ids=["expanded", "one_row", "heads_per_batch"])
def test_strided_operands_are_read_in_place_in_eager_calls(make_q, layout):
    torch.manual_seed(0)
    q = make_q()
    heads = q.shape[0] * (q.shape[1] if q.dim() == 4 else 1)
    k, v = torch.randn(heads, 7, 16), torch.randn(heads, 7, 16)
    counters.reset()
    out = torch.ops.spyre.attention(q, k, v, None, 0.25, False)
    assert dict(counters.fallbacks) == {} and counters.kernels_run == 1
    [kernel] = counters.per_kernel
    assert f"query_layout = array<i64: {layout}>" in kernel.mlir
    dense = q.reshape(heads, *q.shape[-2:])
    attention_close(out.reshape(heads, *out.shape[-2:]),
                    F.scaled_dot_product_attention(dense, k, v, scale=0.25))


def test_operands_of_another_rank_are_refused_clearly():
    k = v = torch.randn(4, 7, 16)
    with pytest.raises(ValueError, match=r"\(heads, L, D\) or \(batch, heads, L, D\), not a "
                                         r"tensor of shape \(4, 16\)"):
        torch.ops.spyre.attention(torch.randn(4, 16), k, v, None, 0.25, False)


def test_projections_spanning_more_than_a_core_addresses_are_copied(monkeypatch, tmp_path):
    """Read in place, each of q, k and v spans its whole batch of
    projections; where that is more than a core addresses (the card's
    per-core span, 256 KiB here), the operands are copied dense and the
    fused kernel still runs, rather than attention decomposed."""
    import re
    from spyre_mlir import simulator as sim
    from spyre_mlir.inductor import attention
    card = open(sim.arch_path()).read()
    assert re.search(r"per_core_span_bytes = \d+", card)
    small = tmp_path / "card.toml"
    small.write_text(re.sub(r"per_core_span_bytes = \d+", "per_core_span_bytes = 262144", card))
    monkeypatch.setenv("SPYRE_ARCH", str(small))
    torch.manual_seed(0)
    b, length, heads, d = 4, 64, 16, 16
    x = torch.randn(b, length, 3 * heads * d)
    q, k, v = (t.view(b, length, heads, d).transpose(1, 2) for t in x.split(heads * d, -1))
    assert attention.compiles(q, k, v, None, 0.25, False, b) is not None  # in place: too wide
    counters.reset()
    out = attention.fused(q, k, v, None, False, 0.25)
    assert out is not None and dict(counters.fallbacks) == {}
    attention_close(out, F.scaled_dot_product_attention(q, k, v, scale=0.25))


# --------------------------------------------------------------------------
# Hand-written attention (manual_attention.py): rewritten into
# scaled_dot_product_attention before AOTAutograd, so the card runs it fused.

def hf_eager_attention(q, k, v, mask):
    """As transformers' eager_attention_forward (scaling, additive mask,
    f32 softmax cast back, inference dropout)."""
    w = torch.matmul(q, k.transpose(2, 3)) * (q.shape[-1] ** -0.5)
    w = w + mask
    w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
    w = F.dropout(w, p=0.1, training=False)
    return torch.matmul(w, v)


def nano_gpt_attention(q, k, v):
    """As nanoGPT: a causal buffer through masked_fill(-inf), divided scale."""
    length = q.shape[-2]
    causal = torch.tril(torch.ones(length, length, dtype=torch.bool))
    att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
    att = att.masked_fill(causal == 0, float("-inf"))
    return F.softmax(att, dim=-1) @ v


def unscaled_attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


def gptj_attention(q, k, v, mask):
    """As GPT-J's _attn: q and k cast to float32 first, scaled, the mask
    added, the probabilities cast back."""
    w = torch.matmul(q.to(torch.float32), k.to(torch.float32).transpose(-1, -2))
    w = w / math.sqrt(q.shape[-1])
    w = F.softmax(w + mask, dim=-1).to(v.dtype)
    return torch.matmul(w, v)


def codegen_attention(q, k, v, mask):
    """As CodeGen's _attn: the mask added before the scale, here a power of
    two (head size 16), which scales the mask exactly."""
    w = torch.matmul(q.to(torch.float32), k.to(torch.float32).transpose(-1, -2))
    w = (w + mask) / math.sqrt(q.shape[-1])
    return torch.matmul(torch.nn.Softmax(dim=-1)(w).to(v.dtype), v)


MANUAL = {"hf_eager": (hf_eager_attention, True), "nano_gpt": (nano_gpt_attention, False),
          "unscaled": (unscaled_attention, False), "gptj": (gptj_attention, True),
          "codegen": (codegen_attention, True)}


def manual_inputs(with_mask, dtype=torch.float16):
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, L, E, dtype=dtype) for _ in range(3))
    return (q, k, v, torch.randn(B, 1, L, L, dtype=dtype)) if with_mask else (q, k, v)


@pytest.mark.parametrize("name", list(MANUAL))
def test_hand_written_attention_runs_fused(name):
    fn, with_mask = MANUAL[name]
    args = manual_inputs(with_mask)
    from spyre_mlir.inductor.manual_attention import fuse_manual_attention
    assert fuse_manual_attention(dynamo_graph(fn, *args).graph) == 1
    actual = compiled(fn, *args)
    assert _ran_fused() and dict(counters.fallbacks) == {}
    attention_close(actual.float(), fn(*[a.float() for a in args]))


def test_hand_written_attention_left_alone():
    """Probabilities read elsewhere (returned), or a softmax over another
    axis: not attention as scaled_dot_product_attention computes it."""
    from spyre_mlir.inductor.manual_attention import fuse_manual_attention

    def probabilities_returned(q, k, v):
        p = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return p @ v, p

    def other_axis(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1), dim=-2) @ v

    def scaled_after_the_mask_by_3(q, k, v):
        # Scaling the mask by 1/3 would round it once more than eager does.
        mask = torch.ones_like(q[..., :1]) @ torch.ones_like(k[..., :1]).transpose(-2, -1)
        return torch.softmax((q @ k.transpose(-2, -1) + mask) / 3.0, dim=-1) @ v

    args = manual_inputs(False, torch.float32)
    for fn in (probabilities_returned, other_axis, scaled_after_the_mask_by_3):
        assert fuse_manual_attention(dynamo_graph(fn, *args).graph) == 0
        actual = compiled(fn, *args)
        assert not _ran_fused() and dict(counters.fallbacks) == {}
        expected = fn(*args)
        for a, e in zip(actual if isinstance(actual, tuple) else (actual,),
                        expected if isinstance(expected, tuple) else (expected,)):
            close(a, e, L)


def alibi_attention(q, k, v, alibi, mask=None, beta=1.0):
    """As BLOOM: heads folded into the batch, the ALiBi bias as baddbmm's
    input, the mask added to the scores viewed by head."""
    b, h, length, d = q.shape
    fold = (b * h, length, d)
    scores = alibi.baddbmm(batch1=q.reshape(fold), batch2=k.reshape(fold).transpose(-1, -2),
                           beta=beta, alpha=d ** -0.5)
    w = scores.view(b, h, length, -1)
    if mask is not None:
        w = w + mask
    p = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
    return torch.bmm(p.view(b * h, length, -1), v.reshape(fold))


@pytest.mark.parametrize("masked", [False, True])
def test_alibi_attention_runs_fused(masked):
    from spyre_mlir.inductor.manual_attention import fuse_manual_attention
    q, k, v = manual_inputs(False)
    alibi = torch.randn(B * H, 1, L, dtype=q.dtype)
    args = (q, k, v, alibi) + ((torch.randn(B, 1, L, L, dtype=q.dtype),) if masked else ())
    assert fuse_manual_attention(dynamo_graph(alibi_attention, *args).graph) == 1
    actual = compiled(alibi_attention, *args)
    assert _ran_fused() and dict(counters.fallbacks) == {}
    attention_close(actual.float(), alibi_attention(*[a.float() for a in args]))


def test_alibi_attention_scaled_by_a_non_power_of_two_left_alone():
    # beta * alibi would round the bias once more than eager does.
    from spyre_mlir.inductor.manual_attention import fuse_manual_attention
    q, k, v = manual_inputs(False)
    args = (q, k, v, torch.randn(B * H, 1, L, dtype=q.dtype), None, 0.3)
    assert fuse_manual_attention(dynamo_graph(alibi_attention, *args).graph) == 0


def test_hugging_face_eager_attention_runs_fused():
    """transformers' Llama with attn_implementation="eager" (repeat_kv and
    all): each layer's attention is the fused kernel, over the unrepeated
    key/value heads."""
    import transformers
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2)
    config._attn_implementation = "eager"
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 256, (1, 24))
    actual = compiled(model, ids).logits
    assert counters.per_kernel and _ran_fused() and dict(counters.fallbacks) == {}
    assert kernel_runs("attention") == config.num_hidden_layers
    with torch.no_grad():
        torch.testing.assert_close(actual, model(ids).logits, rtol=2e-2, atol=2e-3)
