"""Helpers for generating text with a Hugging Face causal LM whose forward is
compiled with backend="spyre" (README, "Generating text"): prompts padded to
buckets, and the next token chosen on the card (`CardSampling`, below).

With `cache_implementation="static"`, Hugging Face's `generate` compiles two
graphs: the prefill, shaped by the prompt, and the decode step, whose cache
write position is a tensor, so every token reuses it. A prompt of another
length is another prefill graph, and every kernel of it is compiled again.
`pad_to_bucket` avoids that: prompts are left-padded (with an attention mask
that hides the padding) to a few bucket lengths, so that prompts of
different lengths share compiled code.

Bucket policy: the smallest power of two, at least `MIN_BUCKET` tokens, with
room for one padding token or more. A prompt pays at most about twice its
length in prefill work; a server seeing every length from 1 to 2047 compiles
8 prefill graphs. The padding token is always there because `generate`
drops an attention mask of all ones, and a prefill without a mask is a
graph of its own.
"""

from __future__ import annotations

import math

import torch

#: The shortest bucket: shorter prompts are padded to it.
MIN_BUCKET = 16


def bucket_length(length: int, minimum: int = MIN_BUCKET) -> int:
    """The padded length of a prompt of `length` tokens."""
    if length < 1:
        raise ValueError(f"a prompt needs at least one token, not {length}")
    bucket = minimum
    while bucket <= length:
        bucket *= 2
    return bucket


def pad_to_bucket(input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *,
                  pad_token_id: int, max_length: int | None = None,
                  minimum: int = MIN_BUCKET) -> tuple[torch.Tensor, torch.Tensor]:
    """`input_ids` (batch x length) left-padded to its bucket, and the
    attention mask that hides the padding (generation appends to the right,
    so the padding stays out of the way). `max_length` (the model's cache or
    position limit) caps the bucket; a longer prompt is refused."""
    if input_ids.dim() != 2:
        raise ValueError(f"input_ids must be batch x length, not {tuple(input_ids.shape)}")
    batch, length = input_ids.shape
    if attention_mask is None:
        attention_mask = torch.ones_like(input_ids)
    if attention_mask.shape != input_ids.shape:
        raise ValueError(f"attention_mask {tuple(attention_mask.shape)} does not match "
                         f"input_ids {tuple(input_ids.shape)}")
    bucket = bucket_length(length, minimum)
    if max_length is not None:
        if length > max_length:
            raise ValueError(f"the prompt ({length} tokens) is longer than the model's "
                             f"limit of {max_length}")
        bucket = min(bucket, max_length)
    pad = bucket - length
    ids = torch.cat([input_ids.new_full((batch, pad), pad_token_id), input_ids], dim=1)
    mask = torch.cat([attention_mask.new_zeros((batch, pad)), attention_mask], dim=1)
    return ids, mask


# --------------------------------------------------------------------------
# Choosing the next token on the card.
#
# Hugging Face's generate picks tokens with eager ops (its logits processors,
# then argmax or torch.multinomial) outside the compiled forward. `CardSampling`
# is a logits processor that makes the choice itself, in a graph compiled
# with backend="spyre": it returns scores that are 0 at the chosen token and
# -inf elsewhere, so generate's own greedy argmax (do_sample=False) only reads
# the card's choice off. Sampling uses the Gumbel-max trick, which draws from
# the same distribution as torch.multinomial over softmax(scores) but needs
# only uniform random numbers, logs and an argmax, all of which the card
# runs; its random stream is Inductor's, not eager's, so sampled tokens are
# not eager's tokens for the same seed (greedy ones are).


#: Bits to which the top-k and top-p searches resolve their threshold
#: (f32's precision): a score (or probability) closer than 2^-SEARCH_BITS
#: of the row's range to the threshold may fall on either side of it.
SEARCH_BITS = 24


@torch.compiler.assume_constant_result
def _card_cores() -> int:
    """The cores of the card the choice is compiled for (its description):
    a constant of the traced graph, not a call in it."""
    from .simulator import default_arch
    return default_arch().cores


def _search(low, high, enough):
    """The largest t in [low, high] (to within 2^-SEARCH_BITS of high - low)
    for which enough(t) holds, given that enough(low) does and enough is
    monotone. `enough` takes thresholds (..., ways - 1) and answers for
    each: every pass tries the interval's inner division points at once,
    one reduction with a row per point, so that the card's cores each take
    one (ways = the cores: 31 points, five passes on 32 cores), where
    halving it (one point per pass) is 24 passes of one row on one core."""
    ways = max(_card_cores(), 2)
    passes = math.ceil(SEARCH_BITS / math.log2(ways))
    points = torch.arange(1, ways, device=low.device, dtype=low.dtype)
    for _ in range(passes):
        step = (high - low) / ways
        # The points that pass come first (enough is monotone): the new
        # interval lies between the last of them and the next.
        passed = enough(low + step * points).sum(-1, keepdim=True).to(low.dtype)
        # (No point passing keeps low as it is: a row with no finite score
        # has an infinite step, and 0 x inf is NaN.)
        low, high = (torch.where(passed > 0, low + step * passed, low),
                     torch.where(passed + 1 < ways, low + step * (passed + 1), high))
    return low


