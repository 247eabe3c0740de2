"""Wrong results found in review (issue 9), each against eager PyTorch: these
returned wrong values with zero CPU fallbacks counted before their fix."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.inductor import counters, state
from test_torch_ops import check, rand, run

torch.manual_seed(0)

DTYPES = [torch.float32, torch.float16]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dims", [[0], [1], [0, 1], [-1, 0]], ids=str)
def test_flip(dims, dtype):
    x = rand(5, 6, 7, dtype=dtype)
    check(lambda x: torch.flip(x, dims), x, dtype=dtype)
    if len(dims) == 1:
        check(torch.fliplr, x, dtype=dtype)


# Converted (16-bit) outputs that are views of a larger buffer were written
# back over their whole flat extent, zeroing the neighbouring views' elements.
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_concatenations_along_inner_dims(dtype):
    a, b, c = rand(4, 3, 5, dtype=dtype), rand(4, 2, 5, dtype=dtype), rand(4, 3, 2, dtype=dtype)
    check(lambda a, b: torch.cat([a, b], 1), a, b, dtype=dtype)
    check(lambda a, c: torch.cat([a, c], -1), a, c, dtype=dtype)
    check(lambda a, b: torch.column_stack([a[:, 0], b[:, 0]]), a, b, dtype=dtype)
    check(lambda a, b: torch.dstack([a, a]), a, b, dtype=dtype)
    check(lambda a, c: torch.block_diag(a[0], c[0]), a, c, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_constant_padding(dtype):
    x = rand(2, 3, 7, dtype=dtype)
    check(lambda x: F.pad(x, (1, 2, 0, 3), value=0.5), x, dtype=dtype)
    check(lambda x: torch.constant_pad_nd(x, (2, 1)), x, dtype=dtype)


# Views of one storage were separate kernel arguments: the C++ pipeline,
# which takes arguments not to alias, fused a read of the padded buffer with
# the writes of its slices (NaN in local_response_norm, conv2d's padding).
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_padding_read_in_the_same_kernel(dtype):
    x = rand(1, 6, 3, dtype=dtype)
    check(lambda x: F.local_response_norm(x, 2, alpha=3e-5, beta=0.5, k=1.25), x, dtype=dtype)
    x, w = rand(1, 8, 12, 12, dtype=dtype), (rand(8, 8, 3, 3) * 0.2).to(dtype)
    check(lambda x, w: F.conv2d(x, w, padding=1), x, w, dtype=dtype, depth=72)
    check(lambda x, w: F.conv2d(x, w, stride=2, padding=2), x, w, dtype=dtype, depth=72)


# In-place ops on graph inputs stored into a buffer the wrapper never
# defined (NameError); the mutated input must be written back.
def compiled_once(fn, *args):
    """fn compiled and run once on args (which it may mutate), on the card."""
    torch._dynamo.reset()
    counters.reset()
    result = torch.compile(fn, backend="spyre")(*args)
    assert not counters.fallbacks and counters.kernels_run > 0, dict(counters.fallbacks)
    return result


def _add_(x):
    x.add_(1)
    return x * 2


def _setitem(x):
    x[:2] = 5
    return x + 1


def _copy_(y, z):
    y.copy_(z)
    return y * 3


@pytest.mark.parametrize("fn,shapes", [(_add_, [(4, 5)]), (_setitem, [(4, 5)]),
                                       (_copy_, [(4, 5), (4, 5)])], ids=["add_", "setitem", "copy_"])
def test_inplace_ops_on_inputs(fn, shapes):
    args = [torch.randn(*s) for s in shapes]
    ours, theirs = [a.clone() for a in args], [a.clone() for a in args]
    compiled = compiled_once(fn, *ours)
    expected = fn(*theirs)
    torch.testing.assert_close(compiled, expected)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b)


def test_batch_norm_training_updates_running_stats():
    model = torch.nn.BatchNorm2d(3).train()
    reference = copy.deepcopy(model)
    x = torch.randn(2, 3, 4, 4)
    compiled = compiled_once(model, x.clone())
    torch.testing.assert_close(compiled, reference(x.clone()), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(model.running_mean, reference.running_mean)
    torch.testing.assert_close(model.running_var, reference.running_var)
    assert int(model.num_batches_tracked) == int(reference.num_batches_tracked) == 1


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_products_with_an_empty_inner_dimension(dtype):
    """A sum of no products is zero (the lowering asserted on K = 0)."""
    a, b = torch.randn(4, 0).to(dtype), torch.randn(0, 5).to(dtype)
    compiled = compiled_once(lambda a, b: a @ b + 1, a, b)
    assert compiled.dtype == dtype
    torch.testing.assert_close(compiled, torch.ones(4, 5, dtype=dtype))
    a3 = torch.randn(5, 5, 0).to(dtype)
    compiled = compiled_once(torch.matmul, a3, b)
    torch.testing.assert_close(compiled, torch.zeros(5, 5, 5, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("transposed", [False, True])
def test_batched_products_of_opinfo_shapes(transposed, dtype):
    a, b, c = rand(5, 5, 10, dtype=dtype), rand(5, 10, 5, dtype=dtype), rand(5, 5, 5, dtype=dtype)
    if transposed:
        a, b = rand(5, 10, 5, dtype=dtype).transpose(1, 2), rand(5, 5, 10, dtype=dtype).mT
    check(torch.bmm, a, b, dtype=dtype, depth=10)
    check(lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2), c, a, b, dtype=dtype,
          depth=10)


# The card holds int64 as int32: results that leave int32 were saturated or
# wrapped. They now run on the CPU, counted, and strict mode refuses them.
@pytest.mark.parametrize("fn,x,fallback", [
    (lambda x: x.sum(), torch.tensor([2 ** 23] * 8), "aten.sum.default"),
    (lambda x: x * x, torch.tensor([100000] * 8), "aten.mul.Tensor"),
    (lambda x: x + 2 ** 31, torch.tensor([1] * 8), "aten.add.Tensor"),
    (lambda x: x + 1, torch.tensor([2 ** 40] * 8), "spyre.int64_inputs"),
], ids=["sum", "square", "add_constant", "input_beyond_int32"])
def test_int64_results_beyond_int32_fall_back(fn, x, fallback):
    torch._dynamo.reset()
    counters.reset()
    torch.testing.assert_close(torch.compile(fn, backend="spyre")(x), fn(x))
    assert fallback in counters.fallbacks, dict(counters.fallbacks)
    torch._dynamo.reset()
    with pytest.raises(Exception, match="strict mode"):
        state.strict = True
        try:
            torch.compile(fn, backend="spyre")(x)
        finally:
            state.strict = False


# Products the matrix unit cannot take (integers, f64) were lowered as f32
# sums: int8 results came out wrong with no fallback counted, and int32,
# int64, uint8 and f64 graphs failed in Inductor's CPU code generation.
# They run on the CPU now, exactly, counted.
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16, torch.int32,
                                   torch.int64, torch.float64], ids=str)
@pytest.mark.parametrize("fn", [
    lambda a, b: a @ b,
    lambda a, b: torch.bmm(a[None], b[None]),
    lambda a, b: torch.addmm(a[:, :8], a, b),
    lambda a, b: (a @ b).relu() + 1,
], ids=["mm", "bmm", "addmm", "mm_relu"])
def test_integer_and_f64_products_run_exactly_on_the_cpu(fn, dtype):
    g = torch.Generator().manual_seed(0)
    if dtype.is_floating_point:
        a, b = torch.randn(8, 16, generator=g, dtype=dtype), torch.randn(16, 8, generator=g,
                                                                        dtype=dtype)
    else:  # products that wrap around in int8 and leave f32's exact integers
        a = (torch.randint(0, 100, (8, 16), generator=g) * 50 + 4001).to(dtype)
        b = (torch.randint(0, 100, (16, 8), generator=g) * 50 + 4003).to(dtype)
    torch._dynamo.reset()
    counters.reset()
    assert torch.equal(torch.compile(fn, backend="spyre")(a, b), fn(a, b))
    assert sum(counters.fallbacks.values()) > 0


def test_f64_attention_is_not_computed_in_f32():
    q, k, v = (torch.randn(1, 2, 8, 16, dtype=torch.float64) for _ in range(3))
    for causal in (False, True):
        fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
        torch._dynamo.reset()
        counters.reset()
        torch.testing.assert_close(torch.compile(fn, backend="spyre")(q, k, v), fn(q, k, v),
                                   rtol=1e-12, atol=1e-12)
        assert sum(counters.fallbacks.values()) > 0


def test_int64_results_the_card_holds_run_on_it():
    """Bounded integers still run on the card: counts of booleans, small
    increments, argmax."""
    x, n = torch.randn(100), torch.tensor([5, -3, 7])
    check(lambda x: (x > 0).sum(), x)
    check(lambda n: n + 1, n)
    check(lambda x: x.argmax(), x)


# A kernel writing one slice of a concatenation whose other slice an earlier
# kernel wrote is given the whole buffer, an `output` as a write comes first:
# converted dtypes (int64 is int32 on the card, f16 DLFloat16, bf16 f32)
# started from zeros and were written back whole, zeroing the earlier slice
# (the pivots of linalg.inv). The matrix product is a kernel of its own,
# between the kernels of the two slices.
@pytest.mark.parametrize("dtype", DTYPES + [torch.bfloat16], ids=str)
def test_concatenation_of_slices_written_by_several_kernels(dtype):
    x, w = rand(4, 6, dtype=dtype), rand(6, 6, dtype=dtype)
    check(lambda x, w: torch.cat([x.amax(1), (x @ w).amax(1)]), x, w, dtype=dtype, depth=6)
    # int64 slices (f32 operands: DLFloat16 rounding could tie argmax).
    check(lambda x, w: torch.cat([x.argmax(1), (x @ w).isfinite().sum(1)]), x.float(), w.float())


# Float to integer conversions saturated on the card (500.0 -> int8 gave 127,
# NaN -> int32 gave 0) where PyTorch truncates to int32, gives INT32_MIN for
# NaN and values outside int32, and keeps the low bits of narrower types.
@pytest.mark.parametrize("dtype", [torch.int32, torch.int8], ids=str)
def test_float_to_integer_conversions_wrap_as_pytorch(dtype):
    x = torch.tensor([3e9, -3e9, float("nan"), float("inf"), -float("inf"), 2147483520.0,
                      -2147483648.0, 500.0, -300.0, 3.7, -129.0, -0.5] * 4)
    counters.reset()
    torch._dynamo.reset()
    actual = torch.compile(lambda t: (t * 1).to(dtype), backend="spyre")(x)
    assert dict(counters.fallbacks) == {} and counters.kernels_run > 0
    assert torch.equal(actual, (x * 1).to(dtype))


# A sum of f32 products written as pointwise ops ran on the matrix unit,
# which rounds its operands to DLFloat16: (x[:, None] * y).sum(-1) over 27
# values was off by 1.5e-2. It stays a reduction in f32, as exact as on the
# CPU. Products the program asks for (a matrix-vector product, which
# Inductor also decomposes into a multiply and a sum) and 16-bit operands
# still take the matrix unit.
def test_f32_sums_of_products_keep_f32_precision(kernels):
    x, y = rand(65, 27), rand(65, 27)
    check(lambda x, y: (x[:, None, :] * y[None, :, :]).sum(-1), x, y)
    assert kernels and not any("spyre.matmul" in k for k in kernels)
    kernels.clear()
    check(lambda a, v: a @ v, rand(64, 300), rand(300), depth=300)
    assert any("spyre.matmul" in k for k in kernels)
    kernels.clear()
    check(lambda x, y: (x[:, None, :] * y[None, :, :]).sum(-1), x.half(), y.half(),
          dtype=torch.float16, depth=27)
    assert any("spyre.matmul" in k for k in kernels)


def same_as_eager(fn, *args):
    """Asserts the compiled fn gives eager's values exactly, wherever it ran."""
    torch._dynamo.reset()
    counters.reset()
    assert torch.equal(torch.compile(fn, backend="spyre")(*args), fn(*args))


