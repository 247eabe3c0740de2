"""Hugging Face transformers models (built from small configs, random
weights, nothing downloaded) with torch.compile(backend="spyre") against
eager: zero CPU fallbacks, results within DLFloat16 tolerance."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from spyre_mlir.inductor import counters  # noqa: E402
from eager_compare import kernel_runs  # noqa: E402
from test_torch_ops import tolerance  # noqa: E402

transformers = pytest.importorskip("transformers")

VOCAB, HIDDEN, LAYERS, HEADS, SEQ = 256, 64, 2, 4, 16


def gpt2(attn):
    config = transformers.GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS,
                                     n_head=HEADS, n_positions=2 * SEQ, bos_token_id=0,
                                     eos_token_id=0, attn_implementation=attn)
    return transformers.GPT2LMHeadModel(config)


def bert(attn):
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                                     num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                     intermediate_size=2 * HIDDEN,
                                     max_position_embeddings=2 * SEQ, attn_implementation=attn)
    return transformers.BertModel(config)


def llama(attn):
    # Two key/value heads for four query heads: grouped-query attention.
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                                      num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                      num_key_value_heads=HEADS // 2,
                                      intermediate_size=2 * HIDDEN,
                                      max_position_embeddings=2 * SEQ, bos_token_id=0,
                                      eos_token_id=0, attn_implementation=attn)
    return transformers.LlamaForCausalLM(config)


def opt(attn):
    config = transformers.OPTConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                                    num_attention_heads=HEADS, ffn_dim=2 * HIDDEN,
                                    word_embed_proj_dim=HIDDEN, max_position_embeddings=2 * SEQ,
                                    attn_implementation=attn)
    return transformers.OPTForCausalLM(config)


def bloom(attn):
    config = transformers.BloomConfig(vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=LAYERS,
                                      n_head=HEADS, attn_implementation=attn)
    return transformers.BloomForCausalLM(config)


MODELS = {"gpt2": gpt2, "bert": bert, "llama": llama}


def inputs(padded):
    ids = torch.randint(0, VOCAB, (2, SEQ))
    mask = torch.ones(2, SEQ, dtype=torch.long)
    if padded:
        mask[1, SEQ // 2:] = 0  # the second sequence is half padding
    return ids, mask


def compare(actual, expected, padded_mask=None):
    if padded_mask is not None:  # padded positions are not compared
        keep = padded_mask.bool()
        actual, expected = actual[keep], expected[keep]
    torch.testing.assert_close(actual, expected, **tolerance(torch.float16, HIDDEN))


def compiled_and_eager(model, ids, mask):
    """The model's first output through backend="spyre" and in eager."""
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        expected = model(input_ids=ids, attention_mask=mask)[0]
        actual = torch.compile(model, backend="spyre")(input_ids=ids, attention_mask=mask)[0]
    return actual, expected


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("name", list(MODELS))
def test_forward(name, attn):
    torch.manual_seed(0)
    model = MODELS[name](attn).eval()
    ids, mask = inputs(padded=name == "bert")
    actual, expected = compiled_and_eager(model, ids, mask)
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run > 0
    compare(actual, expected, mask if name == "bert" else None)


def modernbert(attn):
    config = transformers.ModernBertConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                                           intermediate_size=2 * HIDDEN, num_hidden_layers=2,
                                           num_attention_heads=HEADS, local_attention=8,
                                           pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                           cls_token_id=1, sep_token_id=2,
                                           attn_implementation=attn)
    return transformers.ModernBertModel(config)


@pytest.mark.parametrize("name", ["opt", "bloom", "llama", "modernbert"])
def test_padded_batch(name):
    """A padded batch's int64 attention mask: OPT and BLOOM count positions
    with its running sum (inductor/mask_inputs.py), Llama's mask has a
    causal term (inductor/causal_masks.py), ModernBERT's local attention's
    window |row - col| <= w reaches the card as one index value of two loops
    (test_torch_index_values.py; it sent the attention to the CPU, 22 ops).
    Nothing runs on the CPU."""
    torch.manual_seed(0)
    # transformers has no sdpa attention for BLOOM.
    model = {"opt": opt, "bloom": bloom, "llama": llama, "modernbert": modernbert}[name](
        "eager" if name == "bloom" else "sdpa").eval()
    ids, mask = inputs(padded=True)
    actual, expected = compiled_and_eager(model, ids, mask)
    assert dict(counters.fallbacks) == {}
    compare(actual, expected, mask)


