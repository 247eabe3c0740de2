"""Wrong results found in review (issue 9), each against eager PyTorch: these
returned wrong values with zero CPU fallbacks counted before their fix."""

import pytest
import torch
import torch.nn.functional as F

from test_torch_ops import check, rand

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