# Integer maxima, minima and their positions were reduced in f32 on the card,
# where integers beyond 2^24 round: amax of [2^25 + 1, 2^25, 3, 2^25 + 3]
# gave 2^25 + 4 and sort repeated 2^25, with no fallback counted. Such
# reductions run on the CPU (counted) unless their values are proven to
# stay within 2^24; small ones stay on the card.
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64], ids=str)
def test_integer_extremes_beyond_2_24_are_exact(dtype):
    x = torch.tensor([[2 ** 25 + 1, 2 ** 25, 3, 2 ** 25 + 3], [2 ** 25, 2 ** 25 + 1, -7, 1]],
                     dtype=dtype)
    for fn in (lambda x: x.amax(-1), lambda x: x.amin(0), lambda x: x.max(-1).values,
               lambda x: x.argmax(-1), lambda x: x.argmin(0), lambda x: torch.sort(x).values,
               lambda x: torch.topk(x, 2).values, lambda x: torch.cummax(x, -1).values):
        same_as_eager(fn, x)
        assert counters.fallbacks
    # Values proven small (a bool count, an int64 input, within 2^24 as
    # checked on every call) keep their reductions on the card.
    small = torch.tensor([[2 ** 24, 2 ** 24 - 1, 3], [-2 ** 24, 5, 5]], dtype=dtype)
    check(lambda x: (x > 3).to(dtype).cumsum(-1).amax(-1), small)
    if dtype == torch.int64:
        check(lambda x: (x.amax(-1), x.argmin(-1), torch.sort(x).values), small)


