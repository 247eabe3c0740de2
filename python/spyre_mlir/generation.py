"""Helpers for generating text with a Hugging Face causal LM whose forward is
compiled with backend="spyre" (README, "Generating text").

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
