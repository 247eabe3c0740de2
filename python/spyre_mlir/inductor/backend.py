"""torch.compile(model, backend="spyre"): Inductor with our Scheduling and
lowerings for CPU tensors, kernels run on the simulator."""

from __future__ import annotations

import contextlib
import functools
import operator
import warnings
from typing import NamedTuple

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

from . import counting, register, state
from .manual_attention import AttentionGraphPasses


class _PostGradPasses(CustomGraphPass):
    """Our passes over the post-grad graph (a convolution's explicit zero
    padding, a per-channel affine map after it, as an eval BatchNorm, and
    its ReLU or ReLU6 and residual add folded into its kernel, one image's
    1x1 ones made products; updated graph inputs written in place; products
    of one input placed together); the uuid keys
    Inductor's FX graph cache on our compiler version, so a cached graph is
    never one compiled by an older compiler (or by the CPU backend)."""

    def __call__(self, graph: torch.fx.Graph) -> None:
        from .adjacent_products import place_products_together
        from .complex_values import real_pairs
        from .conv_affine import fold_channel_affine
        from .convolution import fold_zero_padding, fuse_epilogues, pointwise_products
        from .inplace_updates import write_updates_in_place
        from .rotate_half import swap_halves
        real_pairs(graph)
        fold_zero_padding(graph)
        fold_channel_affine(graph)
        fuse_epilogues(graph)
        pointwise_products(graph)
        swap_halves(graph)
        write_updates_in_place(graph)
        place_products_together(graph)

    def uuid(self):
        from .kernel_cache import compiler_version
        # Check mode generates other code (the CPU twin of every kernel), and
        # without chains an MLP is two kernels.
        from .. import tuning
        return ("spyre-" + compiler_version() + ("-check" if state.check else "") +
                ("" if state.chains else "-nochains") + ("-tune" if tuning.enabled() else ""))


def _overlap_collectives(nodes):
    """Inductor's own passes move collectives between cards (distributed/)
    as early, and their waits as late, as the dependencies allow; only in
    graphs that have one, since they estimate every node's run time."""
    from torch._inductor import comms, utils
    if not any(utils.contains_collective(node) for node in nodes):
        return nodes
    return comms.sink_waits(comms.raise_comms(nodes))


#: Added for graphs with collectives between cards only: a collective starts
#: as early and is waited for as late as its dependencies allow, so the card
#: computes while the link works. Not in CONFIG, which the spyre device sets
#: globally: Inductor keeps no-op slices and pads in every graph once it is on.
COLLECTIVES_CONFIG = {
    "reorder_for_compute_comm_overlap": True,
    "reorder_for_compute_comm_overlap_passes": [_overlap_collectives],
}


def _has_collectives(gm, example_inputs) -> bool:
    """Functional collectives in the graph, or DTensor inputs (whose
    collectives appear when AOTAutograd unwraps them)."""
    import torch.distributed as dist
    if dist.is_available():
        from torch.distributed.tensor import DTensor
        if any(isinstance(x, DTensor) for x in example_inputs):
            return True
    return any(
        node.op == "call_function" and str(node.target).startswith("_c10d_functional.")
        for node in gm.graph.nodes)


CONFIG = {
    # Reductions stay reductions (a matrix product is one), and are not split:
    # the compiler cuts those with too few outputs for the card's cores
    # (spyre-split-reductions), where it knows the cores and the tiles.
    "split_reductions": False,
    "unroll_reductions_threshold": 1,
    "cpp_wrapper": False,
    # Its rewrites target CPU/GPU libraries (e.g. decomposed attention back
    # into the CPU flash-attention kernel); our kernels want the plain ops.
    "pattern_matcher": False,
    "loop_reindexing_after_fusion": False,
    # Concatenations as copies into slices of the result, never masked loads.
    "max_complex_pointwise_cat_inputs": 0,
    "max_pointwise_cat_inputs": 0,
    "post_grad_custom_post_pass": _PostGradPasses(),
    # Hand-written attention as scaled_dot_product_attention (the card's
    # fused kernel), and attention over repeated key/value heads as
    # grouped-query attention.
    "pre_grad_custom_pass": AttentionGraphPasses(),
}


class Settings(NamedTuple):
    """What torch.compile's `mode` and `options` ask of one compile."""
    config: dict  # Inductor settings from `options`
    tune: bool    # tiles tuned by simulated time (tuning.py)