def test_longformer_sliding_window_attention():
    # Its chunked attention masks combine index conditions with Inductor's
    # bitwise and_, which had no vector-unit form: 28 ops fell back.
    config = transformers.LongformerConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                                           num_hidden_layers=1, num_attention_heads=HEADS,
                                           intermediate_size=2 * HIDDEN, attention_window=4,
                                           max_position_embeddings=4 * SEQ, pad_token_id=1)
    torch.manual_seed(0)
    model = transformers.LongformerModel(config).eval()
    actual, expected = compiled_and_eager(model, *inputs(padded=False))
    assert dict(counters.fallbacks) == {}
    compare(actual, expected)


@pytest.mark.parametrize("experts", ["batched_mm", "grouped_mm"])
def test_mixture_of_experts(experts):
    # README: both run on the card; the default, grouped_mm, is transformers'
    # custom op, decomposed in spyre compiles (experts.py).
    config = transformers.MixtralConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                                        intermediate_size=2 * HIDDEN, num_hidden_layers=1,
                                        num_attention_heads=HEADS, num_key_value_heads=2,
                                        num_local_experts=4, num_experts_per_tok=2,
                                        max_position_embeddings=2 * SEQ)
    torch.manual_seed(0)
    model = transformers.MixtralModel._from_config(config, experts_implementation=experts).eval()
    actual, expected = compiled_and_eager(model, *inputs(padded=False))
    assert dict(counters.fallbacks) == {}
    compare(actual, expected)


def test_gpt2_gradients():
    """A language-model loss and its gradients: attention's backward too."""
    torch.manual_seed(0)
    model = gpt2("sdpa").eval()  # eval: no dropout
    ids, _ = inputs(padded=False)

    def gradients(fn):
        model.zero_grad()
        loss = fn(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}

    expected_loss, expected = gradients(model)
    torch._dynamo.reset()
    counters.reset()
    actual_loss, actual = gradients(torch.compile(model, backend="spyre"))
    assert dict(counters.fallbacks) == {}
    torch.testing.assert_close(actual_loss, expected_loss, **tolerance(torch.float16, HIDDEN))
    for name in expected:
        scale = expected[name].abs().max().clamp(min=1e-3)
        torch.testing.assert_close(actual[name] / scale, expected[name] / scale,
                                   **tolerance(torch.float16, HIDDEN), msg=name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_resnet_image_classification(dtype):
    """A ResNet (bottleneck blocks, batch norm, a 7x7 stride-2 stem, max
    pooling, stride-2 downsampling, average pooling) classifies on the card:
    its convolutions are spyre.conv2d kernels, nothing runs on the CPU."""
    torch.manual_seed(0)
    config = transformers.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64, 128],
                                       depths=[1, 1, 1, 1], layer_type="bottleneck",
                                       num_labels=10)
    model = transformers.ResNetForImageClassification(config).to(dtype).eval()
    x = torch.randn(2, 3, 64, 64).to(dtype)
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        expected = model(x).logits
        actual = torch.compile(model, backend="spyre")(x).logits
    assert dict(counters.fallbacks) == {}
    assert "conv2d" in counters.cycles_per_kernel
    torch.testing.assert_close(actual, expected, **tolerance(dtype, 64 * 9))


def _mobilenet_v1():
    return transformers.MobileNetV1Model(
        transformers.MobileNetV1Config(image_size=64, depth_multiplier=0.25))


def _mobilenet_v2():
    return transformers.MobileNetV2Model(
        transformers.MobileNetV2Config(image_size=64, depth_multiplier=0.35))


def _convnext_v2():
    return transformers.ConvNextV2Model(transformers.ConvNextV2Config(
        hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], image_size=64))


def _poolformer():
    return transformers.PoolFormerModel(transformers.PoolFormerConfig(
        hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1]))


def _hidden_states_as_eager(make, dtype, images):
    """Runs the vision model `make` builds on `images` random images, eager
    and compiled: nothing on the CPU, every hidden state as eager's. Batch
    statistics are drawn so that ReLU6 does not clip everything. Returns the
    model."""
    torch.manual_seed(0)
    model = make().to(dtype).eval()
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.2, 0.2)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.2, 0.2)
    x = torch.randn(images, 3, 64, 64, generator=torch.Generator().manual_seed(2)).to(dtype)
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        expected = model(x, output_hidden_states=True)
        actual = torch.compile(model, backend="spyre")(x, output_hidden_states=True)
    assert dict(counters.fallbacks) == {}
    for got, want in zip((*actual.hidden_states, actual.last_hidden_state),
                         (*expected.hidden_states, expected.last_hidden_state)):
        scale = want.abs().max().clamp(min=1e-3)
        torch.testing.assert_close(got / scale, want / scale, **tolerance(dtype, 64 * 9))
    return model