# A card kernel's int64 result was read by later kernels as if it were a
# graph input (within +-2^24), so their products were proven to fit int32
# when they did not: cat([64 x, ...]) * 3 wrapped around at x = 2^24 - 1.
# Later kernels now read the range the earlier one stored.
def test_int64_computed_on_the_card_keeps_its_range():
    x = torch.full((4, 8), 2 ** 24 - 1, dtype=torch.int64)
    x[:, 0] = -5

    def thrice(x):
        c = torch.cat([x * 64, (x * 64).flip(0)])
        return c * 3
    compiled, expected = run(thrice, x, fallbacks=1)
    assert torch.equal(compiled, expected)


# OPT's position ids: a running count of a mask the graph builds, made int64
# in the next kernel, fell back to the CPU ("int64 to_dtype may leave the
# card's int32"), and so did the embedding that read it. The count's range
# (0 to the row length) is what the kernel that made it stored.
def test_a_running_count_made_int64_stays_on_the_card():
    table = rand(40, 8)

    def positions(ids, table):
        mask = torch.ones(ids.shape, dtype=torch.float32)
        return F.embedding((torch.cumsum(mask, 1) * mask).long() - 1 + 2, table)
    check(positions, torch.randint(0, 40, (2, 12)), table)


# Sorts, top-k and masked maxima of int8 tensors crashed the compile (their
# sentinel was int32's least value, which int8 cannot hold), and so did a
# remainder by an int16 divisor (the range analysis made sympy's infinity an
# int). They compile and match eager (int16 runs on the CPU, counted).
def test_narrow_integer_sorts_and_remainders_compile():
    x = torch.randint(-128, 127, (3, 70), dtype=torch.int8)
    index = torch.tensor([[0, 2, 2, 5], [1, 1, 1, 1], [5, 4, 0, 4]])
    for fn in (lambda x: x.sort(-1).values, lambda x: torch.topk(x, 3).values,
               lambda x: torch.cummax(x, -1).values,
               lambda x: x.scatter_reduce(1, index, x[:, :4].flip(0), "amin")):
        same_as_eager(fn, x)
    s = torch.randint(-30000, 30000, (3, 70), dtype=torch.int16)
    same_as_eager(lambda s, d: torch.remainder(s, d.clamp(min=1)), s, s.flip(0))


