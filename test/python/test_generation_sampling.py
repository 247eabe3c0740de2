"""Choosing the next token on the card (spyre_mlir.generation.next_tokens and
the CardSampling logits processor): greedy as eager's argmax; top-k and top-p
thresholds as a sort would give them; samples drawn from the distribution
torch.multinomial would draw from; no CPU fallback, one kernel."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from spyre_mlir import generation  # noqa: E402
from spyre_mlir.inductor import counters  # noqa: E402
from test_torch_scans_sorts import compiled  # noqa: E402


def on_card(fn, *args):
    """Compiled, no CPU fallback (`compiled` checks), and one kernel."""
    result = compiled(fn, *args)
    assert counters.kernels_run == 1
    return result


def logits(rows, vocab, seed=0, dtype=torch.float16):
    return torch.randn(rows, vocab, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_greedy_is_eagers_argmax(dtype):
    x = logits(3, 1000, dtype=dtype)
    x[1, 7] = x[1, 500] = x[1].max() + 1  # equal maxima: the first, as eager
    actual = on_card(lambda x: generation.next_tokens(x, temperature=0), x)
    assert torch.equal(actual, x.argmax(-1))


@pytest.mark.parametrize("vocab", [40, 1000, 32003])
def test_a_samples_argmax_by_parts_is_eagers(vocab):
    # A sample's argmax runs as the maximum of each of 32 parts of the row
    # (so that the noise computed inside it spreads over the cores), then
    # of the parts: the first of equal maxima, across parts too, a NaN the
    # largest, a row of -inf its first position, as eager's argmax.
    x = logits(5, vocab).float()
    x[0, [3, vocab // 2, vocab - 1]] = 9.0  # equal maxima in different parts
    x[1, vocab // 3] = float("nan")
    x[2] = float("-inf")
    x[3, -1] = 9.0                          # the last score (beside the padding)
    actual = on_card(generation._argmax, x)
    assert torch.equal(actual, x.argmax(-1))


def test_the_top_k_threshold_is_the_kth_largest_score():
    x = logits(4, 300).float()
    x[1, :40] = 2.5          # repeats across the k-th place
    x[2, 10:] = float("-inf")  # fewer finite scores than k
    for k in (1, 5, 50):
        actual = on_card(lambda x: generation._kth_largest(x, k), x)
        expected = x.topk(k).values[:, -1:]
        if k > 10:
            expected[2] = x[2, :10].min()  # the finite ones are all kept
        assert torch.equal(actual, expected), k


def reference_nucleus(probs, top_p):
    """Hugging Face's TopPLogitsWarper: drop the least likely tokens whose
    cumulative probability (ascending) stays at or below 1 - top_p."""
    ascending, order = probs.sort(-1)
    drop = ascending.cumsum(-1) <= 1 - top_p
    drop[..., -1] = False
    return ~drop.scatter(-1, order, drop)


@pytest.mark.parametrize("top_p", [0.1, 0.5, 0.9, 0.999])
def test_the_nucleus_is_top_ps(top_p):
    probs = (logits(5, 200, seed=1).float() * 2).softmax(-1)
    actual = on_card(lambda p: generation._nucleus(p, top_p), probs)
    assert torch.equal(actual, reference_nucleus(probs, top_p))


def frequencies(tokens, vocab):
    return torch.bincount(tokens.flatten(), minlength=vocab).double() / tokens.numel()


@pytest.mark.parametrize("kwargs, allowed", [
    (dict(temperature=0.7), 8),
    (dict(temperature=1.3, top_k=3), 3),
    (dict(temperature=1.0, top_p=0.6), None),
], ids=["temperature", "top-k", "top-p"])
def test_samples_follow_the_distribution(kwargs, allowed):
    """4096 draws in one call: each token's frequency within 5 standard
    deviations of its probability (softmax of the scaled scores, restricted
    to the top-k or the nucleus), tokens outside never drawn."""
    torch.manual_seed(0)
    vocab, draws = 8, 4096
    row = torch.tensor([2.0, 1.5, 1.2, 0.3, 0.0, -0.5, -1.0, -3.0])
    x = row.expand(draws, vocab).half()
    tokens = on_card(lambda x: generation.next_tokens(x, **kwargs), x)
    scores = x[0].float() / kwargs["temperature"]
    if allowed is None:
        keep = reference_nucleus(scores.softmax(-1), kwargs["top_p"])
    else:
        keep = scores >= scores.topk(allowed).values[-1]
    probs = torch.where(keep, scores, float("-inf")).softmax(-1).double()
    sigma = (probs * (1 - probs) / draws).sqrt()
    observed = frequencies(tokens, vocab)
    assert (observed[~keep] == 0).all()
    assert ((observed - probs).abs() <= 5 * sigma + 1e-9).all(), (observed, probs)
    assert (observed[keep] > 0).all()


def test_bad_sampling_arguments_are_refused():
    for kwargs in (dict(temperature=-1), dict(top_k=-2), dict(top_p=0), dict(top_p=1.5)):
        with pytest.raises(ValueError, match="sampling needs"):
            generation.next_tokens(torch.zeros(1, 4), **kwargs)
        with pytest.raises(ValueError, match="sampling needs"):
            generation.CardSampling(**kwargs)


def test_generate_chooses_tokens_on_the_card():
    """Hugging Face generate with the card's choice: greedy gives eager's
    tokens, and sampling runs with no CPU fallback in any compiled graph."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=64, bos_token_id=0,
        eos_token_id=None)).half().eval()
    ids = torch.randint(0, 256, (1, 12))
    kwargs = dict(max_new_tokens=6, do_sample=False, cache_implementation="static",
                  pad_token_id=0)
    with torch.no_grad():
        expected = model.generate(ids, **kwargs)
        torch._dynamo.reset()
        counters.reset()
        model.forward = torch.compile(model.forward, backend="spyre")
        greedy = model.generate(ids, logits_processor=[generation.CardSampling(0)], **kwargs)
        sampled = model.generate(ids, logits_processor=[generation.CardSampling(0.8, top_k=20)],
                                 **kwargs)
    assert torch.equal(greedy, expected)
    assert dict(counters.fallbacks) == {}
    assert sampled.shape == expected.shape and int(sampled[:, 12:].max()) < 256
