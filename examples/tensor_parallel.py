"""Tensor parallelism across simulated Spyre cards: one process per card,
the "spyre" torch.distributed backend (spyre_mlir.distributed), PyTorch's
tensor-parallel API on a Llama-style model from transformers (random
weights), `model.forward` compiled with backend="spyre", and Hugging Face's
`generate` with a static KV cache. Rank 0 prints the prefill's and the
decode steps' simulated time per card, with the time the cards spent in
collectives shown apart.

    torchrun --nproc-per-node 4 examples/tensor_parallel.py              # tiny, checked
    torchrun --nproc-per-node 8 examples/tensor_parallel.py --config 1b --prompt-len 32

Every attention and MLP block is split Megatron-style: the query, key,
value, gate and up projections by output columns (ColwiseParallel), the
output and down projections by input rows (RowwiseParallel), so each block
ends in one all-reduce of its activations; the LM head is split by
vocabulary and its logits gathered. A card holds heads / cards query heads
and key/value heads / cards key/value heads, so the key/value head count
must divide by the number of cards: the "1b" configuration is
TinyLlama-1.1B's shape with 8 key/value heads (Llama-3.2-1B has 8) so that
it runs on up to 8 cards.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate as single_card  # noqa: E402

from spyre_mlir import generation  # noqa: E402
from spyre_mlir import simulator as sim  # noqa: E402
from spyre_mlir.distributed import clock_cycles  # noqa: E402
from spyre_mlir.inductor import counters  # noqa: E402

CONFIGS = {
    "tiny": dict(single_card.CONFIGS["tiny"], num_attention_heads=8, num_key_value_heads=8,
                 hidden_size=128),
    "1b": dict(single_card.CONFIGS["1b"], num_key_value_heads=8),
}


def tensor_parallel_plan(model) -> dict:
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel
    plan = {"lm_head": ColwiseParallel(output_layouts=Replicate())}
    for i in range(len(model.model.layers)):
        layer = f"model.layers.{i}."
        for name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                     "mlp.gate_proj", "mlp.up_proj"):
            plan[layer + name] = ColwiseParallel()
        for name in ("self_attn.o_proj", "mlp.down_proj"):
            plan[layer + name] = RowwiseParallel()
    return plan


def build(config: str, max_positions: int, rank: int, cards: int):
    """The model split across the cards. The processes build the whole model
    one after the other and keep their shards, so that only one whole copy is
    in memory at a time: the same seed gives every card the same weights, so
    each takes its shard without sending any (src_data_rank=None)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import parallelize_module
    config_dict = CONFIGS[config]
    heads = config_dict["num_key_value_heads"]
    if heads % cards:
        raise SystemExit(f"{cards} cards cannot split {heads} key/value heads")
    mesh = init_device_mesh("cpu", (cards,))
    model = whole = None
    for turn in range(cards):
        if turn == rank:
            torch.manual_seed(0)
            model = single_card.build("llama", config_dict, max_positions)
            whole = copy.deepcopy(model) if config == "tiny" and rank == 0 else None
            parallelize_module(model, mesh, tensor_parallel_plan(model), src_data_rank=None)
        dist.barrier()
    return model, whole


class Steps:
    """The compiled forward, recording per call this card's simulated clock
    and the part of it spent in collectives (transfer and waiting)."""

    def __init__(self, forward):
        import functools
        functools.update_wrapper(self, forward)
        self.forward, self.calls = forward, []

    def __call__(self, *args, **kwargs):
        before = (clock_cycles(), _in_collectives(), time.perf_counter())
        out = self.forward(*args, **kwargs)
        self.calls.append((clock_cycles() - before[0], _in_collectives() - before[1],
                           time.perf_counter() - before[2]))
        return out


def card_rooflines(model, cards: int, prompt: int, new_tokens: int) -> tuple[float, float]:
    """Seconds: one card's prefill bound (its share of the FLOPs at the
    peak, or its weight shard and cache shard at the bandwidth) and its mean
    decode step bound (its weight shard, the embedding row, its cache shard
    up to the position): what the card would take if collectives were free
    and nothing were repeated on every card."""
    from torch.distributed.tensor import DTensor
    arch = sim.default_arch()

    def local(p):
        return p.to_local() if isinstance(p, DTensor) else p

    def local_bytes(p):
        return local(p).numel() * local(p).element_size()
    params = sum(local_bytes(p) for p in model.parameters())
    embedding = model.get_input_embeddings().weight
    weights = params - local_bytes(embedding)
    c = model.config
    row = c.hidden_size * 2
    kv = single_card.kv_bytes_per_position(model) / cards
    products, attention = single_card.prefill_flops(model, 1, prompt,
                                                    numel=lambda p: local(p).numel())
    flops = products + attention / cards
    prefill = max(flops / arch.peak_flops,
                  (weights + prompt * (row + kv)) / arch.bandwidth_bytes_per_s)
    steps = [(weights + row + kv * (prompt + t) + kv) / arch.bandwidth_bytes_per_s
             for t in range(new_tokens - 1)]
    return prefill, sum(steps) / len(steps)


