"""Text generation on the simulated card: a Llama-style model from a config
(random weights, nothing downloaded), `model.forward` compiled with
torch.compile(backend="spyre"), Hugging Face's `generate` with a static KV
cache. Prints the prefill's and the decode steps' simulated time against
their rooflines on the card description, simulated tokens per second, and
the host's wall time.

    python examples/generate.py                      # tiny config, checked against eager
    python examples/generate.py --config 1b --prompt-len 512 --new-tokens 8
    python examples/generate.py --model gpt2 --batch 8
    python examples/generate.py --device spyre       # model.to("spyre") first
    python examples/generate.py --temperature 0.8 --top-k 50 --top-p 0.9   # sampling

Rooflines (the card description's peak and device-memory bandwidth):
prefill max(FLOPs / peak, compulsory bytes / bandwidth); a decode step the
bytes it must read (weights, the one embedding row, the cache up to the
position) and write (the new keys and values) over the bandwidth.
"""

from __future__ import annotations

import argparse
import collections
import copy
import functools
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from spyre_mlir import generation  # noqa: E402
from spyre_mlir import simulator as sim  # noqa: E402
from spyre_mlir.inductor import counters  # noqa: E402

# Llama-style configurations: "1b" is TinyLlama-1.1B's shape (22 layers,
# d 2048, 32 heads, 4 key/value heads, MLP 5632, vocabulary 32000).
CONFIGS = {
    "tiny": dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2),
    "1b": dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
               num_attention_heads=32, num_key_value_heads=4),
}


def build(family: str, config: str | dict, max_positions: int) -> torch.nn.Module:
    """A model of CONFIGS[config] (or of the configuration `config`)."""
    import transformers
    c = dict(CONFIGS[config] if isinstance(config, str) else config,
             max_position_embeddings=max_positions, bos_token_id=0, eos_token_id=None)
    # Built in fp16 directly: a 1B model built in f32 first needs twice the memory.
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float16)
    try:
        model = _build(transformers, family, c, max_positions)
    finally:
        torch.set_default_dtype(default)
    return model.to(torch.float16).eval()


def _build(transformers, family, c, max_positions):
    if family == "gpt2":
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
            vocab_size=c["vocab_size"], n_embd=c["hidden_size"], n_layer=c["num_hidden_layers"],
            n_head=c["num_attention_heads"], n_positions=max_positions, bos_token_id=0,
            eos_token_id=None))
    elif family == "granite":
        model = transformers.GraniteForCausalLM(transformers.GraniteConfig(**c))
    else:
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**c))
    return model


class Steps:
    """Wraps the compiled forward and records, per call (the prefill, then
    one per decode step): host wall time, simulated cycles and the host time
    the simulator took."""

    def __init__(self, forward):
        self.calls: list[tuple[float, float, float]] = []
        functools.update_wrapper(self, forward)  # generate reads its signature
        self.forward = forward

    def __call__(self, *args, **kwargs):
        cycles, simulating = counters.simulated_cycles, counters.simulation_seconds
        start = time.perf_counter()
        out = self.forward(*args, **kwargs)
        self.calls.append((time.perf_counter() - start, counters.simulated_cycles - cycles,
                           counters.simulation_seconds - simulating))
        return out


def model_bytes(model) -> tuple[int, int]:
    """Bytes of all parameters, and of the input embedding table (a step
    reads one row of it)."""
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    embedding = model.get_input_embeddings().weight
    tied = embedding is model.get_output_embeddings().weight  # then the head reads it whole
    return total, 0 if tied else embedding.numel() * embedding.element_size()


def kv_bytes_per_position(model) -> int:
    c = model.config
    heads = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
    head_dim = c.hidden_size // c.num_attention_heads
    return 2 * c.num_hidden_layers * heads * head_dim * 2  # keys and values, fp16


def prefill_flops(model, batch: int, prompt: int, numel=torch.Tensor.numel) -> tuple[float, float]:
    """FLOPs of a prefill of `prompt` positions: its weight matrices'
    products and its causal attention's (QK^T and PV). A matrix weight is
    one multiply-add per position (an embedding table is only read), except
    the output projection's: `generate` asks for the last position's logits
    only (`logits_to_keep=1`). `numel` sizes a parameter (a card's shard
    of it under tensor parallelism)."""
    head = model.get_output_embeddings().weight
    tables = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    per_position = sum(numel(p) for p in model.parameters()
                       if p.dim() == 2 and id(p) not in tables and p is not head)
    c = model.config
    attention = 4 * c.num_hidden_layers * c.hidden_size * prompt * prompt / 2
    return batch * 2 * (per_position * prompt + numel(head)), batch * attention