# A write to part of a graph input (x[:1] = 0) gave the whole input the
# written range, so x * 256 was proven to fit int32 for any x and wrapped
# around at x = 2^24 - 3. An input keeps what it may hold before the graph.
def test_a_partly_written_input_keeps_its_range():
    def scaled(x):
        x[:1] = 0
        return x * 256
    x = torch.full((4, 8), 2 ** 24 - 3, dtype=torch.int64)
    torch._dynamo.reset()
    counters.reset()
    assert torch.equal(torch.compile(scaled, backend="spyre")(x.clone()), scaled(x.clone()))
    assert counters.fallbacks


# fp16 nan_to_num gave infinities back: its replacement for them, fp16's
# largest value 65504, is a tie in DLFloat16 that rounds up to 65536, which
# is infinity again in fp16. The replacement is DLFloat16's 65472, a 9-bit
# rounding of eager's value, finite as nan_to_num promises.
def test_fp16_nan_to_num_leaves_no_infinity():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5, -3.0] * 3,
                     dtype=torch.float16)
    check(torch.nan_to_num, x, dtype=torch.float16)
    check(lambda x: torch.nan_to_num(x, posinf=65504.0, neginf=-65500.0), x,
          dtype=torch.float16)
    # A replacement beyond fp16's range is infinity in eager too.
    check(lambda x: torch.nan_to_num(x, 1.0, 70000.0, -2.0), x, dtype=torch.float16)


