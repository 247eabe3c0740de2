"""The backend's runtime: IR dumps of every stage, the binary cache (corrupt
entries, concurrent writers), per-graph counters."""

import glob
import multiprocessing
import os
import subprocess
import sys

import pytest
import torch

from spyre_mlir.inductor import counters, kernel_cache
from spyre_mlir.testing import softmax


@pytest.mark.parametrize("kwargs,message", [
    (dict(options={"no_such_setting": 1}), "unknown option 'no_such_setting'"),
    (dict(options={"split_reductions": True}), "option 'split_reductions' must stay False"),
    (dict(mode="fastest"), "unknown mode 'fastest'"),
])
def test_compile_options_the_backend_cannot_honour_raise(kwargs, message):
    torch._dynamo.reset()
    with pytest.raises(Exception, match=message):
        torch.compile(lambda x: x * 2, backend="spyre", **kwargs)(torch.randn(4))


def test_inductor_options_and_modes_are_accepted():
    x = torch.randn(4)
    for kwargs in (dict(options={"trace.enabled": False}), dict(mode="reduce-overhead")):
        torch._dynamo.reset()
        torch.testing.assert_close(torch.compile(lambda x: x * 2, backend="spyre", **kwargs)(x),
                                   x * 2)


def test_bus_bytes_of_a_product_are_its_compulsory_bytes():
    """counters.bus_*_bytes: what crossed the card's device-memory bus. A
    product whose cores share their panels by broadcast reads each operand
    once and writes the result once."""
    m, k, n = 256, 512, 384
    a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
    torch._dynamo.reset()
    counters.reset()
    torch.compile(lambda a, b: a @ b, backend="spyre")(a, b)
    assert counters.bus_read_bytes == pytest.approx(2 * (m * k + k * n), rel=1e-9)
    assert counters.bus_write_bytes == pytest.approx(2 * m * n, rel=1e-9)


def test_every_stage_of_every_kernel_is_dumped_and_replays(monkeypatch, tmp_path, spyre_opt):
    monkeypatch.setenv("SPYRE_DUMP_DIR", str(tmp_path))
    torch._dynamo.reset()
    counters.reset()
    x = torch.randn(8, 40)
    out = torch.compile(lambda x: torch.softmax(x, -1), backend="spyre")(x)
    torch.testing.assert_close(out, torch.softmax(x, -1))
    kernels = sorted(glob.glob(str(tmp_path / "*.kernel.mlir")))
    assert len(kernels) == counters.kernels_run > 0
    for kernel in kernels:
        stem = kernel[: -len(".kernel.mlir")]
        for stage in ("generalize", "fuse", "divide-work", "tile", "plan-memory", "lower"):
            assert os.path.getsize(f"{stem}.{stage}.mlir") > 0
        # The dumped kernel replays without torch.
        hw = subprocess.run([spyre_opt, kernel, "--spyre-compile"], capture_output=True,
                            text=True, check=True).stdout
        assert "spyre.hw.program @kernel" in hw
    assert sum(counters.cycles_per_graph.values()) == counters.simulated_cycles


def test_convolution_and_attention_kernels_are_dumped_too(monkeypatch, tmp_path, spyre_opt):
    """The extern kernels (implicit-GEMM convolution, fused attention) are
    not numbered graph kernels; they are dumped as extern_<op>_<digest>."""
    monkeypatch.setenv("SPYRE_DUMP_DIR", str(tmp_path))
    torch._dynamo.reset()
    counters.reset()
    x, w = torch.randn(1, 8, 12, 12), torch.randn(8, 8, 3, 3)
    q = torch.randn(1, 2, 16, 32)

    def model(x, w, q):
        return torch.nn.functional.conv2d(x, w, padding=1), \
            torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)

    torch.compile(model, backend="spyre")(x, w, q)
    assert dict(counters.fallbacks) == {}
    for op in ("conv2d", "attention"):
        kernels = glob.glob(str(tmp_path / f"extern_{op}_*.kernel.mlir"))
        assert len(kernels) == 1, op
        assert os.path.getsize(kernels[0][: -len(".kernel.mlir")] + ".lower.mlir") > 0
        hw = subprocess.run([spyre_opt, kernels[0], "--spyre-compile"], capture_output=True,
                            text=True, check=True).stdout
        assert f"spyre.hw.program @{op}" in hw


