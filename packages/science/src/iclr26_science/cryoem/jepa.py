"""3-D I-JEPA pre-training of the SCUNet3D encoder on density maps (paper §3.1, Eq. 1).

The encoder's bottleneck has one feature vector per ``P³`` patch (``P = 2^L``); a linear patch embedding
plus a fixed 3-D sin-cos position code makes them tokens ``s_i`` on a ``g_d × g_h × g_w`` grid. One step:

1. :func:`sample_masks` draws ``M`` target blocks (cuboids of 15–20 % of the grid each, aspect 0.75–1.5)
   and a context block (85–100 %) minus the targets (I-JEPA's multi-block masking, in 3-D).
2. Context encoder ``f_θc`` yields the context tokens; target encoder ``f_θt`` (EMA of ``θc``, no gradient)
   sees the full map; its tokens are layer-normalised. ``context_input`` says what ``f_θc`` sees:
   ``"zero-input"`` (default) the map with every non-context patch zeroed, so nothing of the targets leaks
   in (zeroed voxels look like solvent); ``"drop-tokens"`` the paper's order (§3.1: encoder output →
   patch embedding + position code, *then* masking): the full map, the non-context tokens dropped after
   the patch embedding. With a convolutional / windowed encoder the context tokens' receptive fields then
   cover target voxels too (a ViT's patch embedding would not leak); both drop the non-context tokens
   before the predictor.
3. Predictor ``g_φ`` (transformer blocks) gets the context tokens and one mask token per target position
   (learned vector + position code) and regresses the target tokens:
   ``L = mean_{i ∈ targets} SmoothL1_β(g_φ(f_θc(x_ctx), z_i) − f_θt(x)_i)``.
4. ``θt ← m θt + (1 − m) θc`` with ``m`` rising from 0.996 to 1 (cosine) over training.

The targets of all ``M`` blocks are predicted in one predictor pass (their union), and one mask is drawn per
batch (I-JEPA draws one per sample and truncates to a common size).
"""

from __future__ import annotations

import copy
import math
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr26_science.cryoem.scunet import SCUNet3D

__all__ = [
    "CONTEXT_INPUTS",
    "JEPA3D",
    "ContextInput",
    "ema_momentum",
    "sample_masks",
    "sincos_3d",
    "token_spread",
    "variance_covariance_penalty",
]

#: What the context encoder sees (module docstring, step 2).
ContextInput = Literal["zero-input", "drop-tokens"]
CONTEXT_INPUTS: tuple[ContextInput, ...] = ("zero-input", "drop-tokens")