# A copy of an int64 input written in part and scaled in one kernel
# (slice_scatter: a masked body) was not checked at all: the dtype of the
# `masked` value was unknown, so no result was taken for int64, and
# (x.clone()[:1] = 0) * 256 wrapped at x = 2^24 - 3. A masked value has its
# body's dtype and range, and an op of unknown dtype with an int64 operand
# is checked as int64.
def test_a_masked_int64_value_is_range_checked():
    def scaled(x):
        x = x.clone()
        x[:1] = 0
        return x * 256
    same_as_eager(scaled, torch.full((4, 8), 2 ** 24 - 3, dtype=torch.int64))
    assert counters.fallbacks


# T5's relative-position buckets take log(0) on the lanes where the position
# is small, convert it to int64 and discard it with torch.where. The range
# check refused the conversion (its values may leave int32), and every T5
# forward ran them on the CPU. A where's branches are checked over the lanes
# that choose them: where the comparison sends the large positions, log is
# finite and the conversion fits.
def _buckets(rp):
    n = rp.abs()
    large = 8 + (torch.log(n.float() / 8) / math.log(128 / 8) * 8).to(torch.int64)
    return torch.where(n < 8, n, torch.min(large, torch.full_like(large, 15)))


def _log_buckets(rp, mid=8, max_position=64):
    """DeBERTa's (and SEW-D's) log buckets: log(0) on the small positions,
    which the second where discards, made int64 after it."""
    small = (rp < mid) & (rp > -mid)
    distance = torch.where(small, torch.tensor(mid - 1).type_as(rp), torch.abs(rp))
    log_pos = torch.ceil(torch.log(distance / mid) / math.log((max_position - 1) / mid)
                         * (mid - 1)) + mid
    return torch.where(distance <= mid, rp.type_as(log_pos), log_pos * torch.sign(rp)).long()


def test_a_value_the_where_discards_may_leave_int32():
    positions = torch.arange(-200, 200, dtype=torch.int64)
    same_as_eager(_buckets, positions)
    assert counters.fallbacks == {} and counters.kernels_run == 1
    same_as_eager(_log_buckets, positions)
    assert counters.fallbacks == {}
    # A branch no lane takes (mT5's buckets compare positions that are never
    # negative) is not analysed at all; its range was an internal error.
    def never(x):
        i = torch.arange(x.shape[0])
        return torch.where(i < 0, torch.log(i.float()).to(torch.int64), i) + x
    same_as_eager(never, positions)
    assert counters.fallbacks == {}
    # The same where with a branch that leaves int32 on its own lanes, or
    # chosen by a condition that is not a comparison, is still refused.
    x = torch.arange(-12, 12, dtype=torch.int64)
    same_as_eager(lambda x: torch.where(x < 4, x * 2 ** 29, x), x)
    assert counters.fallbacks
    same_as_eager(lambda x: torch.where(x >= 4, x, x * 2 ** 29), x)
    assert counters.fallbacks
    same_as_eager(lambda x, keep: torch.where(keep, x, x * 2 ** 29), x, x % 3 == 0)
    assert counters.fallbacks


