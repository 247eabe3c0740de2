"""Mixture-of-experts layers: transformers' grouped matrix product (the op its
MoE experts call under torch.compile) runs on the card, in both of its forms
(a gathered expert per row for few rows, a selection among every expert's
product for many), against eager's host loop; and Hugging Face MoE models
(Mixtral, Qwen2-MoE, GraniteMoE) compile with no CPU fallback."""

import copy
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402
from torch._dynamo.utils import counters as dynamo_counters  # noqa: E402

from spyre_mlir.inductor import counters  # noqa: E402
from test_torch_ops import tolerance  # noqa: E402

transformers = pytest.importorskip("transformers")
moe = pytest.importorskip("transformers.integrations.moe")
if not hasattr(moe, "_grouped_mm_fallback"):
    pytest.skip("this transformers has no grouped_mm_fallback op", allow_module_level=True)

grouped = torch.ops.transformers.grouped_mm_fallback


def compiled(fn, *args):
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(fn, backend="spyre")(*args)
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run > 0
    return out


# (rows, experts, rows per expert): 4 * rows < experts gathers each row's
# expert; the others select among all products. Empty experts, and rows
# past the last expert's run (zero in eager), in both.
CASES = {
    "gathered": (2, 12, [0, 1, 0, 0, 1] + [0] * 7),
    "gathered_rows_past_the_last": (3, 16, [1, 0, 0, 1] + [0] * 12),
    "selected": (16, 4, [5, 0, 8, 3]),
    "selected_rows_past_the_last": (12, 3, [4, 0, 5]),
}


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("transposed", [False, True], ids=["kn", "nk_view"])
@pytest.mark.parametrize("case", list(CASES))
def test_grouped_product_matches_eager(case, transposed, dtype):
    rows, experts, counts = CASES[case]
    k, n = 32, 48
    g = torch.Generator().manual_seed(0)
    x = torch.randn(rows, k, generator=g).to(dtype)
    if transposed:  # the down projection's weight.transpose(-2, -1)
        weight = torch.randn(experts, n, k, generator=g).to(dtype).transpose(1, 2)
    else:
        weight = torch.randn(experts, k, n, generator=g).to(dtype)
    offs = torch.cumsum(torch.tensor(counts), 0).to(torch.int32)
    expected = grouped(x, weight, offs)
    actual = compiled(lambda a, w, o: grouped(a, w, o), x, weight, offs)
    torch.testing.assert_close(actual, expected, **tolerance(dtype, k))
    # Rows past the last run are zeros, as eager leaves them.
    assert (actual[int(offs[-1]):] == 0).all()


@pytest.mark.parametrize("case", ["selected", "gathered_rows_past_the_last"])
def test_grouped_product_gradients_match_eager(case):
    """The custom op's backward (transformers' grouped_mm_fallback_backward):
    the rows' gradients through their experts, each expert's weight's from
    its rows (none for an empty expert)."""
    rows, experts, counts = CASES[case]
    g = torch.Generator().manual_seed(3)
    x = torch.randn(rows, 16, generator=g, requires_grad=True)
    weight = torch.randn(experts, 16, 24, generator=g, requires_grad=True)
    offs = torch.cumsum(torch.tensor(counts), 0).to(torch.int32)
    upstream = torch.randn(rows, 24, generator=g)

    def loss(a, w):
        return (grouped(a, w, offs) * upstream).sum()
    expected = torch.autograd.grad(loss(x, weight), (x, weight))
    torch._dynamo.reset()
    counters.reset()
    actual = torch.autograd.grad(torch.compile(loss, backend="spyre")(x, weight), (x, weight))
    assert dict(counters.fallbacks) == {}
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, **tolerance(torch.float32, rows))


def test_the_offsets_are_read_when_the_kernel_runs():
    """The experts' runs are an input, not a constant of the compile: other
    routings reuse the compiled code and give their own products."""
    g = torch.Generator().manual_seed(1)
    x, weight = torch.randn(8, 16, generator=g), torch.randn(4, 16, 24, generator=g)
    fn = torch.compile(lambda a, w, o: grouped(a, w, o), backend="spyre")
    torch._dynamo.reset()
    dynamo_counters.clear()
    counters.reset()
    for counts in ([2, 2, 2, 2], [8, 0, 0, 0], [0, 3, 0, 4]):
        offs = torch.cumsum(torch.tensor(counts), 0).to(torch.int32)
        torch.testing.assert_close(fn(x, weight, offs), grouped(x, weight, offs),
                                   **tolerance(torch.float32, 16))
    assert dynamo_counters["stats"]["unique_graphs"] == 1
    assert dict(counters.fallbacks) == {}


