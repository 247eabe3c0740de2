"""Seeing where the time goes: TORCH_LOGS="+spyre", torch.profiler with the
kernels' simulated time, and the roofline report (spyre_mlir.report)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from spyre_mlir import models
from spyre_mlir import simulator as sim
from spyre_mlir.inductor import counters, profiler


def simulated_us() -> float:
    return counters.simulated_cycles / sim.default_arch().clock_hz * 1e6


@pytest.fixture(scope="module")
def gpt():
    """The demo's GPT, compiled and run once (the compile is not measured)."""
    torch.manual_seed(0)
    model = models.GPT(vocab=512, d_model=128, n_heads=4, n_layers=2, max_len=64).eval()
    ids = torch.randint(0, 512, (2, 32))
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="spyre")
    with torch.no_grad():
        compiled(ids)
    return model, compiled, ids


LOGGED = textwrap.dedent("""
    import torch
    def f(x):
        # softmax of a product on the card; float64 stays on the CPU
        return torch.softmax(x @ x.T, -1), x.double() * 2
    x = torch.randn(16, 64)
    torch.compile(f, backend="spyre")(x)
""")


def run_logged(setting: str | None) -> str:
    env = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0")
    env.pop("TORCH_LOGS", None)
    if setting is not None:  # (torch itself fails on TORCH_LOGS="")
        env["TORCH_LOGS"] = setting
    out = subprocess.run([sys.executable, "-c", LOGGED], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stderr


def test_torch_logs_spyre_shows_decisions():
    log = run_logged("+spyre")
    # The name is known to torch when it parses TORCH_LOGS (entry point).
    assert "Invalid log settings" not in log
    assert "kernel graph0.spyre_kernel_0 (" in log  # kernels formed, with their ops
    assert "aten.mm" in log or "aten.addmm" in log
    assert "falls back to the CPU: " in log and "float64" in log  # with the reason
    assert "kernel cache hit" in log or "kernel cache miss" in log
    assert "Loading all available dialects" not in log  # MLIR bindings' own DEBUG lines


def test_without_torch_logs_spyre_is_quiet():
    log = run_logged(None)
    assert "spyre_kernel" not in log and "kernel cache" not in log


def test_profiler_lists_kernels_with_simulated_time(gpt, tmp_path):
    model, compiled, ids = gpt
    counters.reset()
    with torch.no_grad(), torch.profiler.profile() as prof:
        compiled(ids)
    assert counters.kernels_run > 0
    device = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]
    assert len(device) == counters.kernels_run
    # The profiler's spyre total is the counters' simulated time.
    assert sum(e.device_time_total for e in device) == pytest.approx(simulated_us(), rel=1e-9)
    # Each launch (a CPU event) carries its kernel's simulated time.
    launches = [e for e in prof.events() if profiler.is_launch(e.name)]
    assert [e.name[len("spyre::"):] for e in launches] == [e.name for e in device]
    table = prof.key_averages().table(sort_by="self_device_time_total", row_limit=5)
    assert "SPYRE" in table and "spyre_kernel" in table

    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in trace
                 if e.get("ph") == "M" and e["name"] == "process_name"}
    cores = sim.default_arch().cores
    core_pids = {pid for pid, name in processes.items() if name.startswith("Spyre core ")}
    assert sorted(processes[p] for p in core_pids) == sorted(f"Spyre core {c}"
                                                             for c in range(cores))
    card = next(pid for pid, name in processes.items() if name == "Spyre card (simulated)")
    kernels = [e for e in trace if e.get("pid") == card and e.get("ph") == "X"]
    assert sum(e["dur"] for e in kernels) == pytest.approx(simulated_us(), rel=1e-9)
    # The cores' instructions lie inside their kernels.
    instructions = [e for e in trace if e.get("pid") in core_pids and e.get("ph") == "X"]
    assert {e["cat"] for e in instructions} >= {"dma", "sfu", "pt"}
    by_kernel = {}
    for k in kernels:
        by_kernel.setdefault(k["name"], []).append((k["ts"], k["ts"] + k["dur"]))
    for e in instructions:
        # Within 0.01 us: timestamps count microseconds since the host's
        # clock started, where a double resolves about 0.001 us.
        assert any(lo - 1e-2 <= e["ts"] and e["ts"] + e["dur"] <= hi + 1e-2
                   for lo, hi in by_kernel[e["args"]["kernel_name"]])


def test_profiler_without_spyre_kernels_is_unchanged():
    with torch.profiler.profile() as prof:
        torch.randn(8, 8) @ torch.randn(8, 8)
    assert not [e for e in prof.events() if e.device_type != torch.autograd.DeviceType.CPU]
    assert "SPYRE" not in prof.key_averages().table()


