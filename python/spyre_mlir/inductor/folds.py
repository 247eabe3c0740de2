"""F.unfold (aten.im2col) and F.fold (aten.col2im) as strided slices of the
padded image, decompositions used in spyre compiles (decompositions.py
registers them).

Inductor's own decompositions index the image with arange tensors (im2col)
and add into it through index_put (col2im). The card reads an index that is a
tensor by comparing it with every position, a one-hot sum over the image's
rows (ConvBERT's span-based convolution unfolds 384 x 128 positions with a
9-tap window: one kernel of 1 ms simulated), and the accumulating index_put
ran on the CPU. Here tap (i, j) of a window is the view of every stride-th row
and column of the padded image from (i * dilation, j * dilation): unfold
stacks the taps. Fold adds them back: with a stride, each tap lands on one
phase of the image (the rows and columns of one residue modulo the stride),
shifted, so each phase is a sum of shifted taps and the image interleaves
the phases. Only affine reads, and fold's sums are elementwise adds in f32
within one kernel (rounded once).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _output_size(size, kernel, dilation, padding, stride):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _windows(image, kernel_size, dilation, padding, stride):
    """The windows' count along each image axis, (rows, cols)."""
    return tuple(_output_size(*args) for args in zip(image, kernel_size, dilation, padding,
                                                     stride))


def im2col(self, kernel_size, dilation, padding, stride):
    batched = self.dim() == 4
    x = self if batched else self.unsqueeze(0)
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh, ow = _windows((h, w), kernel_size, dilation, padding, stride)
    padded = F.pad(x, (pw, pw, ph, ph))
    taps = [padded[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                   j * dw:j * dw + (ow - 1) * sw + 1:sw]
            for i in range(kh) for j in range(kw)]
    out = torch.stack(taps, 2).reshape(n, c * kh * kw, oh * ow)
    return out if batched else out.squeeze(0)


def _tap_on_phase(tap, first_row, first_col, rows, cols):
    """tap [n, c, oh, ow] moved so that element (a, b) of the result is
    tap[a + first_row, b + first_col], zero where that is outside the tap,
    cut to rows x cols (negative pads crop)."""
    oh, ow = tap.shape[-2:]
    return F.pad(tap, (-first_col, cols - ow + first_col, -first_row, rows - oh + first_row))


def col2im(self, output_size, kernel_size, dilation, padding, stride):
    """The image is cut into stride x stride phases (the rows y = sh * a + r
    for each r, likewise the columns): a tap adds to one phase only, where
    it is the tap itself shifted, so each phase is a sum of shifted taps and
    the image their interleaving."""
    batched = self.dim() == 3
    cols = self if batched else self.unsqueeze(0)
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (
        output_size, kernel_size, dilation, padding, stride)
    oh, ow = _windows((h, w), kernel_size, dilation, padding, stride)
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    cols = cols.reshape(n, c, kh, kw, oh, ow)
    rows, columns = -(-h // sh), -(-w // sw)
    phases = []
    for ry in range(sh):
        for rx in range(sw):
            total = None
            # Tap (i, j) lands on rows sh * a + ry where a + (ry + ph - i * dh) / sh
            # is its window row.
            for i in range(kh):
                if (ry + ph - i * dh) % sh:
                    continue
                for j in range(kw):
                    if (rx + pw - j * dw) % sw:
                        continue
                    placed = _tap_on_phase(cols[:, :, i, j], (ry + ph - i * dh) // sh,
                                           (rx + pw - j * dw) // sw, rows, columns)
                    total = placed if total is None else total + placed
            phases.append(cols.new_zeros(n, c, rows, columns) if total is None else total)
    if len(phases) == 1:
        out = phases[0]
    else:
        out = torch.stack(phases, -1).reshape(n, c, rows, columns, sh, sw) \
            .permute(0, 1, 2, 4, 3, 5).reshape(n, c, rows * sh, columns * sw)[:, :, :h, :w]
    return out if batched else out.squeeze(0)


#: Window elements beyond which the taps stay with Inductor's decomposition
#: (each is a slice read, and for fold a term of one elementwise kernel).
MAX_TAPS = 256


def _fits(kernel_size, dilation, padding, stride, windows) -> bool:
    return (all(k > 0 for k in kernel_size) and all(d > 0 for d in dilation) and
            all(p >= 0 for p in padding) and all(s > 0 for s in stride) and
            kernel_size[0] * kernel_size[1] <= MAX_TAPS and all(o > 0 for o in windows))


def _im2col_applies(self, kernel_size, dilation, padding, stride) -> bool:
    if self.dim() not in (3, 4) or not self.is_floating_point() or self.numel() == 0:
        return False
    try:
        windows = _windows(self.shape[-2:], kernel_size, dilation, padding, stride)
    except (TypeError, ValueError):
        return False
    return _fits(kernel_size, dilation, padding, stride, windows)


def _col2im_applies(self, output_size, kernel_size, dilation, padding, stride) -> bool:
    """Eager's own checks of the shapes (and its errors) where they fail."""
    if self.dim() not in (2, 3) or not self.is_floating_point() or self.numel() == 0:
        return False
    try:
        windows = _windows(output_size, kernel_size, dilation, padding, stride)
    except (TypeError, ValueError):
        return False
    taps = kernel_size[0] * kernel_size[1] if len(kernel_size) == 2 else 0
    return (_fits(kernel_size, dilation, padding, stride, windows) and
            self.shape[-2] % taps == 0 and self.shape[-1] == windows[0] * windows[1])


def entries():
    """{aten overload: (decomposition, whether it applies to the arguments)}"""
    aten = torch.ops.aten
    return {aten.im2col.default: (im2col, _im2col_applies),
            aten.col2im.default: (col2im, _col2im_applies)}