def test_the_kernel_corpus_keeps_each_kernel_once_and_recompiles(monkeypatch, tmp_path,
                                                                  spyre_opt):
    """$SPYRE_KERNEL_CORPUS: every kernel compiled, named by its content, for
    scripts/compile_corpus.py (the sanitizer run) to compile again."""
    corpus = tmp_path / "corpus"
    monkeypatch.setenv("SPYRE_KERNEL_CORPUS", str(corpus))
    x = torch.randn(8, 40)
    kept = []
    for _ in range(2):  # compiled twice: kept once
        torch._dynamo.reset()
        counters.reset()
        torch.compile(lambda x: torch.softmax(x, -1) * 2, backend="spyre")(x)
        kept.append(sorted(corpus.glob("*.mlir")))
    assert kept[0] == kept[1] and len(kept[0]) >= counters.kernels_run > 0
    kept = kept[0]
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "compile_corpus.py")
    done = subprocess.run([sys.executable, script, str(corpus), "--tools",
                           os.path.dirname(spyre_opt)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(kept)} compiled, 0 refused with a diagnostic, 0 failed" in done.stdout


def test_a_corrupt_cache_entry_is_recompiled(monkeypatch, tmp_path):
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path))
    source = softmax(4, 64)
    counters.reset()
    kernel_cache.compile_cached(source)
    assert counters.compiles == 1
    kernel_cache.compile_cached(source)
    assert counters.cache_hits == 1
    (entry,) = glob.glob(str(tmp_path / "*" / "*.spyre"))
    data = bytearray(open(entry, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(entry, "wb").write(bytes(data))
    program = kernel_cache.compile_cached(source)
    assert counters.compiles == 2 and len(program.buffers) == 2  # x and y: no temporaries


def _compile_in_child(directory):
    os.environ["SPYRE_CACHE_DIR"] = directory
    for _ in range(5):
        kernel_cache.compile_cached(softmax(4, 64))


def test_concurrent_writers_leave_a_valid_entry(tmp_path):
    context = multiprocessing.get_context("spawn")
    children = [context.Process(target=_compile_in_child, args=(str(tmp_path),))
                for _ in range(3)]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    entries = glob.glob(str(tmp_path / "*" / "*.spyre"))
    assert len(entries) == 1 and not glob.glob(str(tmp_path / "*" / "*.tmp"))
    key = os.path.basename(entries[0]).split(".")[0]
    assert kernel_cache._read_entry(entries[0], key) is not None


WARM = """
import torch
from torch._dynamo.utils import counters as dynamo_counters
from spyre_mlir import models
from spyre_mlir.inductor import counters
torch.manual_seed(0)
with torch.no_grad():
    torch.compile(models.MLP().eval(), backend="spyre")(torch.randn(4, 64))
print(dict(dynamo_counters["inductor"]), counters.compiles, counters.cache_hits)
"""


def test_a_second_process_reuses_both_caches(tmp_path):
    import sys
    # The FX graph cache on in the children whatever the caller's setting
    # (the suite runs with TORCHINDUCTOR_FX_GRAPH_CACHE=0): it is under test.
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),
               SPYRE_CACHE_DIR=str(tmp_path / "spyre"), TORCHINDUCTOR_FX_GRAPH_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", WARM], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    first, second = (r.stdout.strip().splitlines()[-1] for r in runs)
    assert "fxgraph_cache_miss" in first and "fxgraph_cache_hit" in second
    # No kernel compiled again: the binary (the MLP's two products with their
    # epilogues, a chain) from the cache.
    assert second.endswith(" 0 1")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_a_product_the_card_refuses_runs_on_the_cpu(monkeypatch, dtype):
    """A product the pipeline refuses (Qwen2-MoE's 60 experts, beyond the
    simulator's work budget) runs on the CPU, counted. Its CPU code is
    Inductor's for our lowering, a sum of f32 products into a 16-bit buffer,
    whose vectorized form does not compile in torch 2.13: the compile
    failed."""
    from spyre_mlir.inductor import scheduling

    def refuse_products(mlir):
        if "matmul" in mlir:
            raise kernel_cache.CompileError("refused for the test")
        return kernel_cache.compile_cached(mlir)

    monkeypatch.setattr(scheduling, "compile_cached", refuse_products)
    torch.manual_seed(0)
    x = torch.randn(4, 64, 256).to(dtype)
    w = (torch.randn(4, 96, 256) / 16).to(dtype)
    fn = lambda x, w: torch.bmm(x, w.transpose(1, 2))  # noqa: E731
    torch._dynamo.reset()
    counters.reset()
    out = torch.compile(fn, backend="spyre")(x, w)
    assert counters.fallbacks.get("aten.bmm.default") == 1
    torch.testing.assert_close(out.float(), fn(x.float(), w.float()), rtol=2e-2, atol=2e-2)
