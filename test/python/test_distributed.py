"""Several simulated cards with torch.distributed: the "spyre" backend
(spyre_mlir.distributed), functional collectives in compiled graphs, and
tensor parallelism with torch.distributed.tensor.parallel, one process per
card started here with torch.multiprocessing."""

import datetime
import multiprocessing
import os
import socket
import subprocess
import sys
import time

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from spyre_mlir import simulator as sim

TIMEOUT = datetime.timedelta(seconds=60)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Card processes fork from a server that imported these once: a fresh
#: interpreter per card spent ~4 s importing them, two thirds of a small
#: test's time. The server imports and forks before any thread pool exists.
PRELOAD = ["torch", "torch.distributed", "transformers", "spyre_mlir.inductor",
           "spyre_mlir.distributed"]


def run_cards(cards: int, fn, *args, timeout=TIMEOUT, backend="spyre") -> None:
    """Runs fn(rank, cards, *args) in one process per card; a failure in
    any of them fails the test. One thread each, as torchrun does: the cards
    share the machine's few cores."""
    threads = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"  # before the server starts: the cards inherit its
    try:
        multiprocessing.set_forkserver_preload(PRELOAD)
        mp.start_processes(_card, args=(cards, _free_port(), timeout, fn, args, backend),
                           nprocs=cards, start_method="forkserver")
    finally:
        if threads is None:
            del os.environ["OMP_NUM_THREADS"]
        else:
            os.environ["OMP_NUM_THREADS"] = threads


def _card(rank, cards, port, timeout, fn, args, backend):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      TORCHINDUCTOR_FX_GRAPH_CACHE="0")
    dist.init_process_group(backend, rank=rank, world_size=cards, timeout=timeout)
    try:
        fn(rank, cards, *args)
    finally:
        dist.destroy_process_group()


def _inputs(rank):
    g = torch.Generator().manual_seed(100 + rank)
    return torch.randn(8, 32, generator=g).half()


def _weight():
    return torch.randn(32, 16, generator=torch.Generator().manual_seed(7)).half()


def _collectives_in_a_graph(rank, cards):
    import torch.distributed._functional_collectives as funcol
    from spyre_mlir.inductor import counters
    group = dist.group.WORLD

    def f(x, w):
        y = x @ w
        return (funcol.all_reduce(y, "sum", group), funcol.all_gather_tensor(y, 0, group),
                funcol.reduce_scatter_tensor(y, "sum", 0, group), funcol.broadcast(y, 1, group))

    compiled = torch.compile(f, backend="spyre")
    compiled(_inputs(rank), _weight())
    counters.reset()
    got = compiled(_inputs(rank), _weight())
    # Every card's product, on this one, without collectives.
    ys = [(_inputs(r).float() @ _weight().float()) for r in range(cards)]
    total = sum(ys)
    expected = (total, torch.cat(ys), total.chunk(cards)[rank], ys[1])
    for g, e in zip(got, expected):
        torch.testing.assert_close(g.float(), e, atol=2e-2, rtol=1e-2)
    assert counters.fallbacks == {}, counters.fallbacks
    assert counters.collectives == {"all_reduce": 1, "all_gather": 1, "reduce_scatter": 1,
                                    "broadcast": 1}
    arch, nbytes = sim.default_arch(), 8 * 16 * 2
    model = sum(sim.collective_time(arch, kind, n, cards)["cycles"] for kind, n in (
        (sim.Collective.all_reduce, nbytes), (sim.Collective.all_gather, cards * nbytes),
        (sim.Collective.reduce_scatter, nbytes), (sim.Collective.broadcast, nbytes)))
    accounted = counters.collective_cycles + counters.collective_overlapped_cycles
    assert accounted == pytest.approx(model)
    assert counters.kernels_run > 0


def _overlap(rank, cards):
    """A collective issued before independent work and waited for after it
    costs the card only what the work does not hide."""
    import torch.distributed._functional_collectives as funcol
    from spyre_mlir.inductor import counters

    def f(x, a):
        reduced = funcol.all_reduce(x, "sum", dist.group.WORLD)
        independent = a @ a
        return reduced + 1, independent

    x = torch.full((64, 256), float(rank + 1), dtype=torch.float16)
    a = torch.randn(256, 256, generator=torch.Generator().manual_seed(3)).half()
    compiled = torch.compile(f, backend="spyre")
    compiled(x, a)
    counters.reset()
    reduced, _ = compiled(x, a)
    assert torch.equal(reduced, torch.full_like(x, 1.0 + cards * (cards + 1) / 2))
    cost = sim.collective_time(sim.default_arch(), sim.Collective.all_reduce, x.numel() * 2,
                               cards)["cycles"]
    assert counters.collective_overlapped_cycles > 0
    assert counters.collective_cycles + counters.collective_overlapped_cycles == \
        pytest.approx(cost)
    assert counters.collective_cycles < cost


