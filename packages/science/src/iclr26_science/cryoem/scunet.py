"""3-D Swin-Conv-UNet (SCUNet3D), CryoLVM's backbone (paper §3.2; 2-D original: Zhang et al. 2023,
3-D density-map version: EMReady).

Swin-Conv (SC) block on ``x`` ``[B, C, D, H, W]``::

    y = conv1x1(x);  y_c, y_t = split(y, C/2)
    y_c = y_c + FRN(conv3³(ReLU(FRN(conv3³(y_c)))))             # conv branch, Filter Response Norm
    y_t = SwinBlock(y_t)   # LN → (shifted) window MSA → +, LN → MLP → +; windows of w³ voxels
    out = x + conv1x1(concat(y_c, y_t))

Window MSA: tokens are voxels; each ``w × w × w`` window attends within itself,
``softmax(q kᵀ / √d + B_rel) v`` with a learned relative-position bias ``B_rel`` (a ``(2w−1)³ × heads``
table); every second block rolls the volume by ``⌊w/2⌋`` first ("shifted windows") and masks pairs that
came from different regions, as in Swin. A dimension smaller than ``w`` uses one window spanning it (no
shift); other dimensions are zero-padded to a multiple of ``w``. :func:`naive_window_attention` computes
the same with one dense, masked ``N × N`` attention over the whole volume (the test twin).

U-Net (SCUNet's layout): ``x1 = head(x)`` (3³ conv), ``x_{i+1} = down_i(x_i)`` (SC blocks then a stride-2
2³ conv, channels doubling), ``body`` (SC blocks at the bottleneck), then ``up_i(x + skip)`` (2³ transposed
conv then SC blocks) and ``tail(x + x1)`` (3³ conv). :meth:`SCUNet3D.encode` is the encoder that JEPA
pre-trains (head, down stages, body).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

__all__ = ["FRN3d", "SCBlock3d", "SCUNet3D", "SwinBlock3d", "WindowAttention3d", "naive_window_attention"]


class FRN3d(nn.Module):
    """Filter Response Normalization + TLU (Singh & Krishnan 2020): ``max(γ x / sqrt(mean_xyz x² + ε) + β, τ)``."""

    def __init__(self, channels: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(1, channels, 1, 1, 1))
        self.beta = nn.Parameter(torch.zeros(1, channels, 1, 1, 1))
        self.tau = nn.Parameter(torch.zeros(1, channels, 1, 1, 1))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nu2 = x.pow(2).mean(dim=(2, 3, 4), keepdim=True)
        return torch.maximum(self.gamma * x * torch.rsqrt(nu2 + self.eps) + self.beta, self.tau)


def _geometry(
    size: tuple[int, int, int], window: int, shifted: bool
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per-dimension window, shift and padded size of a ``(D, H, W)`` volume."""
    win = tuple(min(window, s) for s in size)
    shift = tuple(w // 2 if shifted and s > window else 0 for s, w in zip(size, win, strict=True))
    padded = tuple(math.ceil(s / w) * w for s, w in zip(size, win, strict=True))
    return win, shift, padded


def _relative_index(win: tuple[int, ...], window: int) -> torch.Tensor:
    """``[n, n]`` index into the ``(2·window−1)³`` bias table for the ``n = ∏ win`` voxels of a window."""
    coords = torch.stack(torch.meshgrid(*[torch.arange(w) for w in win], indexing="ij")).flatten(1)  # [3, n]
    rel = coords[:, :, None] - coords[:, None, :] + (window - 1)
    m = 2 * window - 1
    return rel[0] * m * m + rel[1] * m + rel[2]


def _shift_mask(padded: tuple[int, ...], win: tuple[int, ...], shift: tuple[int, ...]) -> torch.Tensor | None:
    """``[nW, n, n]`` additive mask (0 / −inf) of the shifted windows (Swin's region labelling)."""
    if not any(shift):
        return None
    label = torch.zeros(padded, dtype=torch.long)
    region = 0
    slices = [
        ((slice(0, -w), slice(-w, -s), slice(-s, None)) if s else (slice(None),))
        for w, s in zip(win, shift, strict=True)
    ]
    for a in slices[0]:
        for b in slices[1]:
            for c in slices[2]:
                label[a, b, c] = region
                region += 1
    windows = _partition(label[None, ..., None].float(), win).squeeze(-1)  # [nW, n]
    diff = windows[:, :, None] != windows[:, None, :]
    return torch.zeros(diff.shape).masked_fill(diff, float("-inf"))


def _partition(x: torch.Tensor, win: tuple[int, ...]) -> torch.Tensor:
    """``[B, D, H, W, C]`` → ``[B · nW, wd · wh · ww, C]``."""
    b, d, h, w, c = x.shape
    wd, wh, ww = win
    x = x.view(b, d // wd, wd, h // wh, wh, w // ww, ww, c).permute(0, 1, 3, 5, 2, 4, 6, 7)
    return x.reshape(-1, wd * wh * ww, c)


def _reverse(windows: torch.Tensor, win: tuple[int, ...], size: tuple[int, ...], batch: int) -> torch.Tensor:
    """Inverse of :func:`_partition`."""
    d, h, w = size
    wd, wh, ww = win
    x = windows.view(batch, d // wd, h // wh, w // ww, wd, wh, ww, -1).permute(0, 1, 4, 2, 5, 3, 6, 7)
    return x.reshape(batch, d, h, w, -1)


class WindowAttention3d(nn.Module):
    """(Shifted) 3-D window multi-head self-attention on ``[B, D, H, W, C]`` (see the module docstring)."""

    def __init__(self, dim: int, head_dim: int, window: int, shifted: bool) -> None:
        super().__init__()
        if dim % head_dim:
            raise ValueError(f"WindowAttention3d: dim {dim} is not a multiple of head_dim {head_dim}")
        self.dim, self.heads, self.window, self.shifted = dim, dim // head_dim, window, shifted
        self.scale = head_dim**-0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(torch.zeros((2 * window - 1) ** 3, self.heads))
        nn.init.trunc_normal_(self.bias_table, std=0.02)

    def _qkv(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, n, _ = tokens.shape
        q, k, v = self.qkv(tokens).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        return q, k, v  # [b, heads, n, head_dim]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, d, h, w, c = x.shape
        win, shift, padded = _geometry((d, h, w), self.window, self.shifted)
        x = F.pad(x, (0, 0, 0, padded[2] - w, 0, padded[1] - h, 0, padded[0] - d))
        if any(shift):
            x = torch.roll(x, shifts=tuple(-s for s in shift), dims=(1, 2, 3))
        tokens = _partition(x, win)  # [b · nW, n, c]
        q, k, v = self._qkv(tokens)
        idx = _relative_index(win, self.window).to(x.device)
        bias = self.bias_table[idx.reshape(-1)].view(idx.shape[0], idx.shape[1], -1).permute(2, 0, 1)
        attn = (q * self.scale) @ k.transpose(-2, -1) + bias[None]  # [b · nW, heads, n, n]
        mask = _shift_mask(padded, win, shift)
        if mask is not None:
            nw = mask.shape[0]
            attn = (attn.view(b, nw, self.heads, *attn.shape[-2:]) + mask.to(attn)[None, :, None]).view_as(attn)
        out = (attn.softmax(-1) @ v).transpose(1, 2).reshape(tokens.shape)
        x = _reverse(self.proj(out), win, padded, b)
        if any(shift):
            x = torch.roll(x, shifts=shift, dims=(1, 2, 3))
        return x[:, :d, :h, :w].contiguous()


def naive_window_attention(module: WindowAttention3d, x: torch.Tensor) -> torch.Tensor:
    """:class:`WindowAttention3d` with one dense ``N × N`` attention over all (padded) voxels, masked to
    pairs in the same (shifted) window and region; the bias is looked up from coordinate differences."""
    b, d, h, w, c = x.shape
    win, shift, padded = _geometry((d, h, w), module.window, module.shifted)
    x = F.pad(x, (0, 0, 0, padded[2] - w, 0, padded[1] - h, 0, padded[0] - d))
    x = torch.roll(x, shifts=tuple(-s for s in shift), dims=(1, 2, 3))
    coords = torch.stack(torch.meshgrid(*[torch.arange(n) for n in padded], indexing="ij"), -1).view(-1, 3)  # [N, 3]
    wt = torch.tensor(win)
    same_window = ((coords[:, None] // wt) == (coords[None] // wt)).all(-1)
    regions = torch.zeros_like(coords)
    for ax in range(3):
        if shift[ax]:
            c_ax = coords[:, ax]
            regions[:, ax] = (c_ax >= padded[ax] - win[ax]).long() + (c_ax >= padded[ax] - shift[ax]).long()
    allowed = same_window & (regions[:, None] == regions[None]).all(-1)
    rel = coords[:, None] - coords[None] + (module.window - 1)
    m = 2 * module.window - 1
    idx = (rel[..., 0] * m * m + rel[..., 1] * m + rel[..., 2]).clamp(0, m**3 - 1)
    bias = module.bias_table[idx.reshape(-1)].view(idx.shape[0], idx.shape[1], -1).permute(2, 0, 1)
    q, k, v = module._qkv(x.reshape(b, -1, c))
    attn = (q * module.scale) @ k.transpose(-2, -1) + bias[None]
    attn = attn.masked_fill(~allowed[None, None], float("-inf"))
    out = module.proj((attn.softmax(-1) @ v).transpose(1, 2).reshape(b, -1, c)).view(b, *padded, c)
    out = torch.roll(out, shifts=shift, dims=(1, 2, 3))
    return out[:, :d, :h, :w]


class SwinBlock3d(nn.Module):
    """``x + WMSA(LN(x))`` then ``x + MLP(LN(x))`` on ``[B, D, H, W, C]``."""

    def __init__(self, dim: int, head_dim: int, window: int, shifted: bool, mlp_ratio: float = 4.0) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = WindowAttention3d(dim, head_dim, window, shifted)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class SCBlock3d(nn.Module):
    """Swin-Conv block (module docstring): conv branch ‖ Swin branch on a channel split, fused by a 1³ conv."""

    def __init__(self, dim: int, head_dim: int, window: int, shifted: bool) -> None:
        super().__init__()
        self.conv_dim = dim // 2
        self.trans_dim = dim - self.conv_dim
        if self.trans_dim % head_dim:
            raise ValueError(
                f"SCBlock3d: half the channels ({self.trans_dim}) must be a multiple of head_dim {head_dim}"
            )
        self.conv1_1 = nn.Conv3d(dim, dim, 1)
        self.conv1_2 = nn.Conv3d(dim, dim, 1)
        cd = self.conv_dim
        self.conv_block = nn.Sequential(
            nn.Conv3d(cd, cd, 3, padding=1, bias=False), FRN3d(cd), nn.ReLU(),
            nn.Conv3d(cd, cd, 3, padding=1, bias=False), FRN3d(cd),
        )  # fmt: skip
        self.trans_block = SwinBlock3d(self.trans_dim, head_dim, window, shifted)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        yc, yt = torch.split(self.conv1_1(x), [self.conv_dim, self.trans_dim], dim=1)
        yc = yc + self.conv_block(yc)
        yt = self.trans_block(yt.permute(0, 2, 3, 4, 1)).permute(0, 4, 1, 2, 3)
        return x + self.conv1_2(torch.cat((yc, yt), dim=1))


def _stage(dim: int, depth: int, head_dim: int, window: int) -> list[nn.Module]:
    return [SCBlock3d(dim, head_dim, window, shifted=bool(i % 2)) for i in range(depth)]


class SCUNet3D(nn.Module, PyTorchModelHubMixin):
    """3-D Swin-Conv-UNet: ``depths`` = SC blocks per down stage, bottleneck, per up stage
    (``2·L + 1`` numbers for ``L`` down-samplings; EMReady: ``(2,) * 7``); ``dim`` channels at full
    resolution, doubling per level; inputs need edges divisible by ``2^L``. ``residual=True`` adds the input to
    the output (a global skip: the network predicts a correction, its last conv starts at zero; not in
    SCUNet/EMReady).

    ``apix`` and ``crop`` record the voxel size (Å) and crop edge the network was trained at (unused by the
    forward pass; :func:`~iclr26_science.cryoem.restore.restore` resamples a map to ``apix`` and tiles it in
    ``crop³`` tiles). Saved and loaded with ``save_pretrained(dir)`` / ``SCUNet3D.from_pretrained(dir)``
    (huggingface_hub: safetensors + these arguments as ``config.json``)."""

    def __init__(
        self, in_channels: int = 1, out_channels: int = 1, dim: int = 32,
        depths: tuple[int, ...] | list[int] = (2, 2, 2, 2, 2, 2, 2), head_dim: int = 16, window: int = 4,
        residual: bool = False, apix: float | None = None, crop: int | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        depths = tuple(int(d) for d in depths)
        self.apix = apix
        self.crop = crop
        #: Per-step rows of the last :func:`~iclr26_science.cryoem.pretrain.pretrain` on it (not saved).
        self.history: list[dict[str, float]] = []
        if len(depths) % 2 != 1 or len(depths) < 3:
            raise ValueError(f"SCUNet3D: depths needs 2·L + 1 >= 3 entries, got {depths}")
        if residual and in_channels != out_channels:
            raise ValueError(f"SCUNet3D: residual needs in_channels == out_channels, got {in_channels}, {out_channels}")
        self.levels = len(depths) // 2
        self.dim = dim
        self.residual = residual
        self.head = nn.Conv3d(in_channels, dim, 3, padding=1, bias=False)
        self.down = nn.ModuleList(
            nn.Sequential(*_stage(dim * 2**i, depths[i], head_dim, window),
                          nn.Conv3d(dim * 2**i, dim * 2 ** (i + 1), 2, stride=2, bias=False))
            for i in range(self.levels)
        )  # fmt: skip
        self.body = nn.Sequential(*_stage(dim * 2**self.levels, depths[self.levels], head_dim, window))
        self.up = nn.ModuleList(
            nn.Sequential(nn.ConvTranspose3d(dim * 2 ** (i + 1), dim * 2**i, 2, stride=2, bias=False),
                          *_stage(dim * 2**i, depths[2 * self.levels - i], head_dim, window))
            for i in reversed(range(self.levels))
        )  # fmt: skip
        self.tail = nn.Conv3d(dim, out_channels, 3, padding=1, bias=False)
        if residual:  # start as the identity map: the correction is zero until the tail learns
            nn.init.zeros_(self.tail.weight)

    @property
    def encoder_dim(self) -> int:
        """Channels of the bottleneck features (what :meth:`encode` returns)."""
        return self.dim * 2**self.levels

    def encoder_modules(self) -> list[nn.Module]:
        """The modules :meth:`encode` uses (what JEPA pre-trains and fine-tuning may load)."""
        return [self.head, self.down, self.body]

    def _check(self, x: torch.Tensor) -> None:
        f = 2**self.levels
        if x.ndim != 5 or any(s % f for s in x.shape[2:]):
            raise ValueError(f"SCUNet3D: expected [B, C, D, H, W] with edges divisible by {f}, got {tuple(x.shape)}")

    def _encode(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        self._check(x)
        skips = [self.head(x)]
        for stage in self.down:
            skips.append(stage(skips[-1]))
        return self.body(skips[-1]), skips

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Bottleneck features ``[B, dim·2^L, D/2^L, H/2^L, W/2^L]`` (one token per ``2^L``-voxel patch)."""
        return self._encode(x)[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, skips = self._encode(x)
        for stage, skip in zip(self.up, reversed(skips[1:]), strict=True):
            y = stage(y + skip)
        out = self.tail(y + skips[0])
        return x + out if self.residual else out