def _efficientnet():
    # Its pooler, AvgPool2d(hidden_dim, ceil_mode=True) over the last map,
    # fell back to the CPU ("an index that is not affine in a reduction
    # loop"); a window over the whole plane is now its mean (pooling.py).
    return transformers.EfficientNetModel(transformers.EfficientNetConfig(
        image_size=64, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("make", [_mobilenet_v1, _mobilenet_v2, _convnext_v2, _poolformer,
                                  _efficientnet],
                         ids=["mobilenet_v1", "mobilenet_v2", "convnext_v2", "poolformer",
                              "efficientnet"])
def test_mobile_convnets(make, dtype):
    """Depthwise convolutions (spyre.conv2d in chunks of channels), the
    explicit TF-style zero padding before them folded into the kernel's
    own, 7x7 depthwise ones, GroupNorm statistics after a per-channel
    scale, a pooling window over the whole map: every hidden state as
    eager's, nothing on the CPU."""
    _hidden_states_as_eager(make, dtype, images=2)
    assert "conv2d" in counters.cycles_per_kernel


def _resnet():
    return transformers.ResNetModel(transformers.ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
        layer_type="bottleneck"))


@pytest.mark.parametrize("make", [_mobilenet_v1, _mobilenet_v2, _resnet],
                         ids=["mobilenet_v1", "mobilenet_v2", "resnet"])
def test_one_image_pointwise_convolutions_are_products(make):
    """With one image, the pointwise (1x1, stride 1) convolutions run as
    products, each with its BatchNorm, ReLU6 or residual in the product's
    epilogue: every hidden state as eager's, nothing on the CPU."""
    model = _hidden_states_as_eager(make, torch.float16, images=1)
    pointwise = sum(isinstance(m, torch.nn.Conv2d) and m.kernel_size == (1, 1) and
                    m.stride == (1, 1) for m in model.modules())
    convolutions = sum(isinstance(m, torch.nn.Conv2d) for m in model.modules())
    conv2d_runs = sum(runs for launcher, (runs, _) in counters.per_kernel.items()
                      if launcher.name == "conv2d")
    assert pointwise > 0 and conv2d_runs == convolutions - pointwise


# Other families, as a user would bring them (2026-12-04 sweep): an
# encoder-decoder, vision transformers with patch and window attention, a
# state-space model and a speech encoder with a convolutional front end.
def _t5():
    config = transformers.T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=16, d_ff=2 * HIDDEN,
                                   num_layers=LAYERS, num_heads=HEADS)
    return transformers.T5Model(config), lambda ids: dict(input_ids=ids,
                                                          decoder_input_ids=ids[:, :5])


def _vit():
    config = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=HIDDEN,
                                    num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                    intermediate_size=2 * HIDDEN)
    return transformers.ViTModel(config), lambda ids: dict(pixel_values=_pixels())


def _swin():
    config = transformers.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                                     num_heads=[2, 4], window_size=4)
    return transformers.SwinModel(config), lambda ids: dict(pixel_values=_pixels())


def _mamba():
    config = transformers.MambaConfig(vocab_size=VOCAB, hidden_size=HIDDEN,
                                      num_hidden_layers=LAYERS, state_size=8)
    return transformers.MambaModel(config), lambda ids: dict(input_ids=ids)


def _wav2vec2():
    config = transformers.Wav2Vec2Config(
        hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN, conv_dim=(16, 16), conv_stride=(5, 2),
        conv_kernel=(10, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    return transformers.Wav2Vec2Model(config), lambda ids: dict(
        input_values=torch.randn(2, 800, generator=torch.Generator().manual_seed(3)))


def _pixels():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2))


@pytest.mark.parametrize("make", [_t5, _vit, _swin, _mamba, _wav2vec2],
                         ids=["t5", "vit", "swin", "mamba", "wav2vec2"])