def _spyre_tensors(rank, cards):
    from spyre_mlir.inductor import counters
    t = torch.full((4, 3), float(rank + 1)).to("spyre")
    dist.all_reduce(t)
    assert t.device.type == "spyre"
    assert torch.equal(t.cpu(), torch.full((4, 3), cards * (cards + 1) / 2))
    gathered = torch.empty(cards * 4, 3, device="spyre")
    dist.all_gather_into_tensor(gathered, t)
    assert torch.equal(gathered.cpu(), torch.full((cards * 4, 3), cards * (cards + 1) / 2))
    assert counters.collectives["all_reduce"] >= 1 and counters.collectives["all_gather"] >= 1


def _mismatched_sizes(rank, cards):
    from spyre_mlir.distributed.clock import CollectiveMismatch
    t = torch.ones(4 * (rank + 1))
    with pytest.raises((CollectiveMismatch, RuntimeError),
                       match="called different collectives.*all_reduce of 16 bytes.*"
                             "all_reduce of 32 bytes"):
        dist.all_reduce(t)
    # Nothing was sent: the group still works.
    same = torch.ones(4)
    dist.all_reduce(same)
    assert torch.equal(same, torch.full((4,), float(cards)))


def _clocks_meet(rank, cards):
    """A card that computed longer makes the others wait at the collective."""
    from spyre_mlir.distributed import clock_cycles
    from spyre_mlir.inductor import counters
    counters.reset()
    counters.simulated_cycles = 1000.0 * (rank + 1)  # as if kernels had run
    t = torch.ones(16)
    dist.all_reduce(t)
    cost = sim.collective_time(sim.default_arch(), sim.Collective.all_reduce, 64,
                               cards)["cycles"]
    assert clock_cycles() == pytest.approx(1000.0 * cards + cost)
    assert counters.collective_wait_cycles == pytest.approx(1000.0 * (cards - rank - 1))


def _everything_on_two_cards(rank, cards):
    _collectives_in_a_graph(rank, cards)
    _overlap(rank, cards)
    _spyre_tensors(rank, cards)
    _mismatched_sizes(rank, cards)
    _clocks_meet(rank, cards)


def test_collectives_on_two_cards():
    run_cards(2, _everything_on_two_cards)


def _untimed(rank, cards):
    """Over gloo a compiled graph's collective moves the data but nothing
    times it: counted as a CPU fallback, refused in strict mode."""
    import torch.distributed._functional_collectives as funcol
    from spyre_mlir.inductor import counters, state

    def f(x):
        return funcol.all_reduce(x * 2, "sum", dist.group.WORLD) + 1

    x = torch.full((8, 64), float(rank + 1), dtype=torch.float16)
    compiled = torch.compile(f, backend="spyre")
    compiled(x)
    counters.reset()
    out = compiled(x)
    assert torch.equal(out, torch.full_like(x, 1.0 + cards * (cards + 1)))
    assert counters.fallbacks == {"_c10d_functional.all_reduce_.default": 1}
    assert counters.collectives == {}
    state.strict = True
    try:
        with pytest.raises(state.SpyreFallbackError, match="would run on the CPU"):
            compiled(x)
    finally:
        state.strict = False


def test_collectives_over_gloo_are_counted_as_fallbacks():
    run_cards(2, _untimed, backend="gloo")


def test_the_backend_is_registered_with_torch():
    assert "spyre" in dist.Backend.backend_list
    assert dist.Backend.default_device_backend_map.get("cpu") == "gloo"  # not taken over


def _gloo_workers() -> list[str]:
    """The threads of this process's gloo process groups."""
    names = (open(f"/proc/self/task/{t}/comm").read().strip()
             for t in os.listdir("/proc/self/task"))
    return [n for n in names if n == "pt_gloo_runloop"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads Linux's /proc")
def test_destroying_the_group_stops_gloo_while_its_work_lives_on(tmp_path):
    """The group's gloo threads stop at destroy_process_group, as the gloo
    backend's do, even though something (here a finished Work, in the
    torchrun example compiled graphs) still holds the group: left to the
    interpreter's exit, they sometimes aborted a card there ("terminate
    called without an active exception")."""
    dist.init_process_group("spyre", store=dist.FileStore(str(tmp_path / "store"), 1),
                            rank=0, world_size=1)
    try:
        group = dist.group.WORLD
        work = dist.all_reduce(torch.ones(4), async_op=True)
        work.wait()
        assert _gloo_workers()
    finally:
        dist.destroy_process_group()
    assert not _gloo_workers()
    with pytest.raises(RuntimeError, match="spyre process group was destroyed"):
        group.allreduce([torch.ones(4)])
    del work


def _dies(rank, cards, path):
    if rank == 1:
        os._exit(0)
    start = time.monotonic()
    try:
        dist.all_reduce(torch.ones(4))
        outcome = "no error"
    except Exception as e:  # noqa: BLE001
        outcome = type(e).__name__
    with open(path, "w") as f:
        f.write(f"{outcome} {time.monotonic() - start:.1f}")
    os._exit(0)  # the group cannot be shut down cleanly without its peer


def test_a_card_that_dies_makes_the_others_raise(tmp_path):
    path = tmp_path / "outcome"
    run_cards(2, _dies, str(path), timeout=datetime.timedelta(seconds=20))
    outcome, seconds = path.read_text().split()
    assert outcome != "no error"
    assert float(seconds) < 30


# Tensor parallelism of a Llama-style model from transformers.

def _llama(kv_heads):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        vocab_size=128, hidden_size=128, intermediate_size=256, num_hidden_layers=1,
        num_attention_heads=8, num_key_value_heads=kv_heads, max_position_embeddings=32)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).half().eval()


