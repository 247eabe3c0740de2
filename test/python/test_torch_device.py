"""The "spyre" device: model.to("spyre") then torch.compile(model), as with
IBM's torch-spyre. Run in a child process: registering the device changes
Inductor settings for the whole process."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import torch
    import spyre_mlir.device
    from spyre_mlir import models
    from spyre_mlir.inductor import binding, counters
    from spyre_mlir import simulator as sim

    spyre_mlir.device.register()
    torch.manual_seed(0)

    # Eager ops work (through PyTorch's CPU fallback) and copies round-trip.
    x = torch.randn(4, 5)
    s = x.to("spyre")
    assert s.device.type == "spyre"
    torch.testing.assert_close((s * 2 + 1).cpu(), x * 2 + 1)

    # f32 device memory is bound to the simulator without a copy.
    flat = s.reshape(-1)
    array, copied = binding._to_device(flat, sim.DType.f32, sim.default_arch())
    assert not copied and array.ctypes.data == flat.data_ptr()

    model = models.GPTBlock().eval()
    inputs = torch.randn(2, 16, 128)
    expected = model(inputs)
    model = model.to("spyre")
    compiled = torch.compile(model)
    with torch.no_grad():
        for _ in range(2):
            counters.reset()
            out = compiled(inputs.to("spyre"))
            assert out.device.type == "spyre"
            assert dict(counters.fallbacks) == {}, dict(counters.fallbacks)
            assert counters.kernels_run > 0
            torch.testing.assert_close(out.cpu(), expected, rtol=2e-2, atol=5e-3)
    print("ok", counters.kernels_run, counters.simulated_cycles)
""")


def test_model_on_the_spyre_device():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")


MIXED = textwrap.dedent("""
    import torch
    import spyre_mlir.device
    from spyre_mlir.inductor import counters

    spyre_mlir.device.register()

    def f(x, start):
        # A CPU tensor moved to the card inside the graph (a DeviceCopy), as
        # Hugging Face's static cache does with its length: a transfer, not
        # a fallback; a graph input's int64 values are checked per call.
        position = torch.arange(x.shape[1], device=x.device) + start.to(x.device)
        # int64 computed on the host side of the graph may be beyond the
        # card's int32: this add runs as Inductor's CPU code on spyre memory.
        shifted = torch.arange(x.shape[1], device=x.device) + (start + 1).to(x.device)
        return x * 2, position, shifted

    x, start = torch.randn(2, 8, dtype=torch.float16), torch.tensor(5)
    expected = f(x, start)
    compiled = torch.compile(f, backend="spyre")
    for _ in range(2):
        counters.reset()
        out = compiled(x.to("spyre"), start)
        assert all(o.device.type == "spyre" for o in out)
        for o, e in zip(out, expected):
            torch.testing.assert_close(o.cpu(), e)
        assert dict(counters.fallbacks) == {"aten.add.Tensor": 1}, dict(counters.fallbacks)

    # torch.compile's default backend has no CPU version of the graph to fall
    # back to: int64 inputs beyond what its kernels assume raise, never wrong.
    g = torch.compile(lambda i: i * 2 + 1)
    assert g(torch.tensor([3, -4]).to("spyre")).cpu().tolist() == [7, -7]
    try:
        g(torch.tensor([2 ** 31 - 10, 0]).to("spyre"))  # fits int32, its double does not
        raise AssertionError("an int64 input beyond the kernels' range ran")
    except ValueError as e:
        assert "int64 input" in str(e), e
    print("ok")
""")


def test_host_and_spyre_tensors_in_one_graph():
    _run(MIXED)