def test_other_families(make):
    torch.manual_seed(0)
    model, arguments = make()
    model.eval()
    kwargs = arguments(torch.randint(3, VOCAB, (2, 12)))
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        expected = model(**kwargs)[0]
        actual = torch.compile(model, backend="spyre")(**kwargs)[0]
    assert dict(counters.fallbacks) == {}
    assert counters.kernels_run > 0
    compare(actual, expected)


def _bloom_over_256_tokens():
    config = transformers.BloomConfig(vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=1,
                                      n_head=HEADS, attn_implementation="eager")
    torch.manual_seed(0)
    model = transformers.BloomModel(config).half().eval()
    ids = torch.randint(0, VOCAB, (1, 256))
    with torch.compiler.config.patch(force_disable_caches=True):
        actual, expected = compiled_and_eager(model, ids, torch.ones_like(ids))
    assert dict(counters.fallbacks) == {}
    compare(actual, expected)


def test_bloom_in_fp16_over_256_tokens(kernels):
    """BLOOM 64 wide in fp16 over 256 tokens, where the small tests' 32 rows
    do not reach: its MLP runs as one kernel (a chain from 64 rows: one
    hidden slice per row group, whose epilogue once read the partial sums
    before the product wrote them), and its attention, ALiBi bias and all,
    as the fused kernel (manual_attention.py)."""
    _bloom_over_256_tokens()
    assert any(k.count("spyre.matmul") == 2 for k in kernels)  # the MLP's kernel
    assert kernel_runs("attention") == 1


def test_bloom_softmax_keeps_its_exponentials_in_lx(kernels, monkeypatch):
    """With BLOOM's attention decomposed (as before it was fused), its
    softmax keeps its f32 exponentials in LX although the value heads' copy
    sits between them and their sum (spyre-fuse-rows passes over it)."""
    from spyre_mlir import compiler
    from spyre_mlir.inductor import manual_attention
    from spyre_mlir.ir import Context

    monkeypatch.setattr(manual_attention, "_alibi_attention", lambda graph, node: False)
    _bloom_over_256_tokens()
    exponentials = f"!spyre.buffer<{HEADS * 256 * 256}xf32>"
    softmax = [k for k in kernels if "math.exp" in k and exponentials in k]
    assert softmax
    with Context():
        module = compiler.compile_module(compiler.parse_module(softmax[0]), stop_after="fuse")
        allocs = compiler.ops_where(module, lambda op: op.name == "spyre.alloc" and
                                    str(op.result.type) == exponentials)
        assert allocs and all(a.operation.parent.name == "spyre.fused" for a in allocs)


@pytest.mark.parametrize("name", ["gptj", "codegen"])
def test_attention_weights_in_fp32_run_fused(name):
    """GPT-J and CodeGen cast q and k to float32 before their hand-written
    attention (CodeGen adds the mask before the scale): each layer's
    attention runs as the fused kernel (manual_attention.py), fp16, a padded
    batch."""
    common = dict(vocab_size=VOCAB, n_embd=128, n_layer=LAYERS, n_head=8, rotary_dim=8,
                  n_positions=2 * SEQ)
    config = (transformers.GPTJConfig if name == "gptj" else transformers.CodeGenConfig)(**common)
    torch.manual_seed(0)
    model = (transformers.GPTJForCausalLM if name == "gptj" else
             transformers.CodeGenForCausalLM)(config).half().eval()
    ids, mask = inputs(padded=True)
    actual, expected = compiled_and_eager(model, ids, mask)
    assert dict(counters.fallbacks) == {}
    assert kernel_runs("attention") == LAYERS
    compare(actual, expected, mask)


def test_bloom_generates_with_fused_attention():
    """Greedy generation compiles the decode step for any cache length
    (symbolic positions): BLOOM's rewritten attention views its heads with
    the positions left free (a view of the first length failed at the
    next), and every step's attention is fused, with eager's tokens."""
    torch.manual_seed(0)
    config = transformers.BloomConfig(vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=1,
                                      n_head=HEADS)
    model = transformers.BloomForCausalLM(config).half().eval()
    ids = torch.randint(3, VOCAB, (1, 20))
    new = 4
    with torch.no_grad():
        expected = model.generate(ids, max_new_tokens=new, do_sample=False, pad_token_id=0)
        model.forward = torch.compile(model.forward, backend="spyre")
        torch._dynamo.reset()
        counters.reset()
        actual = model.generate(ids, max_new_tokens=new, do_sample=False, pad_token_id=0)
    assert torch.equal(actual, expected)
    assert dict(counters.fallbacks) == {}
    assert kernel_runs("attention") == new