#: torch.compile's modes. max-autotune tunes tiles by simulated time; the
#: others' GPU settings (CUDA graphs) mean nothing for the card.
_TUNING_MODES = ("max-autotune", "max-autotune-no-cudagraphs")
_MODES = (None, "default", "reduce-overhead", *_TUNING_MODES)


def settings(mode=None, options=None) -> Settings:
    """Checks torch.compile's `mode` and `options` (Inductor settings, as
    for backend="inductor"): unknown ones, and settings the card's kernels
    cannot do without, raise."""
    if mode not in _MODES:
        raise ValueError(f"backend 'spyre': unknown mode {mode!r}; modes are "
                         f"{', '.join(repr(m) for m in _MODES[1:])}")
    from torch._inductor import config as inductor_config
    known = inductor_config.get_config_copy()
    for key, value in (options or {}).items():
        if key not in known:
            raise ValueError(f"backend 'spyre': unknown option {key!r} (options are Inductor "
                             "settings, torch._inductor.config)")
        if key in CONFIG and CONFIG[key] != value:
            raise ValueError(f"backend 'spyre': option {key!r} must stay {CONFIG[key]!r}, "
                             "which the card's kernels need")
    return Settings(dict(options or {}), mode in _TUNING_MODES)


DEFAULT = Settings({}, False)


def _tuning(tune: bool):
    """Tiles tuned by simulated time while compiling, if `tune`; else what
    SPYRE_TUNE says."""
    from .. import tuning
    return tuning.forced(True) if tune else contextlib.nullcontext()


def _inner_compile(gm, example_inputs, *, tune=False, **kwargs):
    from torch._inductor.compile_fx import compile_fx_inner
    with state.activated(), _tuning(tune):
        return compile_fx_inner(gm, example_inputs, **kwargs)


def _compile(gm, example_inputs, chosen: Settings = DEFAULT):
    from .float_scalars import narrowable, narrowed
    compile_values = functools.partial(_compile_for_values, chosen=chosen)
    scalars = narrowable(gm, example_inputs)
    if scalars:
        return narrowed(compile_values, gm, example_inputs, scalars)
    return compile_values(gm, example_inputs)


def _compile_for_values(gm, example_inputs, chosen: Settings):
    from .mask_inputs import Specialized, assumptions
    compile_graph = functools.partial(_compile_graph, chosen=chosen)
    assumed = assumptions(gm, example_inputs)
    if assumed:
        return Specialized(gm, example_inputs, assumed, compile_graph)
    return compile_graph(gm, gm, example_inputs)


def _compile_graph(gm, original, example_inputs, chosen: Settings = DEFAULT):
    """`gm` compiled; `original` (what gm computes for the inputs it was
    compiled for) is what runs on the CPU for inputs the card cannot take."""
    from torch._inductor.compile_fx import compile_fx
    # Active while AOTAutograd decomposes too (attention), and again in
    # _inner_compile for a backward graph compiled lazily.
    from .dumps import dump_dir
    config = {**chosen.config, **CONFIG}
    if _has_collectives(gm, example_inputs):
        config.update(COLLECTIVES_CONFIG)
    if dump_dir():  # a cached graph would generate (and dump) nothing
        config["fx_graph_cache"] = False
    # Tuning keys Inductor's caches (the post-grad passes' uuid), here and
    # for a backward graph compiled lazily.
    with state.activated(), _tuning(chosen.tune):
        compiled = compile_fx(gm, example_inputs,
                              inner_compile=functools.partial(_inner_compile, tune=chosen.tune),
                              config_patches=config)
    return _int64_inputs_checked(compiled, original)


def _int64_inputs_checked(compiled, gm):
    """Runs the whole graph on the CPU (counted) when an int64 input holds
    values beyond ranges.INT64_INPUTS: the card holds int64 as int32, and the
    compiler proved its kernels' integers fit only for inputs in that range.
    Checked before any kernel runs, so nothing is computed twice."""
    from .ranges import INT64_INPUTS
    low, high = int(INT64_INPUTS.lower), int(INT64_INPUTS.upper)

    def run(*args):
        for a in args:
            if isinstance(a, torch.Tensor) and a.dtype == torch.int64 and a.numel() and \
                    _outside(a, low, high):
                from .counting import fallback
                fallback(["spyre.int64_inputs"], f"int64 inputs beyond [{low}, {high}], what "
                         "the card's int32 and f32 reductions hold exactly")
                return gm(*args)
        return compiled(*args)
    return run


