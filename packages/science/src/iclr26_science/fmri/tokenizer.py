"""The semantic tokenizer of Brain-Semantoks (§3.2): one tokenizer per functional network.

For network n with ROI set R_n and a patch ``x_{n,p} ∈ R^{|R_n| × L}`` (L time points), the token is

    z_{n,p} = LayerNorm( mean_t GELU( [ Conv1d_k3(x_{n,p}) ; W · SLConv(x_{n,p}) ] )_t )  ∈ R^D

Branch A is a dense ``Conv1d(|R_n| → D/2, kernel 3, same padding)``; branch B a structured long convolution
(SGConv/SLConv: per-channel multi-scale kernels, ``H = ceil((D/2)/|R_n|)`` heads per ROI, plus a ``D·x`` skip)
followed by ``Linear(H·|R_n| → D/2)`` mixing ROIs. Separate weights per network; pooling over the patch's
time points; the paper's D = 768 (384 per branch), L = 20, SLConv kernel 4, 3 scales, decay 2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["NetworkTokenizer", "SLConv", "SemanticTokenizer", "naive_slconv"]


class SLConv(nn.Module):
    """Structured long convolution (SGConv, Li et al. 2023) over ``C`` channels with ``H`` heads.

    The kernel of head h, channel c is the concatenation over scales i = 0..S−1 of a learned length-``k``
    piece, nearest-upsampled by ``2^max(0, i−1)`` and scaled by ``decay^(S−i−1)`` (total length
    ``K = k·2^(S−1)``), divided by its norm at initialisation. ``y_{h,c} = k_{h,c} ∗ x_c + D_{h,c} x_c`` with
    centred ("same") zero padding. ``[B, C, L] → [B, H·C, L]`` (head-major: channel index h·C + c); needs
    ``L ≥ K``.
    """

    kernel_norm: torch.Tensor

    def __init__(
        self, channels: int, heads: int, kernel_size: int = 4, num_scales: int = 3, decay: float = 2.0
    ) -> None:
        super().__init__()
        self.channels, self.heads, self.num_scales, self.decay = channels, heads, num_scales, decay
        self.kernel_length = kernel_size * 2 ** (num_scales - 1)
        self.pieces = nn.ParameterList(
            nn.Parameter(torch.randn(heads, channels, kernel_size)) for _ in range(num_scales)
        )
        self.skip = nn.Parameter(torch.randn(heads, channels))
        self.register_buffer("kernel_norm", torch.ones(heads, channels, 1))
        with torch.no_grad():
            self.kernel_norm.copy_(self._raw_kernel().norm(dim=-1, keepdim=True))

    def _raw_kernel(self) -> torch.Tensor:
        parts = [
            piece.repeat_interleave(2 ** max(0, i - 1), dim=-1) * self.decay ** (self.num_scales - i - 1)
            for i, piece in enumerate(self.pieces)
        ]
        return torch.cat(parts, dim=-1)

    def kernel(self) -> torch.Tensor:
        """The normalised kernels ``[H, C, K]``."""
        return self._raw_kernel() / self.kernel_norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, length = x.shape
        if length < self.kernel_length:
            raise ValueError(f"SLConv: patch length {length} is shorter than the kernel ({self.kernel_length})")
        k = self.kernel()  # [H, C, K]
        pad = self.kernel_length - 1
        xp = F.pad(x, (pad // 2, pad - pad // 2))
        # grouped conv: output channel c·H + h reads input channel c; conv1d is a cross-correlation → flip
        weight = k.flip(-1).transpose(0, 1).reshape(c * self.heads, 1, self.kernel_length)
        y = F.conv1d(xp, weight, groups=c).view(b, c, self.heads, length).transpose(1, 2)  # [B, H, C, L]
        y = y + self.skip[None, :, :, None] * x[:, None]
        return y.reshape(b, self.heads * c, length)


def naive_slconv(layer: SLConv, x: torch.Tensor) -> torch.Tensor:
    """Loop twin of :meth:`SLConv.forward` (explicit sums over kernel taps), for tests."""
    k = layer.kernel()
    big_k = layer.kernel_length
    right = big_k - 1 - (big_k - 1) // 2  # zero padding: (K − 1)//2 before, the rest after
    b, c, length = x.shape
    out = torch.zeros(b, layer.heads, c, length, dtype=x.dtype)
    for t in range(length):
        for j in range(big_k):
            src = t + right - j  # convolution: y[t] = sum_j k[j] x[t − j + right]
            if 0 <= src < length:
                out[..., t] += k[None, :, :, j] * x[:, None, :, src]
    out = out + layer.skip[None, :, :, None] * x[:, None]
    return out.reshape(b, layer.heads * c, length)


class NetworkTokenizer(nn.Module):
    """The tokenizer of one network: ``[B', |R_n|, L] → [B', D]`` (B' = batch × patches)."""

    def __init__(
        self,
        n_rois: int,
        dim: int,
        *,
        conv_kernel: int = 3,
        sl_kernel: int = 4,
        sl_scales: int = 3,
        sl_decay: float = 2.0,
    ) -> None:
        super().__init__()
        half = dim // 2
        heads = math.ceil(half / n_rois)
        self.conv = nn.Conv1d(n_rois, dim - half, conv_kernel, padding="same")
        self.slconv = SLConv(n_rois, heads, sl_kernel, sl_scales, sl_decay)
        self.mix = nn.Linear(heads * n_rois, half)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.conv(x)  # [B', D − D/2, L]
        s = self.mix(self.slconv(x).transpose(1, 2)).transpose(1, 2)  # [B', D/2, L]
        return self.norm(F.gelu(torch.cat([a, s], dim=1)).mean(dim=-1))


class SemanticTokenizer(nn.Module):
    """One :class:`NetworkTokenizer` per network: ``x [B, R, P·L] → z [B, N, P, D]``.

    Args:
        groups: ROI indices of each network (``N`` sequences; from :meth:`NetworkMap.groups`).
        dim: Token width D.
        patch: Patch length L (time points per token).
    """

    def __init__(self, groups: Sequence[Sequence[int]], dim: int, patch: int, **kwargs: float) -> None:
        super().__init__()
        self.patch = patch
        self.n_rois = sum(len(g) for g in groups)
        for k, g in enumerate(groups):
            self.register_buffer(f"idx{k}", torch.as_tensor(list(g), dtype=torch.long), persistent=False)
        self.n_networks = len(groups)
        self.tokenizers = nn.ModuleList(NetworkTokenizer(len(g), dim, **kwargs) for g in groups)  # type: ignore[arg-type]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, r, t = x.shape
        if r != self.n_rois:
            raise ValueError(f"tokenizer: input has {r} ROIs, the network map {self.n_rois}")
        if t % self.patch:
            raise ValueError(f"tokenizer: length {t} is not a multiple of the patch length {self.patch}")
        p = t // self.patch
        out = []
        for k, tok in enumerate(self.tokenizers):
            idx = getattr(self, f"idx{k}")
            xn = x[:, idx].reshape(b, len(idx), p, self.patch).permute(0, 2, 1, 3).reshape(b * p, len(idx), self.patch)
            out.append(tok(xn).view(b, p, -1))
        return torch.stack(out, dim=1)