def _tensor_parallel_plan(model, sequence_parallel=False):
    """Megatron-style: column-split projections into a block, row-split out
    of it. With sequence parallelism the norms (and the residual stream)
    are split by sequence between blocks: reduce-scatters and all-gathers
    instead of all-reduces."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                                   RowwiseParallel, SequenceParallel)
    between = Shard(1) if sequence_parallel else Replicate()
    plan = {}
    if sequence_parallel:
        plan["model.embed_tokens"] = RowwiseParallel(
            input_layouts=Replicate(), output_layouts=Shard(1), use_local_output=False)
        plan["model.norm"] = SequenceParallel()
        plan["lm_head"] = ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())
    for i in range(len(model.model.layers)):
        layer = f"model.layers.{i}."
        if sequence_parallel:
            plan[layer + "input_layernorm"] = SequenceParallel()
            plan[layer + "post_attention_layernorm"] = SequenceParallel()
            plan[layer + "self_attn"] = PrepareModuleInput(
                input_kwarg_layouts={"hidden_states": Shard(1)},
                desired_input_kwarg_layouts={"hidden_states": Replicate()}, use_local_output=True)
            plan[layer + "mlp"] = PrepareModuleInput(
                input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),),
                use_local_output=True)
        for name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                     "mlp.gate_proj", "mlp.up_proj"):
            plan[layer + name] = ColwiseParallel()
        for name in ("self_attn.o_proj", "mlp.down_proj"):
            plan[layer + name] = RowwiseParallel(output_layouts=between,
                                                 use_local_output=not sequence_parallel)
    return plan


IDS = torch.arange(12).reshape(1, 12) * 5 % 128


def _tensor_parallel(rank, cards, kv_heads, sequence_parallel, device, expected):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import parallelize_module
    from spyre_mlir.inductor import counters
    model, ids = _llama(kv_heads), IDS
    if device == "spyre":  # the model in the card's memory: torch.compile's default backend
        import spyre_mlir.device
        spyre_mlir.device.register()
        model, ids = model.to("spyre"), IDS.to("spyre")
    parallelize_module(model, init_device_mesh(device, (cards,)),
                       _tensor_parallel_plan(model, sequence_parallel))
    compiled = torch.compile(model, **({"backend": "spyre"} if device == "cpu" else {}))
    with torch.no_grad():
        compiled(ids)
        counters.reset()  # compiling may take collectives of its own
        logits = compiled(ids).logits.cpu()
    torch.testing.assert_close(logits.float(), expected, atol=2e-2, rtol=2e-2)
    assert counters.fallbacks == {}, counters.fallbacks
    if sequence_parallel:
        # Out of the embedding and each block; into each block and the head (and the logits).
        assert counters.collectives == {"reduce_scatter": 3, "all_gather": 4}, counters.collectives
    else:
        assert counters.collectives == {"all_reduce": 2}  # after attention and after the MLP


@pytest.mark.parametrize("cards,kv_heads,sequence_parallel,device",
                         [(2, 4, False, "cpu"), (4, 4, False, "cpu"), (8, 8, False, "cpu"),
                          (2, 4, True, "cpu"), (2, 4, False, "spyre")])
def test_tensor_parallel_llama_matches_one_card(cards, kv_heads, sequence_parallel, device):
    with torch.no_grad():
        expected = torch.compile(_llama(kv_heads), backend="spyre")(IDS).logits.float()
    run_cards(cards, _tensor_parallel, kv_heads, sequence_parallel, device, expected)


def test_the_example_runs_with_torchrun():
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         os.path.join(REPO, "examples", "tensor_parallel.py"), "--new-tokens", "4"],
        capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "CPU fallbacks: 0" in result.stdout
    assert "tokens on every card identical" in result.stdout
    assert "tokens identical to eager" in result.stdout
