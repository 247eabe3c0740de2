"""Hugging Face mixture-of-experts layers on the card: transformers' grouped
matrix product (`torch.ops.transformers.grouped_mm_fallback`, what its MoE
experts call under torch.compile for weights other than bf16, and
`aten._grouped_mm`, what they call for bf16) as products the card runs, used
in spyre compiles (decompositions.py registers them, transformers' once it
has defined its op).

The op multiplies row s of `input` (S, K), its rows sorted by expert, by
`weight[e]` (E, K, N) of the expert e whose run of rows holds s: expert e's
rows end at `offs[e]`, cumulative. Rows past `offs[-1]` are zero. Eager
loops over the experts on the host with data-dependent row counts; here
every shape is static:

- few rows (decode: a token's top-k experts): each row's expert's weight is
  gathered and the rows multiplied as a batch of vector-matrix products, so
  only the chosen experts' weights are read;
- many rows (prefill): every row is multiplied by every expert's weight and
  each row keeps its own expert's product, a selection (not a weighted
  sum), so the result is the product eager computes.

The crossover counts device-memory time: a gathered weight is read,
written (paying the read/write turnaround) and read again, about four
reads of S matrices, against E matrices read once by the dense form. A
1-layer Mixtral-like decode step (hidden 1024, 8 experts of 2048, top 2,
fp16): gathered 1003.8 us, dense 920.6 us simulated; the gathered form wins
from about 4 S < E (a top-8 router over 64 experts).
"""

from __future__ import annotations

import torch

from .extern_kernels import ELEMENT


def _op(name: str = "grouped_mm_fallback"):
    """transformers' grouped product (or its backward), if transformers has
    defined it."""
    try:
        return getattr(torch.ops.transformers, name).default
    except (AttributeError, RuntimeError):
        return None


def _experts_of_rows(rows, offs, device):
    """The expert of each row: how many runs end at or before it (E past
    the last)."""
    positions = torch.arange(rows, device=device, dtype=offs.dtype)
    return (offs.unsqueeze(0) <= positions.unsqueeze(1)).sum(1)


def _rows_of_experts(expert, experts: int):
    """(E, S): whether row s is expert e's."""
    return expert.unsqueeze(0) == torch.arange(experts, device=expert.device).unsqueeze(1)


def grouped_mm(input, weight, offs):
    """transformers' grouped_mm_fallback with static shapes (above)."""
    rows, experts = input.shape[0], weight.shape[0]
    expert = _experts_of_rows(rows, offs, input.device)
    zero = torch.zeros((), dtype=input.dtype, device=input.device)
    if 4 * rows < experts:
        valid = expert < experts
        chosen = torch.clamp(expert, max=experts - 1)
        # Gathered in the weight's own layout (a transposed view's storage
        # holds whole (N, K) matrices).
        if weight.transpose(1, 2).is_contiguous():
            picked = weight.transpose(1, 2)[chosen].transpose(1, 2)
        else:
            picked = weight[chosen]
        products = torch.bmm(input.unsqueeze(1), picked).squeeze(1)
        return torch.where(valid.unsqueeze(1), products, zero)
    products = torch.matmul(input.unsqueeze(0), weight)  # (E, S, N)
    own = _rows_of_experts(expert, experts)
    return torch.where(own.unsqueeze(2), products, zero).sum(0)


def grouped_mm_backward(input, weight, offs, grad_output):
    """The gradients of grouped_mm: each row's through its expert's weight
    (the same grouped product), each expert's weight's from its rows alone
    (a product over the rows with the other experts' rows zeroed)."""
    grad_input = grouped_mm(grad_output, weight.transpose(1, 2), offs)
    own = _rows_of_experts(_experts_of_rows(input.shape[0], offs, input.device), weight.shape[0])
    zero = torch.zeros((), dtype=input.dtype, device=input.device)
    rows = torch.where(own.unsqueeze(1), input.t().unsqueeze(0), zero)  # (E, K, S)
    return grad_input, torch.matmul(rows, grad_output)


def _applies(input, weight, offs) -> bool:
    return (input.dim() == 2 and weight.dim() == 3 and offs.dim() == 1 and
            input.dtype in ELEMENT and weight.dtype == input.dtype and
            offs.dtype in (torch.int32, torch.int64) and
            offs.shape[0] == weight.shape[0] and input.shape[1] == weight.shape[1] and
            all(isinstance(s, int) for s in (*input.shape, *weight.shape)))


def _backward_applies(input, weight, offs, grad_output) -> bool:
    return _applies(input, weight, offs) and grad_output.dtype == input.dtype and \
        grad_output.shape == (input.shape[0], weight.shape[2])


def aten_grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None):
    return grouped_mm(self, mat2, offs)


def _aten_applies(self, mat2, offs=None, bias=None, out_dtype=None) -> bool:
    """PyTorch's own grouped product (what transformers calls for bf16
    weights) in the form MoE experts use: rows grouped by `offs`, one 3-D
    weight, no bias. Rows past the last group are left undefined by eager;
    here they are zeros."""
    return (offs is not None and bias is None and out_dtype in (None, self.dtype) and
            _applies(self, mat2, offs))


def entries():
    """{op overload: (decomposition, whether it applies)}; transformers' op
    once transformers has defined it."""
    found = {torch.ops.aten._grouped_mm.default: (aten_grouped_mm, _aten_applies)} \
        if hasattr(torch.ops.aten, "_grouped_mm") else {}
    for name, entry in (("grouped_mm_fallback", (grouped_mm, _applies)),
                        ("grouped_mm_fallback_backward", (grouped_mm_backward,
                                                          _backward_applies))):
        op = _op(name)
        if op is not None:
            found[op] = entry
    return found
