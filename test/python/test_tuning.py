"""Tuning by simulated time (spyre_mlir.tuning): the fastest of a product's
candidate tiles is kept and recorded; the default compile is unchanged."""

import json
import os
import shutil

import pytest
import torch

from spyre_mlir import tuning
from spyre_mlir.inductor import counters


@pytest.fixture
def caches(tmp_path, monkeypatch):
    """Fresh kernel cache and tuning records for the test."""
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path / "kernels"))
    torch._dynamo.reset()
    yield tmp_path
    tuning.force(None)
    torch._dynamo.reset()


def product(x, w):
    return torch.relu(x @ w)


X = torch.randn(96, 512, generator=torch.Generator().manual_seed(0)).half()
W = torch.randn(512, 640, generator=torch.Generator().manual_seed(1)).half()


def run(tune: bool):
    """Output and simulated cycles of the compiled product."""
    tuning.force(tune)
    torch._dynamo.reset()
    compiled = torch.compile(product, backend="spyre")
    compiled(X, W)
    counters.reset()
    out = compiled(X, W)
    return out, counters.simulated_cycles


def records(root):
    found = []
    for folder, _, files in os.walk(root / "tuning"):
        found += [json.load(open(os.path.join(folder, f))) for f in files if f.endswith(".json")]
    return found


def test_the_fastest_candidate_is_kept_and_recorded(caches):
    default_out, default_cycles = run(tune=False)
    assert records(caches) == []  # the default compile tunes nothing
    tuned_out, tuned_cycles = run(tune=True)
    torch.testing.assert_close(tuned_out.float(), torch.relu(X.float() @ W.float()),
                               atol=0.25, rtol=2e-2)
    torch.testing.assert_close(tuned_out, default_out, atol=0.25, rtol=2e-2)
    [record] = records(caches)
    assert len(record["tried"]) > 1
    fastest = min(record["tried"], key=lambda t: t["cycles"])
    assert record["tiles"] == fastest["tiles"] and record["cycles"] == fastest["cycles"]
    assert record["default_cycles"] == record["tried"][0]["cycles"]
    assert tuned_cycles <= default_cycles
    assert tuned_cycles == pytest.approx(record["cycles"])


def test_a_recorded_choice_is_compiled_without_tuning_again(caches, monkeypatch):
    run(tune=True)
    [first] = records(caches)
    # Another process: its kernel cache is empty, the records are on disk.
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(caches / "other" / "kernels"))
    (caches / "other").mkdir(exist_ok=True)
    os.rename(caches / "tuning", caches / "other" / "tuning")

    def no_trials(*args):
        raise AssertionError("tuned again")
    monkeypatch.setattr(tuning, "_cycles", no_trials)
    _, cycles = run(tune=True)
    assert cycles == pytest.approx(first["cycles"])


def test_a_corrupt_record_is_tuned_again(caches, monkeypatch):
    run(tune=True)
    [path] = [os.path.join(d, f) for d, _, fs in os.walk(caches / "tuning") for f in fs]
    with open(path, "w") as f:
        f.write("{not json")
    shutil.rmtree(caches / "kernels")  # or the tuned program would be reused
    run(tune=True)
    assert len(json.load(open(path))["tried"]) > 1


def test_kernels_with_nothing_to_choose_are_not_tried(caches, monkeypatch):
    def no_trials(*args):
        raise AssertionError("an elementwise kernel was tuned")
    monkeypatch.setattr(tuning, "_cycles", no_trials)
    tuning.force(True)
    x = torch.randn(64, 256)
    out = torch.compile(lambda a: a * 2 + 1, backend="spyre")(x)
    torch.testing.assert_close(out, x * 2 + 1)
    assert records(caches) == []


def test_the_environment_turns_it_on(monkeypatch):
    tuning.force(None)
    monkeypatch.setenv("SPYRE_TUNE", "1")
    assert tuning.enabled()
    monkeypatch.setenv("SPYRE_TUNE", "0")
    assert not tuning.enabled()
    tuning.force(True)
    assert tuning.enabled()
    tuning.force(None)


def test_max_autotune_tunes_that_graph_only(caches):
    """torch.compile(mode="max-autotune") tunes the graph it compiles, not
    later default compiles of the same code (Inductor's caches keep them
    apart)."""
    tuning.force(None)
    cycles = {}
    for mode in ("default", "max-autotune", "default"):
        torch._dynamo.reset()
        compiled = torch.compile(product, backend="spyre", mode=mode)
        compiled(X, W)
        counters.reset()
        out = compiled(X, W)
        torch.testing.assert_close(out.float(), torch.relu(X.float() @ W.float()),
                                   atol=0.25, rtol=2e-2)
        cycles.setdefault(mode, []).append(counters.simulated_cycles)
        assert not tuning.enabled()
    [record] = records(caches)
    assert cycles["max-autotune"] == [pytest.approx(record["cycles"])]
    assert cycles["default"] == [pytest.approx(record["default_cycles"])] * 2