def sincos_3d(grid: tuple[int, int, int], dim: int) -> torch.Tensor:
    """Fixed 3-D sin-cos position codes ``[g_d · g_h · g_w, dim]`` (a third of the channels per axis,
    MAE's 1-D code ``sin(p / 10000^{2k/d}), cos(·)`` for each; extra channels are zero)."""
    per = (dim // 6) * 2
    if per == 0:
        raise ValueError(f"sincos_3d: dim {dim} is too small (needs >= 6)")
    omega = 1.0 / 10000 ** (torch.arange(per // 2, dtype=torch.float64) / (per / 2))
    coords = torch.stack(torch.meshgrid(*[torch.arange(g, dtype=torch.float64) for g in grid], indexing="ij")).view(
        3, -1
    )
    parts = []
    for ax in range(3):
        out = coords[ax][:, None] * omega[None]
        parts += [torch.sin(out), torch.cos(out)]
    pe = torch.cat(parts, dim=1)
    return F.pad(pe, (0, dim - pe.shape[1])).float()


def _block(grid: tuple[int, int, int], scale: float, aspect: float, rng: np.random.Generator) -> np.ndarray:
    """A random cuboid of about ``scale`` of the grid's cells, boolean ``grid``."""
    vol = max(1.0, scale * float(np.prod(grid)))
    a = [aspect ** (1 / 3), aspect ** (-1 / 3), 1.0]
    rng.shuffle(a)
    side = [int(min(g, max(1, round((vol ** (1 / 3)) * f)))) for g, f in zip(grid, a, strict=True)]
    start = [int(rng.integers(0, g - s + 1)) for g, s in zip(grid, side, strict=True)]
    m = np.zeros(grid, dtype=bool)
    m[start[0] : start[0] + side[0], start[1] : start[1] + side[1], start[2] : start[2] + side[2]] = True
    return m


def sample_masks(
    grid: tuple[int, int, int],
    rng: np.random.Generator,
    *,
    targets: int = 4,
    target_scale: tuple[float, float] = (0.15, 0.2),
    context_scale: tuple[float, float] = (0.85, 1.0),
    aspect: tuple[float, float] = (0.75, 1.5),
) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat indices of the context and target patches (disjoint, both non-empty)."""
    for _ in range(100):
        tgt = np.zeros(grid, dtype=bool)
        for _ in range(targets):
            tgt |= _block(grid, rng.uniform(*target_scale), math.exp(rng.uniform(*np.log(aspect))), rng)
        ctx = _block(grid, rng.uniform(*context_scale), 1.0, rng) & ~tgt
        if ctx.any() and tgt.any():
            return torch.from_numpy(np.flatnonzero(ctx)), torch.from_numpy(np.flatnonzero(tgt))
    raise RuntimeError(f"sample_masks: no non-empty context on grid {grid}; use a larger grid or smaller targets")


@torch.no_grad()
def token_spread(backbone: SCUNet3D, x: torch.Tensor) -> dict[str, float]:
    """Collapse check of an encoder on crops ``x`` ``[B, 1, D, H, W]``: its bottleneck tokens, layer-normalised
    over features, give ``mean_cos`` (mean pairwise cosine over all tokens of all crops; 1 = collapsed) and
    ``feature_std`` (per-feature standard deviation across tokens, averaged; 0 = collapsed)."""
    was = backbone.training
    backbone.eval()
    f = backbone.encode(x).flatten(2).transpose(1, 2)
    backbone.train(was)
    flat = F.layer_norm(f, f.shape[-1:]).reshape(-1, f.shape[-1])
    unit = F.normalize(flat, dim=-1)
    return {"mean_cos": float((unit @ unit.T).mean()), "feature_std": float(flat.std(0).mean())}


def variance_covariance_penalty(z: torch.Tensor, gamma: float = 1.0, eps: float = 1e-4) -> torch.Tensor:
    """VICReg's anti-collapse terms (Bardes et al. 2022, Eq. 1 and 4) on tokens ``z`` ``[N, E]``:

    ``v(z) = (1/E) Σ_j max(0, γ − sqrt(Var(z_{:, j}) + ε))`` (every feature keeps a standard deviation of
    at least γ across tokens) plus ``c(z) = (1/E) Σ_{i≠j} C(z)_{ij}²`` with ``C`` the ``[E, E]`` covariance
    (features decorrelated). Both are 0 for whitened tokens and grow as the tokens collapse."""
    n, e = z.shape
    z = z - z.mean(0)
    std = torch.sqrt(z.var(0) + eps)
    variance = F.relu(gamma - std).mean()
    cov = (z.T @ z) / max(n - 1, 1)
    off = cov - torch.diag(torch.diag(cov))
    return variance + (off**2).sum() / e


def ema_momentum(step: int, total: int, start: float = 0.996, end: float = 1.0) -> float:
    """Cosine schedule of the EMA momentum from ``start`` (step 0) to ``end`` (step ``total``)."""
    t = min(max(step / max(total, 1), 0.0), 1.0)
    return end - (end - start) * (math.cos(math.pi * t) + 1) / 2


class JEPA3D(nn.Module):
    """Context encoder (a :class:`SCUNet3D`'s encoder + patch embedding), its EMA target twin, predictor.

    ``vc_weight > 0`` adds ``vc_weight · (v + c)`` (:func:`variance_covariance_penalty`) on the context
    tokens ``[B·N_ctx, E]`` to the smooth-L1 loss: a collapse guard that is not part of I-JEPA/CryoLVM
    (default 0 = the paper's loss). Since the EMA target encoder follows the context encoder, spreading
    the online tokens keeps the prediction targets spread too.

    ``context_input``: ``"zero-input"`` (default) or ``"drop-tokens"`` (the paper's order; module docstring).
    """

    pos: torch.Tensor
    pred_pos: torch.Tensor

    def __init__(
        self, backbone: SCUNet3D, grid: tuple[int, int, int], *, embed_dim: int = 64, predictor_dim: int = 64,
        predictor_depth: int = 2, predictor_heads: int = 4, beta: float = 1.0, vc_weight: float = 0.0,
        context_input: ContextInput = "zero-input",
    ) -> None:  # fmt: skip
        super().__init__()
        if context_input not in CONTEXT_INPUTS:
            raise ValueError(f"JEPA3D: context_input must be one of {CONTEXT_INPUTS}, got {context_input!r}")
        self.context_input: ContextInput = context_input
        self.backbone = backbone
        for unused in (backbone.up, backbone.tail):  # the decoder is not pre-trained (and DDP needs every
            unused.requires_grad_(False)  # trainable parameter to get a gradient)
        self.grid = grid
        self.patch = 2**backbone.levels
        self.embed = nn.Linear(backbone.encoder_dim, embed_dim)
        self.target_backbone = copy.deepcopy(backbone).requires_grad_(False)
        self.target_embed = copy.deepcopy(self.embed).requires_grad_(False)
        self.register_buffer("pos", sincos_3d(grid, embed_dim), persistent=False)
        self.register_buffer("pred_pos", sincos_3d(grid, predictor_dim), persistent=False)
        self.pred_in = nn.Linear(embed_dim, predictor_dim)
        self.mask_token = nn.Parameter(torch.zeros(predictor_dim))
        nn.init.trunc_normal_(self.mask_token, std=0.02)
        layer = nn.TransformerEncoderLayer(predictor_dim, predictor_heads, 4 * predictor_dim, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)  # fmt: skip
        self.predictor = nn.TransformerEncoder(layer, predictor_depth, enable_nested_tensor=False)
        self.pred_norm = nn.LayerNorm(predictor_dim)
        self.pred_out = nn.Linear(predictor_dim, embed_dim)
        self.beta = beta
        self.vc_weight = vc_weight

    def online_parameters(self) -> list[nn.Parameter]:
        """The parameters the optimiser updates (context encoder, embedding, predictor)."""
        return [p for p in self.parameters() if p.requires_grad]

    def _tokens(self, backbone: SCUNet3D, embed: nn.Linear, x: torch.Tensor) -> torch.Tensor:
        feats = backbone.encode(x)  # [B, C, gd, gh, gw]
        if tuple(feats.shape[2:]) != self.grid:
            raise ValueError(
                f"JEPA3D: input gives a {tuple(feats.shape[2:])} patch grid, model was built for {self.grid}"
            )
        return embed(feats.flatten(2).transpose(1, 2))  # [B, N, E]

    def patch_mask(self, keep: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        """``[1, 1, D, H, W]`` voxel mask that is 1 on the patches in ``keep`` (flat indices), 0 elsewhere."""
        m = torch.zeros(int(np.prod(self.grid)), device=like.device, dtype=like.dtype)
        m[keep] = 1.0
        m = m.view(1, 1, *self.grid)
        for ax in (2, 3, 4):
            m = m.repeat_interleave(self.patch, dim=ax)
        return m

    def context_tokens(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """The online encoder's tokens ``[B, N, E]`` of the whole grid, from the input ``context_input`` says
        (the map with the non-context patches zeroed, or the full map); the loss keeps ``[:, context]``."""
        seen = x * self.patch_mask(context, x) if self.context_input == "zero-input" else x
        return self._tokens(self.backbone, self.embed, seen)

    def forward(self, x: torch.Tensor, context: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The JEPA loss (what ``DistributedDataParallel`` calls)."""
        return self.loss(x, context, target)

    def loss(self, x: torch.Tensor, context: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """JEPA loss of a batch ``x`` ``[B, 1, D, H, W]`` for context/target patch indices."""
        with torch.no_grad():
            t = self._tokens(self.target_backbone, self.target_embed, x)
            t = F.layer_norm(t, t.shape[-1:])[:, target]
        tokens = self.context_tokens(x, context)  # [B, N, E]
        ctx = tokens + self.pos
        z = self.pred_in(ctx[:, context]) + self.pred_pos[context]
        b = x.shape[0]
        queries = (self.mask_token + self.pred_pos[target]).expand(b, -1, -1)
        h = self.pred_norm(self.predictor(torch.cat([z, queries], dim=1)))
        pred = self.pred_out(h[:, context.numel() :])
        loss = F.smooth_l1_loss(pred, t, beta=self.beta)
        if self.vc_weight > 0:  # collapse guard (not in the paper): keep the online context tokens spread
            loss = loss + self.vc_weight * variance_covariance_penalty(tokens[:, context].reshape(-1, tokens.shape[-1]))
        return loss

    @torch.no_grad()
    def update_target(self, momentum: float) -> None:
        """``θt ← m θt + (1 − m) θc`` for the encoder and the patch embedding."""
        for online, tgt in ((self.backbone, self.target_backbone), (self.embed, self.target_embed)):
            for p, q in zip(online.parameters(), tgt.parameters(), strict=True):
                q.mul_(momentum).add_(p.detach(), alpha=1 - momentum)
