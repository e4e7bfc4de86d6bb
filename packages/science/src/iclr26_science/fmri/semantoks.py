"""Brain-Semantoks: inter-network transformer, SimDINO-style self-distillation and the curriculum (§3.2–3.3).

Shapes: B batch, R ROIs, T = P·L time points, N networks, P patches, D width, p projection width.

* :class:`SemantoksEncoder` — tokens ``z [B, N, P, D]`` from :class:`SemanticTokenizer`, plus a learned
  network embedding ``e_n`` and a fixed 1-D sin-cos temporal embedding ``τ_p``; masked student tokens are
  replaced by a learned mask embedding first (init N(0, 0.02²), as the official code); a CLS token is prepended
  and ``depth`` pre-norm blocks with LayerScale (init 0.1), qkv projections without bias (official), and a
  final LayerNorm give ``[B, 1 + N·P, D]``.
* :class:`ProjectionHead` — ``g: D → hidden → p`` (GELU), L2-normalised (SimDINO: no prototypes).
* :func:`mcr_loss` — the SimDINO objective ``L_MCR(S, T) = −coeff · C(S, T) − R_ε((S + T)/2)`` with
  ``C = mean_{v≠v'} mean_b ⟨t_v, s_{v'}⟩`` and the coding rate
  ``R_ε(Z) = γ/V Σ_v ½ logdet(I_p + p/(m ε) Z_vᵀ Z_v)``, ``γ = (p + m)/(p m)``.
* The total loss (:meth:`SemantoksPretrainer.loss`):
  ``L = L_CLS + w(step) · L_TTR + λ_tok · L_Tok`` with L_CLS = L_MCR on CLS projections across the two
  temporal views, the curriculum term L_TTR = L_MCR on time-averaged network tokens ``g(mean_p f(x)_{n,p})``
  flattened over batch × N, weight :func:`curriculum_weight`, and the iBOT-like
  ``L_Tok = −mean_{masked i} cos(g_s(f_s(x̃)_i), g_t(f_t(x)_i))``.
* Teacher = EMA of the student (:func:`ema_update`, momentum :func:`ema_momentum` 0.99 → 1, cosine).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from iclr26_science.fmri.tokenizer import SemanticTokenizer
from iclr26_shared.errors import DataError

__all__ = [
    "Block",
    "ProjectionHead",
    "SemantoksEncoder",
    "SemantoksPretrainer",
    "augment",
    "coding_rate",
    "curriculum_weight",
    "ema_momentum",
    "ema_update",
    "mcr_loss",
    "network_mask_counts",
    "sincos_embedding",
    "slice_mask",
    "token_loss",
]


def sincos_embedding(length: int, dim: int) -> torch.Tensor:
    """Fixed 1-D sin-cos position embedding ``[length, dim]`` (Vaswani et al.; MAE's 1-D variant)."""
    half = dim // 2
    omega = 1.0 / 10000 ** (torch.arange(half, dtype=torch.float64) / max(half, 1))
    ang = torch.arange(length, dtype=torch.float64)[:, None] * omega[None]
    emb = torch.cat([ang.sin(), ang.cos()], dim=1)
    if emb.shape[1] < dim:
        emb = F.pad(emb, (0, dim - emb.shape[1]))
    return emb.float()


class Block(nn.Module):
    """Pre-norm transformer block with LayerScale: ``x + γ₁·Attn(LN x)``, then ``x + γ₂·MLP(LN x)``.

    ``qkv_bias``: a bias on the fused q/k/v projection (ViT/ViT-MAE default, used by the BrainLM-style
    baseline); Brain-Semantoks' official ``Attention`` has none (``nn.Linear(dim, 3·dim, bias=False)``)."""

    def __init__(
        self, dim: int, heads: int, mlp_ratio: float = 4.0, layerscale: float = 0.1, *, qkv_bias: bool = True
    ) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.gamma1 = nn.Parameter(torch.full((dim,), layerscale))
        self.gamma2 = nn.Parameter(torch.full((dim,), layerscale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
        x = x + self.gamma1 * self.proj(a)
        return x + self.gamma2 * self.mlp(self.norm2(x))


class SemantoksEncoder(nn.Module, PyTorchModelHubMixin):
    """Semantic tokenizer + inter-network transformer: ``x [B, R, P·L]`` (+ mask ``[B, N, P]``) →
    ``[B, 1 + N·P, D]`` (CLS first, then network-major tokens ``n·P + p``).

    Saved and loaded with ``save_pretrained(dir)`` / ``SemantoksEncoder.from_pretrained(dir)``
    (huggingface_hub: safetensors + the ``__init__`` arguments, ROI groups included, as ``config.json``).

    Official-code defaults: ``qkv_bias=False`` (no bias on the fused q/k/v projection) and the mask token
    drawn from N(0, ``mask_std``²) with ``mask_std=0.02``; ``qkv_bias=True, mask_std=0`` is this port's
    earlier architecture (a qkv bias and a zero mask token).

    Preprocessing (saved with the model, so a reloaded encoder prepares a new scan identically): ``tr`` (the
    TR in s the scans are resampled to), ``band_low``/``band_high`` (the band-pass in Hz) and the crop
    (``patch · patches`` time points). :meth:`preprocess` applies them to a raw scan ``[R, T]`` at its own
    TR, :meth:`scan_features` gives a scan's probe feature. An encoder saved before they were recorded
    loads with them None and :meth:`preprocess` says so."""

    time_embed: torch.Tensor

    def __init__(
        self,
        groups: Sequence[Sequence[int]],
        *,
        dim: int,
        depth: int,
        heads: int,
        patch: int,
        patches: int,
        mlp_ratio: float = 4.0,
        layerscale: float = 0.1,
        sl_kernel: int = 4,
        sl_scales: int = 3,
        tokenizer: Literal["semantic", "linear"] = "semantic",
        qkv_bias: bool = False,
        mask_std: float = 0.02,
        tr: float | None = None,
        band_low: float | None = None,
        band_high: float | None = None,
    ) -> None:
        super().__init__()
        if mask_std < 0:
            raise ValueError(f"mask_std: expected >= 0, got {mask_std}")
        groups = [[int(i) for i in g] for g in groups]
        #: The ``__init__`` arguments (what ``config.json`` holds).
        self.init_args: dict[str, object] = {
            "groups": groups, "dim": dim, "depth": depth, "heads": heads, "patch": patch, "patches": patches,
            "mlp_ratio": mlp_ratio, "layerscale": layerscale, "sl_kernel": sl_kernel, "sl_scales": sl_scales,
            "tokenizer": tokenizer, "qkv_bias": qkv_bias, "mask_std": mask_std, "tr": tr, "band_low": band_low,
            "band_high": band_high,
        }  # fmt: skip
        self.groups = groups
        self.tr, self.band_low, self.band_high = tr, band_low, band_high
        #: Per-step rows of the :func:`~iclr26_science.fmri.fit.fit` that made it (not saved).
        self.history: list[dict[str, float]] = []
        self.n_networks, self.patches, self.patch, self.dim = len(groups), patches, patch, dim
        self.kind = tokenizer
        if tokenizer == "semantic":
            self.tokenizer: nn.Module = SemanticTokenizer(groups, dim, patch, sl_kernel=sl_kernel, sl_scales=sl_scales)
        else:  # ablation (§4.4): a linear projection of each network's patch instead of the tokenizer
            self.tokenizer = _LinearTokenizer(groups, dim, patch)
        self.net_embed = nn.Parameter(torch.randn(self.n_networks, dim) * 0.02)
        self.register_buffer("time_embed", sincos_embedding(patches, dim), persistent=False)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.mask_token = nn.Parameter(torch.randn(dim) * mask_std)
        self.blocks = nn.ModuleList(Block(dim, heads, mlp_ratio, layerscale, qkv_bias=qkv_bias) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        z = self.tokenizer(x)  # [B, N, P, D]
        if mask is None:  # an all-False mask keeps the mask token in the graph (DDP needs every parameter used)
            mask = torch.zeros(z.shape[:3], dtype=torch.bool, device=z.device)
        z = torch.where(mask[..., None], self.mask_token.to(z.dtype), z)
        z = z + self.net_embed[None, :, None] + self.time_embed[None, None]
        b = z.shape[0]
        h = torch.cat([self.cls.expand(b, -1, -1), z.reshape(b, -1, self.dim)], dim=1)
        for blk in self.blocks:
            h = blk(h)
        return self.norm(h)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The paper's probe feature ``cls_avg = [mean of patch tokens ; CLS]``: ``[B, 2D]``."""
        h = self.forward(x)
        return torch.cat([h[:, 1:].mean(1), h[:, 0]], dim=-1)

    @property
    def crop(self) -> int:
        """Time points per input crop (``patch · patches``)."""
        return self.patch * self.patches

    @property
    def n_rois(self) -> int:
        """ROIs a scan must have (``1 + `` the largest ROI index of the groups)."""
        return 1 + max(i for g in self.groups for i in g)

    def preprocess(self, x: np.ndarray, tr: float, *, name: str = "scan") -> np.ndarray:
        """A raw parcellated scan ``[R, T]`` at TR ``tr`` (s) prepared as in training: validated (R ROIs, no
        NaN), resampled to the encoder's TR, band-passed, z-scored per ROI, at least one crop long:
        ``[R, T']`` float. A DataError names ``name`` and what was expected."""
        from iclr26_science.fmri.data import preprocess

        if self.tr is None or self.band_low is None or self.band_high is None:
            raise DataError(
                f"{name}: this encoder records no preprocessing (saved before TR and band were kept); use "
                "iclr26_science.fmri.preprocess(x, tr, target_tr=..., low=..., high=...) with its training values"
            )
        return preprocess(np.asarray(x), tr, target_tr=self.tr, low=self.band_low, high=self.band_high, name=name,
                          n_rois=self.n_rois, min_length=self.crop)  # fmt: skip

    @torch.no_grad()
    def scan_features(self, x: np.ndarray, tr: float, *, windows: int = 8, name: str = "scan") -> np.ndarray:
        """One feature per scan, as the method evaluates: :meth:`preprocess`, then :meth:`features` of
        ``windows`` evenly spaced crops, averaged: ``[2D]`` float32."""
        from iclr26_science.fmri.data import sliding_windows

        crops = sliding_windows(self.preprocess(x, tr, name=name), self.crop, windows).astype(np.float32)
        was = self.training
        self.eval()
        try:
            device = next(self.parameters()).device
            return self.features(torch.from_numpy(crops).to(device)).mean(0).cpu().numpy()
        finally:
            self.train(was)


class _LinearTokenizer(nn.Module):
    """Linear projection of each network's flattened patch (the tokenizer ablation): ``[B, N, P, D]``."""

    def __init__(self, groups: Sequence[Sequence[int]], dim: int, patch: int) -> None:
        super().__init__()
        self.patch = patch
        for k, g in enumerate(groups):
            self.register_buffer(f"idx{k}", torch.as_tensor(list(g), dtype=torch.long), persistent=False)
        self.proj = nn.ModuleList(nn.Linear(len(g) * patch, dim) for g in groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, _, t = x.shape
        p = t // self.patch
        out = []
        for k, lin in enumerate(self.proj):
            idx = getattr(self, f"idx{k}")
            xn = x[:, idx].reshape(b, len(idx), p, self.patch).permute(0, 2, 1, 3).reshape(b, p, -1)
            out.append(lin(xn))
        return torch.stack(out, dim=1)


class ProjectionHead(nn.Module):
    """``g(h) = normalize(W₂ GELU(W₁ h))``: ``[..., D] → [..., p]`` on the unit sphere."""

    def __init__(self, dim: int, hidden: int, out: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, out))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.mlp(h), dim=-1)


def coding_rate(z: torch.Tensor, eps: float = 0.05) -> torch.Tensor:
    """``R_ε = γ/V Σ_v ½ logdet(I_p + p/(m ε) Z_vᵀ Z_v)``, ``γ = (p + m)/(p m)``, for ``z [V, m, p]``."""
    v, m, p = z.shape
    cov = torch.einsum("vbc,vbd->vcd", z, z)
    eye = torch.eye(p, dtype=z.dtype, device=z.device)
    half_logdet = torch.linalg.cholesky_ex(eye + (p / (m * eps)) * cov)[0].diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return half_logdet.mean() * (p + m) / (p * m)


def mcr_loss(student: torch.Tensor, teacher: torch.Tensor, eps: float = 0.05, coeff: float = 1.0) -> torch.Tensor:
    """SimDINO's ``−coeff · C(S, T) − R_ε((S + T)/2)`` for unit vectors ``student, teacher [V, m, p]`` (V ≥ 2
    views; same-view pairs excluded from the alignment term C)."""
    v = student.shape[0]
    sim = torch.einsum("tbd,sbd->tsb", teacher, student).mean(-1)  # [V_t, V_s]
    off = ~torch.eye(v, dtype=torch.bool, device=sim.device)
    align = sim[off].sum() / (v * v - v)
    return -coeff * align - coding_rate((student + teacher) / 2, eps)


def token_loss(student: torch.Tensor, teacher: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """iBOT-like masked-token term ``−mean_b [Σ_{i masked} cos(s_i, t_i) / #masked_b]`` for ``[B, M, p]``
    projections and a ``[B, M]`` boolean mask."""
    cos = F.cosine_similarity(student, teacher, dim=-1)
    per = (cos * mask.float()).sum(-1) / mask.float().sum(-1).clamp(min=1.0)
    return -per.mean()


def curriculum_weight(
    step: int, decay_steps: int, start: float = 0.5, schedule: Literal["cosine", "linear", "constant", "off"] = "cosine"
) -> float:
    """Weight of the network-level curriculum term L_TTR at ``step``: paper ``start·½(1 + cos(π·step/S))``
    for ``step < S`` (S = 5 % of training), then 0. ``constant`` keeps ``start`` throughout (the "TTR
    always" ablation); ``off`` is 0 (no TTR)."""
    if schedule == "off":
        return 0.0
    if schedule == "constant":
        return start
    if step >= decay_steps:
        return 0.0
    frac = step / max(decay_steps, 1)
    return start * (0.5 * (1 + math.cos(math.pi * frac)) if schedule == "cosine" else 1 - frac)


def ema_momentum(step: int, total: int, start: float = 0.99, end: float = 1.0) -> float:
    """Teacher momentum ``end − (end − start)·½(1 + cos(π·step/total))`` (cosine 0.99 → 1)."""
    return end - (end - start) * 0.5 * (1 + math.cos(math.pi * min(step, total) / max(total, 1)))


@torch.no_grad()
def ema_update(teacher: nn.Module, student: nn.Module, momentum: float) -> None:
    """``θ_t ← m·θ_t + (1 − m)·θ_s`` for every parameter (buffers copied)."""
    for pt, ps in zip(teacher.parameters(), student.parameters(), strict=True):
        pt.mul_(momentum).add_(ps.detach(), alpha=1 - momentum)
    for bt, bs in zip(teacher.buffers(), student.buffers(), strict=True):
        bt.copy_(bs)


def network_mask_counts(networks: int, ratio: tuple[float, float]) -> tuple[int, int]:
    """The official ``network_masker``'s range of masked networks ``[lo, hi]`` (inclusive):
    ``lo = max(1, ⌊N·r_lo⌋)``, ``hi = min(N, ⌊N·r_hi⌋) − 1`` (``torch.randint``'s upper end is exclusive),
    e.g. {5, 6} of N = 9 at the paper's (0.65, 0.85). Where the official range is empty (it would raise, e.g.
    N = 2), ``lo`` alone; always within [1, N − 1]."""
    lo = max(1, int(networks * ratio[0]))
    hi = min(networks, int(networks * ratio[1])) - 1
    lo = min(lo, networks - 1)
    return lo, max(lo, min(hi, networks - 1))


def slice_mask(
    batch: int,
    networks: int,
    patches: int,
    rng: np.random.Generator,
    ratio: tuple[float, float] = (0.65, 0.85),
    network_count: Literal["official", "ratio"] = "official",
) -> np.ndarray:
    """The paper's "slice" masks ``[B, N, P]`` (True = masked): per sample, with equal chance, whole networks
    or one contiguous block of ``⌈r·P⌉ − 1`` patches (at least 1), with ``r ~ U[ratio]``.

    The number of masked networks k: ``official`` (the official ``network_masker``) draws k uniformly from
    :func:`network_mask_counts` (independent of r: {5, 6} of 9 at (0.65, 0.85)); ``ratio`` (this port's earlier
    reading of the paper) takes ``k = ⌊r·N⌋`` clamped to [1, N − 1] ({5, 6, 7} of 9)."""
    out = np.zeros((batch, networks, patches), dtype=bool)
    lo, hi = network_mask_counts(networks, ratio) if networks > 1 else (0, 0)
    for b in range(batch):
        r = rng.uniform(*ratio)
        if rng.random() < 0.5 and networks > 1:
            if network_count == "official":
                k = int(rng.integers(lo, hi + 1))
            else:
                k = min(max(int(r * networks), 1), networks - 1)
            out[b, rng.choice(networks, k, replace=False)] = True
        else:
            k = min(max(math.ceil(r * patches) - 1, 1), max(patches - 1, 1))
            s = int(rng.integers(0, patches - k + 1))
            out[b, :, s : s + k] = True
    return out


def augment(
    x: np.ndarray,
    rng: np.random.Generator,
    *,
    channel_drop: float = 0.1,
    block_drop: float = 0.3,
    noise: float = 0.1,
    scale: tuple[float, float] = (0.8, 1.2),
) -> np.ndarray:
    """The paper's signal augmentations on crops ``[B, R, T]``: zero a random U[0, channel_drop] share of ROIs,
    zero one contiguous block of U[0, block_drop]·T samples, add N(0, noise²), scale by U[scale]."""
    x = x.copy()
    b, r, t = x.shape
    for i in range(b):
        nz = int(rng.uniform(0, channel_drop) * r)
        if nz:
            x[i, rng.choice(r, nz, replace=False)] = 0.0
        nb = int(rng.uniform(0, block_drop) * t)
        if nb:
            s = int(rng.integers(0, t - nb + 1))
            x[i, :, s : s + nb] = 0.0
    x += rng.normal(0.0, noise, x.shape).astype(x.dtype)
    return x * rng.uniform(*scale, (b, 1, 1)).astype(x.dtype)


class SemantoksPretrainer(nn.Module):
    """Student (encoder + head) and its EMA teacher; :meth:`loss` is the paper's objective on two views.

    Args:
        encoder: The student encoder (the teacher starts as a copy).
        head_hidden: Hidden width of the projection head (paper 1024).
        proj_dim: Projection width p (paper 128).
        eps: ε of the coding rate (paper 0.05).
        coeff: Weight of the alignment term inside L_MCR (paper 1).
        token_weight: λ_tok of L_Tok (paper 0.5).
    """

    def __init__(
        self, encoder: SemantoksEncoder, *, head_hidden: int, proj_dim: int, eps: float = 0.05, coeff: float = 1.0,
        token_weight: float = 0.5,
    ) -> None:  # fmt: skip
        super().__init__()
        self.student = encoder
        self.head = ProjectionHead(encoder.dim, head_hidden, proj_dim)
        self.teacher = copy.deepcopy(encoder)
        self.teacher_head = copy.deepcopy(self.head)
        for p in [*self.teacher.parameters(), *self.teacher_head.parameters()]:
            p.requires_grad_(False)
        self.eps, self.coeff, self.token_weight = eps, coeff, token_weight

    def student_parameters(self) -> list[nn.Parameter]:
        """What the optimiser updates."""
        return [*self.student.parameters(), *self.head.parameters()]

    def _project(
        self, enc: SemantoksEncoder, head: ProjectionHead, x: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = enc(x, mask)  # [B, 1 + N·P, D]
        b = h.shape[0]
        tokens = h[:, 1:].view(b, enc.n_networks, enc.patches, enc.dim)
        return head(h[:, 0]), head(tokens.mean(2)), head(h[:, 1:])  # [B,p], [B,N,p], [B,N·P,p]

    def forward(
        self, views: torch.Tensor, masks: torch.Tensor | None, ttr_weight: float
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """``views [V, B, R, T]``, ``masks [V, B, N, P]`` or None → (loss, parts)."""
        return self.loss(views, masks, ttr_weight)

    def loss(
        self, views: torch.Tensor, masks: torch.Tensor | None, ttr_weight: float
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """``L = L_CLS + w·L_TTR + λ_tok·L_Tok`` on ``views [V, B, R, T]`` with student masks ``[V, B, N, P]``."""
        with torch.no_grad():
            t = [self._project(self.teacher, self.teacher_head, x, None) for x in views]
        s = [
            self._project(self.student, self.head, x, None if masks is None else masks[i]) for i, x in enumerate(views)
        ]
        cls_s, cls_t = torch.stack([a[0] for a in s]), torch.stack([a[0] for a in t])
        l_cls = mcr_loss(cls_s, cls_t, self.eps, self.coeff)
        parts = {"cls": float(l_cls.detach())}
        loss = l_cls
        if ttr_weight > 0:
            v, b, n, p = len(views), *s[0][1].shape
            net_s = torch.stack([a[1] for a in s]).reshape(v, b * n, p)
            net_t = torch.stack([a[1] for a in t]).reshape(v, b * n, p)
            l_ttr = mcr_loss(net_s, net_t, self.eps, self.coeff)
            loss = loss + ttr_weight * l_ttr
            parts["ttr"] = float(l_ttr.detach())
        if masks is not None and self.token_weight > 0:
            l_tok = torch.stack([token_loss(s[i][2], t[i][2], masks[i].flatten(1)) for i in range(len(views))]).mean()
            loss = loss + self.token_weight * l_tok
            parts["tok"] = float(l_tok.detach())
        parts["loss"] = float(loss.detach())
        return loss, parts