def refuse_int64_beyond_range(name: str, tensor) -> None:
    """Called by graphs compiled for the spyre device by torch.compile's
    default backend, which has no CPU version of the graph to fall back to
    as _int64_inputs_checked does: an int64 input beyond ranges.INT64_INPUTS
    raises rather than giving wrong values (the kernels assume the range)."""
    from .ranges import INT64_INPUTS
    low, high = int(INT64_INPUTS.lower), int(INT64_INPUTS.upper)
    if isinstance(tensor, torch.Tensor) and tensor.numel() and _outside(tensor, low, high):
        raise ValueError(f"int64 input {name} holds values beyond [{low}, {high}], what the "
                         "card's int32 and f32 reductions of this graph hold exactly; "
                         "torch.compile(..., backend=\"spyre\") runs such calls on the CPU")


def _outside(tensor, low: int, high: int) -> bool:
    """One pass over the input (aminmax), on every call of the graph: on a
    spyre tensor, the host's own check, not an eager op counted as a CPU
    fallback (counting.host_side)."""
    from .counting import host_side
    with host_side():
        extremes = torch.aminmax(tensor)
        return int(extremes.min) < low or int(extremes.max) > high


def _symbolic(example_inputs) -> bool:
    for x in example_inputs:
        if isinstance(x, torch.SymInt):
            return True
        if isinstance(x, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in x.shape):
            return True
    return False


#: Shapes one dynamic graph is compiled for before further shapes run on the
#: CPU (counted as fallbacks): kernels are compiled for static sizes.
MAX_SPECIALIZATIONS = 8


# Integer arithmetic Dynamo records on symbolic ints.
_INT_OPS = (operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
            operator.neg, operator.pow, min, max)


def _is_int(node) -> bool:
    return isinstance(node, torch.fx.Node) and isinstance(node.meta.get("example_value"),
                                                          (int, torch.SymInt))