# XGLM looks up its sinusoidal positions at position + 2. Inductor fused the
# + 2 into the lookup, and the export made it a gather of the index buffer as
# loaded, without the + 2: every position read the row two before its own,
# with no fallback counted. MoE routing's x[order // top_k] read rows outside
# the table (a simulation error). A lookup whose row is computed from the
# loaded index now computes its rows on the card first, then gathers.
class _Positions(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Buffer(torch.randn(130, 64), persistent=False)

    def forward(self, x):
        positions = torch.arange(x.shape[1]).unsqueeze(0) + 2
        return x + self.table.index_select(0, positions.view(-1)).view(1, x.shape[1], 64)


def test_an_embedding_row_computed_from_the_index():
    torch.manual_seed(0)
    same_as_eager(_Positions(), torch.randn(2, 12, 64))
    assert counters.fallbacks == {}
    tokens, order = torch.randn(24, 64), torch.randperm(48)
    same_as_eager(lambda x, order: x[order // 2] * 3, tokens, order)
    assert counters.fallbacks == {}
    same_as_eager(lambda ids, table: F.embedding(ids, table), torch.randint(0, 130, (2, 12)),
                  torch.randn(130, 64))
    assert counters.fallbacks == {}


# Found by OpInfo's every-sample run: take of an empty tensor divided by its
# zero size, and put into a 0-d tensor called expand() with no sizes; both
# failed the compile where eager returns.
def test_take_of_an_empty_tensor_and_put_into_a_0d_one_compile():
    same_as_eager(torch.take, torch.randn(0), torch.zeros(0, dtype=torch.int64))
    same_as_eager(lambda x, i, v: torch.put(x, i, v, accumulate=True), torch.tensor(2.0),
                  torch.tensor(0), torch.tensor(3.0))


# Found by OpInfo's every-sample run: var_mean and std_mean of an empty input
# returned a mean of 0 (Inductor's Welford reduction of nothing) where eager's
# is nan, with no fallback counted; their variance was already nan.
@pytest.mark.filterwarnings("ignore:var_mean|std_mean:UserWarning")
@pytest.mark.parametrize("shape,dim", [((0,), None), ((0, 5), None), ((0, 5), 0),
                                       ((3, 0), 1)], ids=str)
@pytest.mark.parametrize("op", [torch.var_mean, torch.std_mean], ids=lambda op: op.__name__)
def test_mean_of_an_empty_input_is_nan(op, shape, dim):
    x = torch.randn(shape)
    torch._dynamo.reset()
    counters.reset()
    compiled = torch.compile(lambda x: op(x, dim), backend="spyre")(x)
    for c, e in zip(compiled, op(x, dim)):
        torch.testing.assert_close(c, e, equal_nan=True)
    assert counters.fallbacks == {}


# Found by OpInfo's every-sample run: a product with an empty result (5 x 4
# @ 4 x 0, inside multi_dot) failed the compile: Inductor cannot make its
# zero-size operand contiguous.
@pytest.mark.parametrize("fn,shapes", [
    (lambda a, b, c: torch.linalg.multi_dot([a, b, c]), [(5, 4), (4, 0), (0, 2)]),
    (torch.mm, [(0, 3), (3, 4)]), (torch.bmm, [(2, 3, 4), (2, 4, 0)])],
    ids=["multi_dot", "mm", "bmm"])
def test_products_with_an_empty_result_compile(fn, shapes):
    same_as_eager(fn, *[torch.randn(s) for s in shapes])


def test_control_flow_operators_run_their_own_kernels():
    """torch.cond's branches and while_loop's body are subgraphs whose kernels
    share the graph's module: a branch's first kernel took the name of the
    graph's own and replaced it (the graph then bound its predicate to the
    branch's program and failed)."""
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))
    branches = lambda a: torch.cond(a.sum() > 0, lambda v: v.sin() * 2,  # noqa: E731
                                    lambda v: v.cos() + 1, (a,))
    torch._dynamo.reset()
    compiled = torch.compile(branches, backend="spyre")
    for value in (x.abs(), -x.abs()):
        torch.testing.assert_close(compiled(value), branches(value))
    loop = lambda a: torch._higher_order_ops.while_loop(  # noqa: E731
        lambda i, a: i < 3, lambda i, a: (i + 1, a * 1.5 - 0.1), (torch.tensor(0), a))[1]
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(loop, backend="spyre")(x), loop(x))


# Found by the integer OpInfo sweep (opinfo_check.py --dtype i32 --all-samples).
def test_an_integer_linspace_truncates_its_bounds_as_eager():
    # Inductor's decomposition kept the fractional start: 7 of 50 values
    # differed. Python bounds give a constant; tensor bounds run eager's
    # kernel (counted).
    for start, end, steps in ((4.3, -3, 50), (0, 7, 50), (-2.5, 1000, 37), (3, 10, 1)):
        for dtype in (torch.int32, torch.int64):
            fn = lambda: torch.linspace(start, end, steps, dtype=dtype)  # noqa: E731
            torch._dynamo.reset()
            counters.reset()
            actual = torch.compile(fn, backend="spyre")()
            assert not counters.fallbacks
            assert actual.dtype == dtype and torch.equal(actual, fn())
    bounds = torch.tensor(4.3), torch.tensor(-3.0)
    fn = lambda a, b: torch.linspace(a, b, 50, dtype=torch.int32)  # noqa: E731
    torch._dynamo.reset()
    counters.reset()
    assert torch.equal(torch.compile(fn, backend="spyre")(*bounds), fn(*bounds))
    assert set(counters.fallbacks) == {"aten.linspace.Tensor_Tensor"}