PROGRESS = textwrap.dedent("""
    import torch
    from spyre_mlir.inductor import scheduling
    scheduling.PROGRESS_AFTER = 0.0  # every compile is "long"
    x = torch.randn(8, 32)
    torch.compile(lambda x: (torch.softmax(x, -1) @ x.T).exp(), backend="spyre")(x)
""")


def test_long_compiles_log_progress():
    # In a process of its own, without Inductor's caches: a graph compiled
    # before (by any run on the machine) is not scheduled again.
    env = dict(os.environ, TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0",
               TORCH_LOGS="spyre")
    out = subprocess.run([sys.executable, "-c", PROGRESS], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    progress = [line for line in out.stderr.splitlines() if "scheduled nodes done" in line]
    assert progress and "compiling graph" in progress[-1], out.stderr[-2000:]


def check_report(out, counters_now):
    from spyre_mlir import report
    rows = report.write(str(out), counters_now)
    assert len(rows) == len(counters_now.per_kernel) > 0
    assert sum(r.calls for r in rows) == counters_now.kernels_run
    # The table's totals are the counters'.
    assert sum(r.simulated_us for r in rows) == pytest.approx(simulated_us(), rel=1e-9)
    total = (out / "kernels.txt").read_text().splitlines()[-1].split()
    assert total[0] == "total" and float(total[4]) == pytest.approx(simulated_us(), abs=0.006)
    assert [r.lost_us for r in rows] == sorted((r.lost_us for r in rows), reverse=True)
    for r in rows:  # the roofline and the floor are lower bounds of the simulated time
        assert r.bound_us is not None and 0 < r.bound_us <= r.simulated_us * (1 + 1e-9)
        assert r.bound_us <= r.floor_us <= r.simulated_us * (1 + 1e-9)
        assert r.bound_by in ("device memory", "compute (PT)", "compute (SFU)",
                              "compute (PT+SFU)")
        assert r.ops and r.device_bytes > 0
    # Kernels that read and write device memory pay the turnaround.
    assert any(r.floor_us > r.bound_us * 1.05 for r in rows if r.bound_by == "device memory")
    # The engines' busy shares: the matrix unit only where there are products,
    # the DMA engine everywhere.
    for r in rows:
        assert set(r.busy) == {"pt", "sfu", "dma"} and all(0 <= b <= 1 + 1e-9 for b in r.busy.values())
        assert (r.busy["pt"] > 0) == (r.flops > 0) and r.busy["dma"] > 0
    assert any(r.flops > 0 for r in rows)  # the matrix products
    png = (out / "roofline.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    page = (out / "index.html").read_text()
    assert 'src="roofline.png"' in page and page.count("<tr>") == len(rows) + 1
    return rows


def test_report_for_the_demo_gpt(gpt, tmp_path):
    pytest.importorskip("matplotlib")
    model, compiled, ids = gpt
    counters.reset()
    with torch.no_grad():
        compiled(ids)
    rows = check_report(tmp_path, counters)
    assert any("models.py:" in line for r in rows for line in r.sources)


def test_report_for_a_gpt2_block(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("transformers")
    from spyre_mlir import report
    torch._dynamo.reset()
    check_report(tmp_path, report.run_model("gpt2-block"))
    assert dict(counters.fallbacks) == {}


def test_report_prices_an_embedding_lookup_at_the_rows_it_reads():
    # A decode step looks up one token's row of a large table: the roofline
    # counts the rows gathered, not the table (which made the bound of a 1B
    # Llama's lookup 874 us against 1.7 us simulated, an efficiency of 500x).
    from spyre_mlir import report
    table = torch.randn(32000, 256, dtype=torch.float16)
    ids = torch.tensor([[7, 31999, 0, 12345]])
    torch._dynamo.reset()
    counters.reset()
    with torch.no_grad():
        out = torch.compile(torch.nn.functional.embedding, backend="spyre")(ids, table)
    torch.testing.assert_close(out, table[ids])
    [row] = report.kernel_rows(counters)
    assert row.device_bytes < 3 * 4 * 256 * 2  # rows read, indices, rows written
    assert 0 < row.bound_us <= row.floor_us <= row.simulated_us


def test_report_command_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "spyre_mlir.report", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    # 15 kernels (each MLP's two products with their bias, GELU and residual in
    # one kernel, attention is one kernel, reads its heads where the projection
    # left them and writes them as the model merges them).
    assert "efficiency" in out.stdout and "(5 more)" in out.stdout
    assert (tmp_path / "roofline.png").stat().st_size > 0
