"""One layer of each Hugging Face architecture, against its kernels' bounds.

Each model is built from a small config (1 layer, width 512, 8 heads, random
weights, no downloads), run on 512 tokens (a 224 x 224 image for the vision
models) in fp16 with torch.compile(model, backend="spyre"), twice; the second
run's simulated time is printed beside the sum of its kernels' bounds (the
cost model's max(compute, compulsory traffic) of each kernel, as
`python -m spyre_mlir.report` prints them) and the kernel that loses the most
time against its bound. A kernel far from its bound is a schedule the
compiler gets badly wrong (a layout moving a stick per element, a reduction
on one core); the sum of the bounds is not a roofline of the layer, whose
kernels would fuse further.

    python bench/bench_hf_layers.py [--only NAME,...]
"""

import argparse
import os
import sys
import time

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
VOCAB, WIDTH, HEADS, TOKENS = 1024, 512, 8, 512


def text_models(T):
    c = dict(vocab_size=VOCAB, hidden_size=WIDTH, num_hidden_layers=1, num_attention_heads=HEADS)
    return {
        "gpt2": lambda: T.GPT2LMHeadModel(T.GPT2Config(vocab_size=VOCAB, n_embd=WIDTH, n_layer=1,
                                                       n_head=HEADS, bos_token_id=0,
                                                       eos_token_id=0)),
        "llama": lambda: T.LlamaForCausalLM(T.LlamaConfig(**c, num_key_value_heads=2,
                                                          intermediate_size=1408)),
        "gemma": lambda: T.GemmaForCausalLM(T.GemmaConfig(**c, num_key_value_heads=2, head_dim=64,
                                                          intermediate_size=1408)),
        "gptj": lambda: T.GPTJForCausalLM(T.GPTJConfig(vocab_size=VOCAB, n_embd=WIDTH, n_layer=1,
                                                       n_head=HEADS, rotary_dim=32,
                                                       bos_token_id=0, eos_token_id=0)),
        "codegen": lambda: T.CodeGenForCausalLM(T.CodeGenConfig(
            vocab_size=VOCAB, n_embd=WIDTH, n_layer=1, n_head=HEADS, rotary_dim=32,
            bos_token_id=0, eos_token_id=0)),
        "falcon": lambda: T.FalconForCausalLM(T.FalconConfig(**c)),
        "bloom": lambda: T.BloomForCausalLM(T.BloomConfig(vocab_size=VOCAB, hidden_size=WIDTH,
                                                          n_layer=1, n_head=HEADS)),
        "gpt_neox": lambda: T.GPTNeoXForCausalLM(T.GPTNeoXConfig(**c, intermediate_size=2048)),
        "bert": lambda: T.BertModel(T.BertConfig(**c, intermediate_size=2048)),
        "t5-encoder": lambda: T.T5EncoderModel(T.T5Config(vocab_size=VOCAB, d_model=WIDTH, d_kv=64,
                                                          d_ff=2048, num_layers=1,
                                                          num_heads=HEADS)),
    }


def vision_models(T):
    return {
        "vit": lambda: T.ViTModel(T.ViTConfig(hidden_size=384, num_hidden_layers=1,
                                              num_attention_heads=6, intermediate_size=1536)),
        "swin": lambda: T.SwinModel(T.SwinConfig(embed_dim=64, depths=[1, 1], num_heads=[2, 4])),
        "segformer": lambda: T.SegformerModel(T.SegformerConfig(
            num_encoder_blocks=2, depths=[1, 1], sr_ratios=[8, 4], hidden_sizes=[32, 64],
            num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[4, 4])),
        "resnet": lambda: T.ResNetModel(T.ResNetConfig(embedding_size=32, hidden_sizes=[64, 128],
                                                       depths=[1, 1])),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only these model names, comma separated")
    args = parser.parse_args()
    import transformers as T
    from spyre_mlir import report
    from spyre_mlir.inductor import counters
    only = set(args.only.split(",")) if args.only else None
    models = [(name, make, False) for name, make in text_models(T).items()] + \
        [(name, make, True) for name, make in vision_models(T).items()]
    print(f"{'model':<12}{'sim us':>10}{'bounds us':>11}{'ratio':>7}{'kernels':>9}"
          f"{'fallbacks':>11}   worst kernel (us / bound us)")
    for name, make, vision in models:
        if only and name not in only:
            continue
        start = time.time()
        torch.manual_seed(0)
        model = make().half().eval()
        inputs = (torch.randn(1, 3, 224, 224).half(),) if vision else \
            (torch.randint(3, VOCAB, (1, TOKENS)),)
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="spyre")
        with torch.no_grad(), torch.compiler.config.patch(force_disable_caches=True):
            compiled(*inputs)
            counters.reset()
            compiled(*inputs)
        rows = report.kernel_rows(counters)
        simulated = sum(r.simulated_us for r in rows)
        bounds = sum(r.bound_us or r.simulated_us for r in rows)
        worst = max(rows, key=lambda r: r.lost_us)
        print(f"{name:<12}{simulated:>10.1f}{bounds:>11.1f}{simulated / bounds:>7.2f}"
              f"{len(rows):>9}{sum(counters.fallbacks.values()):>11}   "
              f"{worst.simulated_us:.1f} / {worst.bound_us or 0:.1f} ({', '.join(worst.ops[:3])})"
              f"   [{time.time() - start:.0f} s]", flush=True)


if __name__ == "__main__":
    sys.exit(main())