def _kth_largest(scores: torch.Tensor, k: int) -> torch.Tensor:
    """The k-th largest score of each row (counting repeats, as the last
    value of torch.topk), keepdim. The card has no sort of a whole
    vocabulary (the scans' comparison sorts stop at MAX_SQUARE), so the
    threshold is searched for: the largest t with k scores at or above it,
    then the smallest score at or above t (_search: passes over the row,
    each counting at a threshold per core); -inf scores (masked tokens) are
    never the threshold."""
    finite = torch.where(scores > float("-inf"), scores, float("inf"))
    low = _search(finite.amin(-1, keepdim=True), scores.amax(-1, keepdim=True),
                  lambda t: (scores.unsqueeze(-2) >= t.unsqueeze(-1)).sum(-1) >= k)
    return torch.where(scores >= low, scores, float("inf")).amin(-1, keepdim=True)


def _nucleus(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """keep (..., vocab): the most likely tokens whose probabilities add up
    to at least top_p (the nucleus of top-p sampling; at least the most
    likely token): the tokens at or above the largest threshold that keeps
    that much, searched for (a sort would be n^2 on the card)."""
    most = probs.amax(-1, keepdim=True)
    low = _search(torch.zeros_like(most), most,
                  lambda t: torch.where(probs.unsqueeze(-2) >= t.unsqueeze(-1),
                                        probs.unsqueeze(-2), 0.0).sum(-1) >= top_p)
    return (probs >= low) | (probs == most)


def _argmax(x: torch.Tensor) -> torch.Tensor:
    """x.argmax(-1), the first of equal maxima (a NaN the largest) as eager:
    the maximum of each of as many parts of the row as the card has cores,
    then the first part holding the largest of them (padding is -inf, after
    every score). The card runs each row of a reduction on one core, so the
    work Inductor computes inside it (a sample's noise, about forty vector
    operations a score) runs on as many cores as parts. (A greedy argmax
    reads the scores only: one row is faster.)"""
    n, parts = x.shape[-1], _card_cores()
    if parts < 2 or n < 2 * parts:
        return x.argmax(-1)
    width = -(-n // parts)
    padded = torch.nn.functional.pad(x, (0, width * parts - n), value=float("-inf"))
    values, at = padded.reshape(*x.shape[:-1], parts, width).max(-1)
    part = values.argmax(-1, keepdim=True)
    # The chosen part's position, picked by comparison (a gather would end
    # the kernel) and a maximum, which the card takes in f32: exact for
    # positions below 2^24, which the clamp (no change) tells its range
    # analysis.
    which = torch.arange(parts, device=x.device)
    at = at.clamp(0, width - 1) + which * width
    return torch.where(which == part, at, -1).amax(-1)


def _check_sampling(temperature: float, top_k: int, top_p: float) -> None:
    if temperature < 0 or top_k < 0 or not 0 < top_p <= 1:
        raise ValueError(f"sampling needs temperature >= 0, top_k >= 0 and 0 < top_p <= 1, "
                         f"not {temperature}, {top_k}, {top_p}")


def next_tokens(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0,
                top_p: float = 1.0) -> torch.Tensor:
    """The next token (int64) of each row of `logits` (..., vocab).

    temperature 0 is greedy (argmax, the first of equal maxima as eager).
    Otherwise a sample from softmax(logits / temperature) over the top_k
    most likely tokens (0: every token; repeats of the k-th score are kept,
    as Hugging Face's TopKLogitsWarper keeps them) and, within those, over
    the smallest most likely set whose probability reaches top_p (1: all).
    Compile it with backend="spyre" to run it on the card."""
    _check_sampling(temperature, top_k, top_p)
    if temperature == 0:
        return logits.argmax(-1)
    scores = logits.float() / temperature
    low = float("-inf")
    if 0 < top_k < scores.shape[-1]:
        scores = torch.where(scores < _kth_largest(scores, top_k), low, scores)
    if top_p < 1:
        scores = torch.where(_nucleus(scores.softmax(-1), top_p), scores, low)
    # Gumbel-max: argmax(scores + G), G = -log(-log(U)) with U uniform in
    # [0, 1), is a draw from softmax(scores); U = 0 gives -inf, never chosen.
    gumbel = -torch.log(-torch.log(torch.rand_like(scores)))
    return _argmax(scores + gumbel)


class CardSampling:
    """A Hugging Face logits processor that chooses the next token on the
    card (`next_tokens`, compiled once with backend="spyre"): pass it as
    `model.generate(..., logits_processor=[CardSampling(...)], do_sample=False)`.
    The scores it returns are 0 at the chosen token and -inf elsewhere, so
    generate's greedy step picks exactly that token."""

    def __init__(self, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0):
        _check_sampling(temperature, top_k, top_p)
        self.temperature, self.top_k, self.top_p = temperature, top_k, top_p
        self._choose = torch.compile(self._one_hot, backend="spyre", dynamic=False)
        #: Simulated cycles of each call's choice.
        self.cycles: list[float] = []

    def _one_hot(self, scores: torch.Tensor) -> torch.Tensor:
        chosen = next_tokens(scores, self.temperature, self.top_k, self.top_p)
        positions = torch.arange(scores.shape[-1], device=scores.device)
        zero = torch.zeros((), dtype=scores.dtype, device=scores.device)
        return torch.where(positions == chosen.unsqueeze(-1), zero, float("-inf"))

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        from .inductor import counters
        before = counters.simulated_cycles
        chosen = self._choose(scores)
        self.cycles.append(counters.simulated_cycles - before)
        return chosen