def rooflines(model, batch: int, prompt: int, new_tokens: int):
    """Seconds: the prefill's bound, and each decode step's."""
    arch = sim.default_arch()
    bandwidth, peak = arch.bandwidth_bytes_per_s, arch.peak_flops
    params, embedding = model_bytes(model)
    row = model.config.hidden_size * 2
    weights = params - embedding  # read once per step for the whole batch
    kv = kv_bytes_per_position(model)
    flops = sum(prefill_flops(model, batch, prompt))
    prefill_bytes = weights + batch * (prompt * (row + kv))
    prefill = max(flops / peak, prefill_bytes / bandwidth)
    decode = [(weights + batch * (row + kv * (prompt + t) + kv)) / bandwidth
              for t in range(new_tokens - 1)]
    return prefill, decode


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=list(CONFIGS), default="tiny")
    parser.add_argument("--model", choices=["llama", "granite", "gpt2"], default="llama")
    parser.add_argument("--prompt-len", type=int, default=12)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.0,
                        help="0 (default): greedy; else sampling, on the card as the "
                             "greedy choice (spyre_mlir.generation.CardSampling)")
    parser.add_argument("--top-k", type=int, default=0, help="sample among the k most likely")
    parser.add_argument("--top-p", type=float, default=1.0,
                        help="sample within the most likely tokens of this probability")
    parser.add_argument("--device", choices=["cpu", "spyre"], default="cpu",
                        help="where the model's tensors live: spyre is the card's memory "
                             "(spyre_mlir.device); generate's own ops then run eagerly on "
                             "the CPU, counted as \"eager\" fallbacks")
    parser.add_argument("--no-check", action="store_true",
                        help="skip eager generation (on by default for the tiny config)")
    args = parser.parse_args(argv)
    if args.new_tokens < 2:
        parser.error("--new-tokens must be at least 2 (a prefill and a decode step)")
    if args.prompt_len < 1 or args.batch < 1:
        parser.error("--prompt-len and --batch must be at least 1")
    if args.temperature < 0 or args.top_k < 0 or not 0 < args.top_p <= 1:
        parser.error("--temperature and --top-k must be at least 0, --top-p in (0, 1]")

    torch.manual_seed(0)
    bucket = generation.bucket_length(args.prompt_len)
    model = build(args.model, args.config, bucket + args.new_tokens)
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.prompt_len))
    ids, mask = generation.pad_to_bucket(ids, pad_token_id=0)
    check = not args.no_check and args.config == "tiny" and args.temperature == 0
    eager = copy.deepcopy(model) if check else None
    if args.device == "spyre":
        import spyre_mlir.device
        spyre_mlir.device.register()
        model, ids, mask = model.to("spyre"), ids.to("spyre"), mask.to("spyre")

    steps = Steps(torch.compile(model.forward, backend="spyre"))
    model.forward = steps
    # The next token is chosen on the card; generate's greedy step then only
    # reads the choice off.
    choice = generation.CardSampling(args.temperature, args.top_k, args.top_p)
    generate = functools.partial(model.generate, max_new_tokens=args.new_tokens, do_sample=False,
                                 cache_implementation="static", logits_processor=[choice])
    counters.reset()
    start = time.perf_counter()
    with torch.no_grad():
        out = generate(ids, attention_mask=mask)  # compiles the prefill and the decode step
    first = time.perf_counter() - start
    compiled_fallbacks = dict(counters.fallbacks)
    steps.calls.clear()
    choice.cycles.clear()
    counters.reset()
    with torch.no_grad():
        out = generate(ids, attention_mask=mask)  # everything compiled: the measured run
    tokens = out[:, bucket:].cpu()

    params = sum(p.numel() for p in model.parameters())
    print(f"{args.model} '{args.config}' ({params / 1e6:.1f} M parameters, fp16), batch "
          f"{args.batch}, prompt {args.prompt_len} tokens padded to {bucket}, "
          f"{args.new_tokens} new tokens, card '{sim.default_arch().name}'")
    fallbacks = collections.Counter(compiled_fallbacks) + counters.fallbacks
    # On the device, generate's own ops (argmax, cat, ...) are eager ops on
    # spyre tensors, run on the CPU: shown apart from the compiled graphs'.
    eager_ops = sum(v for k, v in fallbacks.items() if k.startswith("eager "))
    fallbacks = collections.Counter({k: v for k, v in fallbacks.items()
                                     if not k.startswith("eager ")})
    print(f"first generate (compiles): {first:.1f} s; CPU fallbacks in compiled graphs: "
          f"{sum(fallbacks.values())}{' ' + str(dict(fallbacks.most_common(8))) if fallbacks else ''}"
          f"{f'; eager ops on spyre tensors (CPU): {eager_ops}' if args.device == 'spyre' else ''}")
    clock = sim.default_arch().clock_hz
    prefill_bound, decode_bounds = rooflines(model, args.batch, bucket, args.new_tokens)
    (prefill_wall, prefill_cycles, _), *decode = steps.calls
    prefill_s = prefill_cycles / clock
    print(f"prefill: {prefill_s * 1e6:10.1f} us simulated, roofline {prefill_bound * 1e6:10.1f} us"
          f" ({prefill_s / prefill_bound:.2f}x); host {prefill_wall:.2f} s")
    decode_s = sum(c for _, c, _ in decode) / clock / len(decode)
    decode_bound = sum(decode_bounds) / len(decode_bounds)
    wall = sum(w for w, _, _ in decode) / len(decode)
    overhead = sum(w - s for w, _, s in decode) / len(decode)
    print(f"decode:  {decode_s * 1e6:10.1f} us simulated per step, roofline "
          f"{decode_bound * 1e6:10.1f} us ({decode_s / decode_bound:.2f}x); "
          f"{args.batch / decode_s:,.0f} tokens/s simulated")
    how = ("greedy" if args.temperature == 0 else
           f"sampled at temperature {args.temperature}, top-k {args.top_k or 'off'}, "
           f"top-p {args.top_p}")
    print(f"token choice ({how}) on the card: "
          f"{sum(choice.cycles) / len(choice.cycles) / clock * 1e6:.1f} us simulated per token")
    print(f"host per decode step: {wall * 1e3:.1f} ms wall, of which {overhead * 1e3:.1f} ms "
          f"outside the simulator")
    if check:
        compare_with_eager(eager, ids.cpu(), mask.cpu(), tokens, args.new_tokens)