def _returned_ints(gm) -> tuple[set[int], dict[int, torch.fx.Node]]:
    """Integer inputs that no tensor computation reads, only integer
    arithmetic the graph returns (a sliding-window cache's count of the
    tokens it has seen, `cumulative_length + 1`), and the graph's outputs
    computed from those alone: (input positions, {output position: node})."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    results = gm.graph.output_node().args[0]
    if not isinstance(results, (tuple, list)):  # Dynamo's graphs return tuples
        return set(), {}

    def arithmetic(node) -> bool:
        return node.op == "call_function" and node.target in _INT_OPS and not node.kwargs and \
            _is_int(node) and all(_is_int(a) or type(a) is int for a in node.args)

    def only_arithmetic(node) -> bool:
        """Every use of `node`, and of those uses, is integer arithmetic or
        the output."""
        seen, stack = set(), [node]
        while stack:
            for user in stack.pop().users:
                if user.op == "output":
                    continue
                if not arithmetic(user):
                    return False
                if user not in seen:
                    seen.add(user)
                    stack.append(user)
        return True

    free = {i for i, node in enumerate(placeholders) if _is_int(node) and only_arithmetic(node)}
    position = {node: i for i, node in enumerate(placeholders)}

    def only_free(node) -> bool:
        if not isinstance(node, torch.fx.Node):
            return type(node) is int
        if node.op == "placeholder":
            return position[node] in free
        return arithmetic(node) and all(only_free(a) for a in node.args)

    def reads_free(node) -> bool:
        return isinstance(node, torch.fx.Node) and (
            node.op == "placeholder" and position[node] in free or
            node.op == "call_function" and any(reads_free(a) for a in node.args))

    returned = {j: node for j, node in enumerate(results)
                if isinstance(node, torch.fx.Node) and node.op != "placeholder" and only_free(node)}
    # A result computed from a free input and another one would be the
    # compiled version's: then nothing is free.
    if any(reads_free(node) and j not in returned for j, node in enumerate(results)):
        return set(), {}
    return free, returned


def _evaluate(node, args, position):
    if not isinstance(node, torch.fx.Node):
        return node
    if node.op == "placeholder":
        return args[position[node]]
    return node.target(*(_evaluate(a, args, position) for a in node.args))


def _read_floats(gm, args) -> set[int]:
    """The 0-d tensor inputs read only through `.item()` (Python floats
    Dynamo did not specialize, as it does not with dynamic=True: a module's
    `eps` or an embedding's `norm_type`) that float_scalars does not pass to
    the card as f32 inputs. A version compiled for given shapes, outside
    Dynamo's trace, cannot read their values as symbols (AOTAutograd then
    has no shape environment): each value is part of what a version is
    compiled for, as Dynamo does without dynamic=True."""
    from .float_scalars import narrowable
    if narrowable(gm, args):
        return set()
    return {i for i, (node, a) in enumerate(zip((n for n in gm.graph.nodes
                                                  if n.op == "placeholder"), args))
            if isinstance(a, torch.Tensor) and a.dim() == 0 and a.is_floating_point() and
            node.users and all(u.op == "call_method" and u.target == "item"
                               for u in node.users)}


def _floats_as_constants(gm, values: dict):
    """gm with each `.item()` of input i read as values[i]."""
    if not values:
        return gm
    from .mask_inputs import copied, module_of
    graph, copies = copied(gm)
    placeholders = [copies[n] for n in gm.graph.nodes if n.op == "placeholder"]
    for i, value in values.items():
        for item in list(placeholders[i].users):
            item.replace_all_uses_with(value)
            graph.erase_node(item)
    return module_of(gm, graph)


class Specializing:
    """A graph traced with dynamic shapes (torch.compile(dynamic=True)): Dynamo
    does not recompile it per size, and we compile one static version per
    distinct set of input shapes, up to MAX_SPECIALIZATIONS. Integer inputs
    that only feed integer results (`_returned_ints`) do not make a new
    version: those results are computed here from each call's inputs. Float
    inputs read through `.item()` that float_scalars cannot pass as f32
    (`_read_floats`) are compiled in as their values."""

    def __init__(self, gm, chosen: Settings = DEFAULT):
        self.gm, self.chosen, self.compiled = gm, chosen, {}
        self.free, self.returned = _returned_ints(gm)
        self.position = {n: i for i, n in enumerate(n for n in gm.graph.nodes
                                                     if n.op == "placeholder")}
        self.floats = None  # _read_floats, on the first call
        self.warned = False

    def __call__(self, *args):
        if self.floats is None:
            self.floats = _read_floats(self.gm, args)
        key = tuple(None if i in self.free else
                    float(a) if i in self.floats else
                    (tuple(a.shape), tuple(a.stride()), a.dtype) if isinstance(a, torch.Tensor)
                    else a for i, a in enumerate(args))
        fn = self.compiled.get(key)
        if fn is None:
            if len(self.compiled) >= MAX_SPECIALIZATIONS:
                from .counting import fallback
                fallback(["spyre.specialization_limit"],
                         f"more than {MAX_SPECIALIZATIONS} shapes for one dynamic graph")
                self._warn_limit()
                return self.gm(*args)
            gm = _floats_as_constants(self.gm, {i: float(args[i]) for i in self.floats})
            fn = self.compiled[key] = _compile(gm, list(args), self.chosen)
        out = fn(*args)
        if not self.returned:
            return out
        out = list(out)
        for j, node in self.returned.items():
            out[j] = _evaluate(node, args, self.position)
        return out

    def _warn_limit(self) -> None:
        # Once per graph: the first call it sends to the CPU says why and
        # what to do; the count tells how many more did.
        if self.warned:
            return
        self.warned = True
        warnings.warn(
            f"a graph compiled with dynamic shapes met more than {MAX_SPECIALIZATIONS} "
            "distinct input shapes or integer values (each is a static compile); the calls "
            "with new ones run on the CPU, counted as "
            "counters.fallbacks['spyre.specialization_limit']. Hugging Face generate's "
            "default dynamic cache grows every token: pass cache_implementation=\"static\" "
            "(and spyre_mlir.generation.pad_to_bucket for prompts of many lengths)",
            counting.SpecializationLimitWarning, stacklevel=3)


def spyre_backend(gm: torch.fx.GraphModule, example_inputs, mode=None, options=None):
    """The "spyre" torch.compile backend (entry point torch_dynamo_backends)."""
    chosen = settings(mode, options)
    register()
    if _symbolic(example_inputs):
        return Specializing(gm, chosen)
    return _compile(gm, example_inputs, chosen)