@pytest.mark.parametrize("transposed", [False, True], ids=["kn", "nk_view"])
def test_torchs_grouped_product_matches_eager(transposed):
    """aten._grouped_mm, what transformers' experts call for bf16 weights:
    the same product; eager leaves the rows past the last group undefined."""
    if not hasattr(torch, "_grouped_mm"):
        pytest.skip("this torch has no _grouped_mm")
    g = torch.Generator().manual_seed(2)
    x = torch.randn(6, 16, generator=g).to(torch.bfloat16)
    if transposed:
        weight = torch.randn(3, 32, 16, generator=g).to(torch.bfloat16).transpose(1, 2)
    else:
        weight = torch.randn(3, 16, 32, generator=g).to(torch.bfloat16)
    offs = torch.tensor([1, 1, 4], dtype=torch.int32)
    expected = torch._grouped_mm(x, weight, offs=offs)
    actual = compiled(lambda a, w, o: torch._grouped_mm(a, w, offs=o), x, weight, offs)
    torch.testing.assert_close(actual[:4].float(), expected[:4].float(), rtol=2 ** -7, atol=2 ** -5)
    assert (actual[4:] == 0).all()


VOCAB, HIDDEN = 256, 64
COMMON = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, intermediate_size=2 * HIDDEN, max_position_embeddings=128,
              bos_token_id=0, eos_token_id=None, pad_token_id=0)
MODELS = {
    "mixtral": lambda: transformers.MixtralForCausalLM(transformers.MixtralConfig(
        **COMMON, num_local_experts=4, num_experts_per_tok=2)),
    "qwen2_moe": lambda: transformers.Qwen2MoeForCausalLM(transformers.Qwen2MoeConfig(
        **COMMON, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=64,
        shared_expert_intermediate_size=64)),
    "granitemoe": lambda: transformers.GraniteMoeForCausalLM(transformers.GraniteMoeConfig(
        **COMMON, num_local_experts=8, num_experts_per_tok=2)),
}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", list(MODELS))
def test_moe_model_matches_eager_on_the_card(name, dtype):
    # fp16 experts call transformers' op, bf16 ones torch's.
    torch.manual_seed(0)
    model = MODELS[name]().to(dtype).eval()
    ids = torch.randint(3, VOCAB, (2, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = model(ids).logits
        actual = compiled(model, ids).logits
    close = tolerance(torch.float16, HIDDEN) if dtype == torch.float16 else \
        dict(rtol=2 ** -6, atol=2 ** -4)
    torch.testing.assert_close(actual.float(), expected.float(), **close)


def test_moe_generation_matches_eager_with_one_prefill_and_one_decode_compile():
    """Decode reads a token's two experts out of twelve through the gathered
    form, prefill selects among all twelve."""
    torch.manual_seed(0)
    model = transformers.MixtralForCausalLM(transformers.MixtralConfig(
        **COMMON, num_local_experts=12, num_experts_per_tok=2)).to(torch.float16).eval()
    ids = torch.randint(3, VOCAB, (1, 8), generator=torch.Generator().manual_seed(0))

    def greedy(m):
        with torch.no_grad():
            return m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=16,
                              do_sample=False, cache_implementation="static")
    expected = greedy(copy.deepcopy(model))
    torch._dynamo.reset()
    counters.reset()
    dynamo_counters.clear()
    model.forward = torch.compile(model.forward, backend="spyre")
    actual = greedy(model)
    assert actual[0, 8:].tolist() == expected[0, 8:].tolist()
    assert dict(counters.fallbacks) == {}
    assert dynamo_counters["stats"]["unique_graphs"] == 2
    assert sum(dynamo_counters["recompiles"].values()) == 0


def test_a_moe_training_step_runs_on_the_card():
    torch.manual_seed(0)
    model = MODELS["mixtral"]().train()
    ids = torch.randint(3, VOCAB, (2, 12), generator=torch.Generator().manual_seed(0))
    reference = copy.deepcopy(model)
    reference(input_ids=ids, labels=ids).loss.backward()
    torch._dynamo.reset()
    counters.reset()
    loss = torch.compile(model, backend="spyre")(input_ids=ids, labels=ids).loss
    loss.backward()
    assert dict(counters.fallbacks) == {}
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=2e-2, atol=2e-2 * q.grad.abs().max().item(),
                                   msg=name)