def compare_with_eager(eager, ids, mask, tokens, new_tokens) -> None:
    """Greedy tokens against eager's. Where they part, eager's two best
    logits are printed: a tie within DLFloat16's rounding (the card's 16-bit
    type keeps 9 fraction bits, fp16 10) may go either way; a wider gap is a
    wrong result and fails."""
    with torch.no_grad():
        expected = eager.generate(ids, attention_mask=mask, max_new_tokens=new_tokens,
                                  do_sample=False, cache_implementation="static")
    expected = expected[:, ids.shape[1]:]
    if torch.equal(tokens, expected):
        print(f"tokens identical to eager ({new_tokens} per sequence)")
        return
    row, step = next((r, t) for r in range(tokens.shape[0]) for t in range(new_tokens)
                     if tokens[r, t] != expected[r, t])
    prefix = torch.cat([ids[row:row + 1], expected[row:row + 1, :step]], 1)
    prefix_mask = torch.cat([mask[row:row + 1], mask.new_ones(1, step)], 1)
    with torch.no_grad():
        logits = eager(prefix, attention_mask=prefix_mask).logits[0, -1].float()
    best, second = logits.topk(2).values.tolist()
    tie = best - second <= 2.0 ** -8 * max(abs(best), abs(second))
    print(f"tokens identical to eager for {step} of {new_tokens} (sequence {row}); then the "
          f"card chose {int(tokens[row, step])}, eager {int(expected[row, step])}: eager's best "
          f"logits {best:.6g} and {second:.6g}, "
          f"{'a tie within DLFloat16 rounding' if tie else 'NOT a tie: a wrong result'}")
    if not tie:
        sys.exit(1)

if __name__ == "__main__":
    main()