EAGER = textwrap.dedent("""
    import torch
    import spyre_mlir.device
    from spyre_mlir.inductor import counters, state

    spyre_mlir.device.register()

    # Eager ops on spyre tensors run through PyTorch's CPU fallback: counted,
    # refused in strict mode; copies and views are the device's own.
    x = torch.randn(2, 8)
    counters.reset()
    s = x.to("spyre")
    # Views share the tensor's memory (a CPU fallback would return copies).
    for view in (torch.ops.aten._reshape_alias(s, (16,), (1,)), s.unfold(1, 4, 4),
                 torch.view_as_real(torch.view_as_complex(s.view(2, 4, 2)))):
        assert view.data_ptr() == s.data_ptr()
    assert dict(counters.fallbacks) == {}, dict(counters.fallbacks)
    torch.testing.assert_close(torch.argmax(s, 1).cpu(), torch.argmax(x, 1))
    assert dict(counters.fallbacks) == {"eager aten::argmax.out": 1}, dict(counters.fallbacks)
    state.strict = True
    try:
        torch.argmax(s, 1)
        raise AssertionError("strict mode ran an eager op on the CPU")
    except state.SpyreFallbackError as e:
        assert "eager aten::argmax" in str(e), e
    print("ok")
""")


def test_eager_ops_on_spyre_tensors_are_counted_fallbacks():
    _run(EAGER)


SAVED = textwrap.dedent("""
    import io
    import torch
    import spyre_mlir.device
    from spyre_mlir.inductor import counters

    spyre_mlir.device.register()
    torch.manual_seed(0)
    counters.reset()

    # A storage made without a tensor takes the device's allocator (it
    # crashed on a null one).
    storage = torch.UntypedStorage(20, device="spyre")
    assert storage.device.type == "spyre" and storage.nbytes() == 20

    def saved(obj, **load):
        buffer = io.BytesIO()
        torch.save(obj, buffer)
        buffer.seek(0)
        return torch.load(buffer, **load)

    # torch.save copies storages to the host (set_ on a storage failed
    # through the CPU fallback) and torch.load puts them back on the card.
    x = torch.randn(4, 5)
    s = x.to("spyre")
    back = saved(s)
    assert back.device.type == "spyre" and torch.equal(back.cpu(), x)
    assert saved(s, map_location="cpu").device.type == "cpu"
    assert saved(x, map_location="spyre").device.type == "spyre"
    whole, view = saved([s, s[1:3]])
    assert view.untyped_storage().data_ptr() == whole.untyped_storage().data_ptr()
    assert torch.equal(view.cpu(), x[1:3])
    model = torch.nn.Linear(5, 3).to("spyre")
    other = torch.nn.Linear(5, 3).to("spyre")
    other.load_state_dict(saved(model.state_dict()))
    for a, b in zip(model.parameters(), other.parameters()):
        assert torch.equal(a.cpu(), b.cpu())
    assert dict(counters.fallbacks) == {}, dict(counters.fallbacks)
    print("ok")
""")


def test_spyre_tensors_save_and_load():
    _run(SAVED)


AUTOCAST = textwrap.dedent("""
    import torch
    import spyre_mlir.device
    from spyre_mlir.inductor import counters

    spyre_mlir.device.register()
    torch.manual_seed(0)
    x = torch.randn(4, 16)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.LayerNorm(32), torch.nn.Linear(32, 8))
    on_card = model.to("spyre")
    s = x.to("spyre")
    # Eagerly: products in the autocast type, softmax in f32, as on CUDA.
    with torch.autocast("spyre", dtype=torch.float16):
        y = on_card[0](s)
        assert y.dtype == torch.float16 and y.softmax(-1).dtype == torch.float32
    with torch.autocast("spyre", dtype=torch.bfloat16):
        assert on_card[0](s).dtype == torch.bfloat16
    assert on_card[0](s).dtype == torch.float32
    # Compiled: the casts are in the graph, which runs on the card.
    compiled = torch.compile(on_card)
    counters.reset()
    with torch.no_grad(), torch.autocast("spyre", dtype=torch.float16):
        out = compiled(s)
    assert dict(counters.fallbacks) == {}, dict(counters.fallbacks)
    with torch.no_grad(), torch.autocast("spyre", dtype=torch.float16):
        eager = on_card(s)
    assert out.dtype == eager.dtype == torch.float16
    torch.testing.assert_close(out.cpu().float(), eager.cpu().float(), rtol=2e-2, atol=1e-2)
    print("ok")
""")