def _in_collectives() -> float:
    return counters.collective_cycles + counters.collective_wait_cycles


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=list(CONFIGS), default="tiny")
    parser.add_argument("--prompt-len", type=int, default=12)
    parser.add_argument("--new-tokens", type=int, default=8)
    args = parser.parse_args(argv)
    if args.new_tokens < 2:
        parser.error("--new-tokens must be at least 2 (a prefill and a decode step)")
    if args.prompt_len < 1:
        parser.error("--prompt-len must be at least 1")

    dist.init_process_group("spyre")
    rank, cards = dist.get_rank(), dist.get_world_size()
    bucket = generation.bucket_length(args.prompt_len)
    model, whole = build(args.config, bucket + args.new_tokens, rank, cards)
    torch.manual_seed(1)
    ids = torch.randint(0, model.config.vocab_size, (1, args.prompt_len))
    ids, mask = generation.pad_to_bucket(ids, pad_token_id=0)

    steps = Steps(torch.compile(model.forward, backend="spyre"))
    model.forward = steps

    def run():
        with torch.no_grad():
            return model.generate(ids, attention_mask=mask, max_new_tokens=args.new_tokens,
                                  do_sample=False, cache_implementation="static")

    start = time.perf_counter()
    run()  # compiles the prefill and the decode step
    first = time.perf_counter() - start
    dist.barrier()
    steps.calls.clear()
    counters.reset()  # on every card at the same point, so the clocks start together
    tokens = run()[:, bucket:]
    same = [torch.empty_like(tokens) for _ in range(cards)]
    dist.all_gather(same, tokens)
    if rank == 0:
        report(args, model, cards, steps, first, tokens, same)
        if whole is not None:
            single_card.compare_with_eager(whole, ids, mask, tokens, args.new_tokens)
    # Every card leaves the group together: a card that shut its group down
    # and exited while rank 0 still compared with eager was once aborted at
    # exit ("terminate called without an active exception"), failing the run.
    dist.barrier()
    dist.destroy_process_group()


def report(args, model, cards, steps, first, tokens, same) -> None:
    clock = sim.default_arch().clock_hz
    (prefill, prefill_coll, _), *decode = steps.calls
    step = sum(c for c, _, _ in decode) / len(decode)
    step_coll = sum(c for _, c, _ in decode) / len(decode)
    wall = sum(w for _, _, w in decode) / len(decode)
    c = CONFIGS[args.config]
    print(f"llama '{args.config}' (d {c['hidden_size']}, {c['num_hidden_layers']} layers, "
          f"{c['num_attention_heads']} heads, {c['num_key_value_heads']} key/value heads), "
          f"fp16, {cards} card(s) '{sim.default_arch().name}', prompt {args.prompt_len} "
          f"tokens padded to {generation.bucket_length(args.prompt_len)}, "
          f"{args.new_tokens} new tokens")
    print(f"first generate (compiles): {first:.1f} s; CPU fallbacks: "
          f"{sum(counters.fallbacks.values())}; collectives per run: "
          f"{dict(counters.collectives)}")
    prefill_bound, step_bound = card_rooflines(
        model, cards, generation.bucket_length(args.prompt_len), args.new_tokens)
    print(f"prefill: {prefill / clock * 1e6:10.1f} us simulated, of which collectives "
          f"{prefill_coll / clock * 1e6:.1f} us; a card's roofline {prefill_bound * 1e6:.1f} us "
          f"({prefill / clock / prefill_bound:.2f}x)")
    print(f"decode:  {step / clock * 1e6:10.1f} us simulated per step, of which collectives "
          f"{step_coll / clock * 1e6:.1f} us; a card's roofline {step_bound * 1e6:.1f} us "
          f"({step / clock / step_bound:.2f}x); {clock / step:,.0f} tokens/s simulated; "
          f"host {wall * 1e3:.0f} ms per step")
    agree = all(torch.equal(t, tokens) for t in same)
    print(f"tokens on every card {'identical' if agree else 'DIFFER'}: {tokens[0].tolist()}")
    if not agree:
        raise SystemExit("the cards generated different tokens")


if __name__ == "__main__":
    main()
