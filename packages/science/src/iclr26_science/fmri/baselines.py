"""Baselines of Brain-Semantoks' evaluation: BrainLM-style mask-and-reconstruct pre-training and FC features.

* :class:`MaskedAutoencoder` — BrainLM (Caro et al., ICLR 2024) in small: every ROI's patch of L samples is a
  token (``Linear(L → D)`` + learned ROI embedding + sin-cos patch embedding); a random ``mask_ratio`` of the
  ``R·P`` tokens is hidden, a transformer encodes the visible ones (+ CLS), a lighter decoder fills in mask
  tokens and predicts the hidden patches; loss = MSE on masked patches only. Probe feature: ``[mean of
  tokens ; CLS]`` of the encoder on the unmasked input (the same ``cls_avg`` recipe as ours).
* :func:`fc_features` — functional connectivity: Fisher-z of the upper triangle of the Pearson correlation
  matrix, ``[R, T] → [R(R−1)/2]``.
* :func:`spectral_features` — each ROI's spectral centroid and width in the BOLD band (a hand-made temporal
  feature for the simulator's controlled check, not a paper baseline), ``[R, T] → [2R]``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr26_science.fmri.semantoks import Block, sincos_embedding

__all__ = ["MaskedAutoencoder", "fc_features", "spectral_features"]


def fc_features(x: np.ndarray) -> np.ndarray:
    """``arctanh`` of the upper-triangular Pearson correlations of ``x [R, T]`` (clipped at |r| ≤ 0.999)."""
    c = np.atleast_2d(np.asarray(np.corrcoef(np.asarray(x, dtype=np.float64))))
    iu = np.triu_indices(c.shape[0], 1)
    return np.arctanh(np.clip(np.nan_to_num(c[iu]), -0.999, 0.999))


def spectral_features(x: np.ndarray, tr: float, low: float = 0.01, high: float = 0.1, segment: int = 40) -> np.ndarray:
    """Per ROI, the centroid ``c = Σ f p(f) / Σ p(f)`` and width ``√(Σ (f − c)² p(f) / Σ p(f))`` of the Welch
    power spectrum ``p`` (``scipy.signal.welch``, Hann segments of ``min(segment, T)`` samples at ``1/tr``
    Hz) over the frequencies in ``[low, high]`` Hz: ``[R, T] → [2R]`` (centroids, then widths; Hz)."""
    from scipy import signal

    arr = np.asarray(x, dtype=np.float64)
    f, p = signal.welch(arr, fs=1.0 / tr, nperseg=min(segment, arr.shape[-1]))
    keep = (f >= low) & (f <= high)
    f, p = f[keep], p[:, keep]
    p = p / np.maximum(p.sum(1, keepdims=True), 1e-30)
    centroid = (p * f).sum(1)
    width = np.sqrt((p * (f - centroid[:, None]) ** 2).sum(1))
    return np.concatenate([centroid, width])


class MaskedAutoencoder(nn.Module):
    """BrainLM-style masked autoencoder over ROI × patch tokens (see module docstring).

    ``x [B, R, P·L]`` → loss (scalar) in :meth:`forward`; :meth:`features` → ``[B, 2D]``.
    """

    time_embed: torch.Tensor

    def __init__(
        self, n_rois: int, *, dim: int, depth: int, heads: int, patch: int, patches: int, decoder_depth: int = 1,
        mask_ratio: float = 0.75,
    ) -> None:  # fmt: skip
        super().__init__()
        self.n_rois, self.patch, self.patches, self.dim, self.mask_ratio = n_rois, patch, patches, dim, mask_ratio
        self.embed = nn.Linear(patch, dim)
        self.roi_embed = nn.Parameter(torch.randn(n_rois, dim) * 0.02)
        self.register_buffer("time_embed", sincos_embedding(patches, dim), persistent=False)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.mask_token = nn.Parameter(torch.zeros(dim))
        self.dec_blocks = nn.ModuleList(Block(dim, heads) for _ in range(decoder_depth))
        self.dec_norm = nn.LayerNorm(dim)
        self.pred = nn.Linear(dim, patch)

    def _tokens(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, r, t = x.shape
        p = t // self.patch
        patches = x.reshape(b, r, p, self.patch)
        tok = self.embed(patches) + self.roi_embed[None, :, None] + self.time_embed[None, None, :p]
        return tok.reshape(b, r * p, self.dim), patches.reshape(b, r * p, self.patch)

    def _encode(self, tok: torch.Tensor) -> torch.Tensor:
        h = torch.cat([self.cls.expand(tok.shape[0], -1, -1), tok], dim=1)
        for blk in self.blocks:
            h = blk(h)
        return self.norm(h)

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        tok, target = self._tokens(x)
        b, m, d = tok.shape
        keep = max(1, int(round(m * (1 - self.mask_ratio))))
        order = torch.rand(b, m, generator=generator).to(x.device).argsort(dim=1)
        vis_idx = order[:, :keep]
        h = self._encode(torch.gather(tok, 1, vis_idx[..., None].expand(-1, -1, d)))
        full = self.mask_token.expand(b, m, d).clone()
        full = full.scatter(1, vis_idx[..., None].expand(-1, -1, d), h[:, 1:])
        pos = (self.roi_embed[:, None] + self.time_embed[None, : self.patches]).reshape(1, -1, d)[:, :m]
        z = torch.cat([h[:, :1], full + pos], dim=1)
        for blk in self.dec_blocks:
            z = blk(z)
        pred = self.pred(self.dec_norm(z)[:, 1:])
        masked = torch.ones(b, m, dtype=torch.bool, device=x.device).scatter(1, vis_idx, False)
        return F.mse_loss(pred[masked], target[masked])

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """``[mean of encoder tokens ; CLS]`` on the full input: ``[B, 2D]``."""
        tok, _ = self._tokens(x)
        h = self._encode(tok)
        return torch.cat([h[:, 1:].mean(1), h[:, 0]], dim=-1)