def test_autocast_on_the_spyre_device():
    _run(AUTOCAST)


def _run(script: str) -> None:
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")


ATTENTION = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    import spyre_mlir.device
    from spyre_mlir.inductor import counters

    spyre_mlir.device.register()
    torch.manual_seed(0)
    q = torch.randn(1, 4, 24, 16, dtype=torch.float16)
    kv = [torch.randn(1, 2, 24, 16, dtype=torch.float16) for _ in range(2)]
    mask = torch.rand(1, 1, 24, 24) > 0.3
    cases = [(q, q + 1, q - 1, dict(is_causal=True)), (q, *kv, dict(enable_gqa=True)),
             (q, q * 2, q, dict(attn_mask=mask))]
    for query, key, value, kwargs in cases:
        expected = F.scaled_dot_product_attention(query.float(), key.float(), value.float(),
                                                  **kwargs)
        on_card = {k: v.to("spyre") if isinstance(v, torch.Tensor) else v
                   for k, v in kwargs.items()}
        args = [t.to("spyre") for t in (query, key, value)]
        # Eagerly: the CPU's flash kernel through the device's fallback.
        eager = F.scaled_dot_product_attention(*args, **on_card)
        torch.testing.assert_close(eager.cpu().float(), expected, rtol=1e-2, atol=1e-2)
        # Compiled: one fused attention kernel, not products and a softmax.
        torch._dynamo.reset()
        counters.reset()
        fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **on_card)
        with torch.no_grad():
            out = torch.compile(fn, backend="spyre")(*args)
        assert dict(counters.fallbacks) == {}, dict(counters.fallbacks)
        assert "attention" in counters.cycles_per_kernel, dict(counters.cycles_per_kernel)
        torch.testing.assert_close(out.cpu().float(), expected, rtol=2e-2, atol=1e-2)
    print("ok")
""")


def test_attention_on_the_spyre_device_is_fused():
    """The device picks the CPU's flash kernel for scaled_dot_product_attention
    (spyre_device.cpp), so compiled attention on spyre tensors is the fused
    kernel; eagerly the flash kernel runs through the fallback."""
    out = subprocess.run([sys.executable, "-c", ATTENTION], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("ok")


def test_the_torch_extensions_come_built_with_the_package(tmp_path):
    # The device's allocator and the process group were compiled when the
    # package was built: registering them compiles nothing (torch would
    # build into TORCH_EXTENSIONS_DIR, ~25 s each), and the modules loaded
    # are the installed ones.
    script = textwrap.dedent("""
        import os, torch, spyre_mlir
        import spyre_mlir.device
        from spyre_mlir.distributed import process_group
        spyre_mlir.device.register()
        package = os.path.dirname(spyre_mlir.__file__)
        module = process_group._module()
        assert module.__file__.startswith(package), module.__file__
        assert torch.ones(2).to("spyre").device.type == "spyre"
    """)
    env = dict(__import__("os").environ, TORCH_EXTENSIONS_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())


def test_an_extension_built_for_another_torch_is_compiled_again(tmp_path, monkeypatch):
    # An installed .so that does not import (here: not a library at all, as
    # one built against another torch fails) falls back to compiling the
    # source with torch's cpp_extension.
    from torch.utils import cpp_extension
    from spyre_mlir import cpp_extensions
    source = tmp_path / "ext.cpp"
    source.write_text("")
    (tmp_path / "ext.so").write_bytes(b"not a shared library")
    calls = []
    monkeypatch.setattr(cpp_extension, "load", lambda **kw: calls.append(kw) or "compiled")
    assert cpp_extensions.load("ext", str(source)) == "compiled"
    assert calls[0]["name"] == "ext" and calls[0]["extra_cflags"] == cpp_extensions.CFLAGS