def test_an_integer_addbmm_truncates_its_scalars_as_eager():
    # beta 0.6 and alpha 0.2 are 0 for integer tensors in eager; the
    # decomposition multiplied by them and returned floats.
    g = torch.Generator().manual_seed(0)
    c = torch.randint(-5, 5, (5, 10), generator=g, dtype=torch.int32)
    a = torch.randint(-5, 5, (4, 5, 6), generator=g, dtype=torch.int32)
    b = torch.randint(-5, 5, (4, 6, 10), generator=g, dtype=torch.int32)
    for beta, alpha in ((0.6, 0.2), (1.7, 2.9), (1, 1)):
        fn = lambda c, a, b: torch.addbmm(c, a, b, beta=beta, alpha=alpha)  # noqa: E731
        torch._dynamo.reset()
        actual = torch.compile(fn, backend="spyre")(c, a, b)
        assert actual.dtype == torch.int32 and torch.equal(actual, fn(c, a, b))


# Crashes found by a differential fuzz of random op compositions (2026-12-07).

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_value_of_a_zero_d_input_broadcast_and_gathered(dtype):
    # log of a 0-d tensor is a one-element value its reader recomputes;
    # remapping the 0-d input's map through it aborted the process.
    a, s = rand(64, dtype=dtype), torch.tensor(0.7).to(dtype)
    check(lambda a, s, i: (a - s.log())[i], a, s, torch.tensor([3, 5]), dtype=dtype)


def test_a_vector_softmax_times_a_vector_is_not_attention():
    # The hand-written attention pass took the 0-d product's rank as the
    # softmax's: ZeroDivisionError in BackendCompilerFailed.
    a, b = rand(127), rand(127)
    check(lambda a, b: torch.softmax(a, 0) @ b, a, b)


def test_a_short_argmax_run_on_the_cpu_reads_nothing_past_its_end():
    # uint8 is not the card's: the argmax runs as Inductor's C++ code, under
    # our config a reduction however short, whose vectorized form (torch
    # 2.13) returned garbage indices for rows of ties, depending on what
    # memory held (its accumulator's lanes past the 2 elements): so it is
    # generated without vectors, which the code shows (the garbage itself
    # depends on the stack a run leaves).
    from torch._inductor.utils import run_and_get_code
    x = torch.rand(129, 1, 3, 2, generator=torch.Generator().manual_seed(0)) < 0.5

    def argmax(x):
        return x.to(torch.uint8).argmax(3)

    torch._dynamo.reset()
    counters.reset()
    compiled = torch.compile(argmax, backend="spyre")
    result, code = run_and_get_code(compiled, x)
    torch.testing.assert_close(result, argmax(x))
    assert counters.fallbacks.get("aten.argmax.default")
    assert "argmax_combine_vec" not in "".join(code)


def test_a_float_floor_division_run_on_the_cpu_compiles():
    # An int64 sum runs on the CPU, and with it the floor division that
    # reads it: our lowering keeps a float floor division ops.floordiv, which
    # Inductor's scalar C++ wrote as floor_divide_integral (CppCompileError).
    # Found by the differential fuzz.
    def fn(x):
        return torch.div(x.float(), x.sum() + 0.5, rounding_mode="floor").flip(0)

    for seed in range(3):
        x = torch.randint(-10, 10, (129,), dtype=torch.int32,
                          generator=torch.Generator().manual_seed(seed))
        torch._dynamo.reset()
        counters.reset()
        torch.testing.assert_close(torch.compile(fn, backend="spyre")(x), fn(x))
        assert counters.fallbacks.get("aten.div.Tensor_mode") == 1


def test_a_gather_along_a_leading_dimension_is_laid_out_as_eager():
    # The gather picked with its dimension last and moved it back: the
    # graph's output, read in that order, came back with strides (381, 1,
    # 127) where eager's are (381, 3, 1), and a caller's view(-1) failed.
    # Found by the differential fuzz.
    g = torch.Generator().manual_seed(0)
    x, v = torch.randn(127, 1, 3, generator=g), torch.randn(127, 3, generator=g)
    index = torch.randint(0, 127, (127, 3), generator=g)

    def fn(x, v, index):
        return x - torch.gather(v, 0, index)

    compiled, expected = run(fn, x, v, index)
    assert compiled.stride() == expected.stride()
    torch.testing.assert_close(compiled.view(-1), expected.view(-1))
