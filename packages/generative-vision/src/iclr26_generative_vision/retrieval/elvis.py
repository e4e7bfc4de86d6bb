"""ELViS: similarity-space re-ranking from local descriptors (Suma et al., ICLR 2026, §3 of the paper).

For a query with M local descriptors ``q`` and a database image with N descriptors ``x`` (``D``-dim):

1. Projection (Eq. "remap"): ``q̂ = ℓ2(LN(W q + b))``, ``x̂ = ℓ2(LN(W x + b))``, ``W: D → d`` (d = 128).
2. Similarity: ``S = q̂ x̂ᵀ`` (M × N cosines); padding is excluded.
3. Optimal transport with data-dependent dustbins (SuperGlue/OpenGlue form)::

       Ŝ = [[S, u], [vᵀ, ω]],   u_i = h(q̂_i), v_j = h(x̂_j),   h = Linear(d→d) → GELU → Linear(d→1) → Tanh
       a = [1/(M+N)]×M ∪ [N/(M+N)],   b = [1/(M+N)]×N ∪ [M/(M+N)]
       log P = Sinkhorn_log(Ŝ / reg; a, b),  reg = 0.1, 10 iterations
       S' = exp(log P − log(1/(M+N)))[:M, :N] = (M+N)·P[:M, :N]

4. Votes: ``s'_i = max_j S'_ij`` (M row votes), ``s'_j = max_i S'_ij`` (N column votes), then
   ``s(q, x) = Σ_i σ(f(s'_i)) + Σ_j σ(f(s'_j))`` with ``f = Linear(1→16) → LN(16) → GELU → Linear(16→1)``.
   With ``f`` the identity and no OT (``S' = S``) and no sigmoid, ``s`` is the Chamfer similarity (sum form).
5. Training only: ``logit = g(s)``, ``g = Linear(1→64) → GELU → Linear(64→1)``, BCE with label 1 for
   (anchor, positive), 0 for (anchor, negative); ``g`` is dropped at inference.
6. Re-ranking: ``final = λ·global + (1 − λ)·σ(τ·s)`` over the top-k of the global shortlist (λ = τ = 0.5).

Tensors are batched over image pairs: ``q [B, M, D]`` with ``q_mask [B, M]`` (True = real descriptor) and
``x [B, N, D]`` with ``x_mask [B, N]``. Every function here has a loop-over-pairs ``naive_*`` twin in the
tests or below (``naive_log_sinkhorn`` runs the probability-domain Sinkhorn on one unpadded pair).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import Tensor, nn

from iclr26_shared.errors import DataError

__all__ = [
    "ELViS",
    "OFFICIAL_RENAMES",
    "Dustbin",
    "chamfer_ot_similarity",
    "chamfer_similarity",
    "check_pair_batch",
    "load_official_elvis",
    "log_sinkhorn",
    "naive_log_sinkhorn",
    "ot_similarity",
    "rerank_score",
    "votes",
]

Dustbin = Literal["learned", "scalar", "none"]

_NEG = -1e9  # finite "minus infinity" for padded entries (keeps logsumexp free of inf − inf)


def check_pair_batch(q: Tensor, q_mask: Tensor, x: Tensor, x_mask: Tensor) -> None:
    """Raise :class:`DataError` (one line) on mismatched shapes/dims or a pair side without descriptors."""
    if q.ndim != 3 or x.ndim != 3:
        raise DataError(f"descriptors must be [B, M, D] and [B, N, D], got {tuple(q.shape)} and {tuple(x.shape)}")
    if q.shape[0] != x.shape[0] or q.shape[2] != x.shape[2]:
        raise DataError(
            f"descriptor batches disagree: query {tuple(q.shape)} vs database {tuple(x.shape)} (same B and D needed)"
        )
    if q_mask.shape != q.shape[:2] or x_mask.shape != x.shape[:2]:
        raise DataError(f"masks must be [B, M] and [B, N], got {tuple(q_mask.shape)} and {tuple(x_mask.shape)}")
    if q.shape[1] == 0 or x.shape[1] == 0 or not bool(q_mask.any(1).all()) or not bool(x_mask.any(1).all()):
        raise DataError("every image of a pair needs at least one local descriptor (an image has none)")


def log_sinkhorn(
    scores: Tensor, log_a: Tensor, log_b: Tensor, *, iters: int, reg: float, valid: Tensor | None = None
) -> Tensor:
    """Entropic OT in the log domain (OpenGlue's ``log_otp_solver``): returns ``log P`` ``[B, R, C]``.

    ``P = diag(e^u) exp(scores/reg) diag(e^v)`` with ``u = log_a − LSE_j(scores/reg + v)``, ``v = log_b −
    LSE_i(scores/reg + u)``, ``iters`` times, starting from ``u = v = 0``. ``valid [B, R, C]`` marks the
    entries that exist (padding: False); ``log_a``/``log_b`` must be ``-inf`` on padded rows/columns.
    """
    z = scores / reg
    if valid is not None:
        z = z.masked_fill(~valid, _NEG)
    u = torch.zeros_like(log_a)
    v = torch.zeros_like(log_b)
    for _ in range(iters):
        u = log_a - torch.logsumexp(z + v[:, None, :], dim=2)
        v = log_b - torch.logsumexp(z + u[:, :, None], dim=1)
    out = z + u[:, :, None] + v[:, None, :]
    return out if valid is None else out.masked_fill(~valid, float("-inf"))


def naive_log_sinkhorn(scores: Tensor, a: Tensor, b: Tensor, *, iters: int, reg: float) -> Tensor:
    """Twin of :func:`log_sinkhorn` for one unpadded pair in the probability domain (``K = e^{S/reg}``)."""
    k = torch.exp(scores.double() / reg)
    u = torch.ones_like(a, dtype=torch.float64)
    v = torch.ones_like(b, dtype=torch.float64)
    for _ in range(iters):
        u = a.double() / (k @ v)
        v = b.double() / (k.T @ u)
    return torch.log(u[:, None] * k * v[None, :])


def ot_similarity(
    sim: Tensor,
    q_mask: Tensor,
    x_mask: Tensor,
    *,
    dustbin: Dustbin,
    u: Tensor | None = None,
    v: Tensor | None = None,
    omega: Tensor | float = 1.0,
    iters: int = 10,
    reg: float = 0.1,
) -> Tensor:
    """The transported similarity ``S' = (M+N)·P[:M, :N]`` ``[B, M, N]`` (0 on padding).

    ``dustbin="learned"``: dustbin row/column scores ``u [B, M]``, ``v [B, N]`` and corner ``omega``;
    ``"scalar"``: every dustbin entry is ``omega`` (the paper's "scalar dustbin" ablation); ``"none"``
    (the "w/o dustbin" ablation): balanced OT on ``S`` alone with marginals ``1/M`` and ``1/N``, scaled by
    the same ``M+N``. ``M`` and ``N`` are each pair's real descriptor counts (the official code uses the
    padded sizes; the two agree on unpadded pairs).
    """
    bsz, m_pad, n_pad = sim.shape
    m = q_mask.sum(1).to(sim.dtype)
    n = x_mask.sum(1).to(sim.dtype)
    norm = -torch.log(m + n)  # log 1/(M+N), per pair
    inf = torch.tensor(float("-inf"), dtype=sim.dtype, device=sim.device)
    if dustbin == "none":
        # balanced OT without dustbins: a_i = 1/M, b_j = 1/N (both sum to 1); S' = (M+N)·P as above
        log_a = torch.where(q_mask, -torch.log(m)[:, None], inf)
        log_b = torch.where(x_mask, -torch.log(n)[:, None], inf)
        valid = q_mask[:, :, None] & x_mask[:, None, :]
        log_p = log_sinkhorn(sim, log_a, log_b, iters=iters, reg=reg, valid=valid)
        return torch.exp(log_p - norm[:, None, None]).masked_fill(~valid, 0.0)
    if dustbin == "scalar":
        u = torch.as_tensor(omega, dtype=sim.dtype, device=sim.device).expand(bsz, m_pad)
        v = torch.as_tensor(omega, dtype=sim.dtype, device=sim.device).expand(bsz, n_pad)
    if u is None or v is None:
        raise ValueError("dustbin='learned' needs the dustbin scores u and v")
    corner = torch.as_tensor(omega, dtype=sim.dtype, device=sim.device).reshape(1, 1).expand(bsz, 1)
    top = torch.cat([sim, u[:, :, None]], dim=2)
    bottom = torch.cat([v, corner], dim=1)[:, None, :]
    aug = torch.cat([top, bottom], dim=1)  # [B, M+1, N+1]
    row_ok = torch.cat([q_mask, torch.ones_like(q_mask[:, :1])], dim=1)
    col_ok = torch.cat([x_mask, torch.ones_like(x_mask[:, :1])], dim=1)
    log_a = torch.cat([norm[:, None].expand(bsz, m_pad), (torch.log(n) + norm)[:, None]], dim=1)
    log_b = torch.cat([norm[:, None].expand(bsz, n_pad), (torch.log(m) + norm)[:, None]], dim=1)
    log_a = log_a.masked_fill(~row_ok, float("-inf"))
    log_b = log_b.masked_fill(~col_ok, float("-inf"))
    valid = row_ok[:, :, None] & col_ok[:, None, :]
    log_p = log_sinkhorn(aug, log_a, log_b, iters=iters, reg=reg, valid=valid)
    inner = valid[:, :m_pad, :n_pad]
    return torch.exp(log_p[:, :m_pad, :n_pad] - norm[:, None, None]).masked_fill(~inner, 0.0)


def votes(sp: Tensor, q_mask: Tensor, x_mask: Tensor) -> tuple[Tensor, Tensor]:
    """Row votes ``max_j S'_ij`` ``[B, M]`` and column votes ``max_i S'_ij`` ``[B, N]`` over real entries."""
    valid = q_mask[:, :, None] & x_mask[:, None, :]
    masked = sp.masked_fill(~valid, float("-inf"))
    rows = masked.amax(2).masked_fill(~q_mask, 0.0)
    cols = masked.amax(1).masked_fill(~x_mask, 0.0)
    return rows, cols


def _cosines(q: Tensor, x: Tensor) -> Tensor:
    return torch.einsum("bmd,bnd->bmn", F.normalize(q, dim=-1), F.normalize(x, dim=-1))


def chamfer_similarity(q: Tensor, q_mask: Tensor, x: Tensor, x_mask: Tensor) -> Tensor:
    """Chamfer similarity (zero parameters): ``Σ_i max_j S_ij + Σ_j max_i S_ij`` on cosines ``[B]``."""
    check_pair_batch(q, q_mask, x, x_mask)
    rows, cols = votes(_cosines(q, x), q_mask, x_mask)
    return rows.sum(1) + cols.sum(1)


def chamfer_ot_similarity(
    q: Tensor,
    q_mask: Tensor,
    x: Tensor,
    x_mask: Tensor,
    *,
    dustbin_score: float = 1.0,
    iters: int = 10,
    reg: float = 0.1,
) -> Tensor:
    """Chamfer+OT (zero parameters; the paper's similarity-based baseline): Chamfer on ``S'`` of a scalar dustbin."""
    check_pair_batch(q, q_mask, x, x_mask)
    sp = ot_similarity(_cosines(q, x), q_mask, x_mask, dustbin="scalar", omega=dustbin_score, iters=iters, reg=reg)
    rows, cols = votes(sp, q_mask, x_mask)
    return rows.sum(1) + cols.sum(1)


class ELViS(nn.Module, PyTorchModelHubMixin):
    """ELViS (paper §3): projection, OT with dustbins, votes through ``f``, training head ``g``.

    Saves and loads through ``huggingface_hub.PyTorchModelHubMixin`` (``save_pretrained`` /
    ``ELViS.from_pretrained``; the constructor's arguments are its ``config.json``).

    Args:
        in_dim: D, the local descriptors' width (SIFT 128, DINOv2 ViT-B 768).
        dim: d, the projection width (paper 128).
        f_hidden: f's hidden width (paper 16).
        g_hidden: g's hidden width (paper 64).
        dustbin: ``learned`` (h per descriptor + ω; paper), ``scalar`` (ω everywhere) or ``none`` (ablation).
        use_f: Use the vote network f (else votes enter the sum as they are; ablation "w/o f").
        project: Use the projection (else descriptors are only L2-normalised; ablation, needs D = d for h).
        iters: Sinkhorn iterations (paper 10).
        reg: Entropic regularisation (paper 0.1, i.e. temperature log 10 in the code).
        g_input: What g sees in training: ``sum`` (s itself, the paper) or ``mean`` (``s / (M+N)``: the same
            function class, better conditioned at initialisation when s is a sum of hundreds of votes).
    """

    def __init__(
        self,
        in_dim: int,
        *,
        dim: int = 128,
        f_hidden: int = 16,
        g_hidden: int = 64,
        dustbin: Dustbin = "learned",
        use_f: bool = True,
        project: bool = True,
        iters: int = 10,
        reg: float = 0.1,
        g_input: Literal["sum", "mean"] = "sum",
    ) -> None:
        super().__init__()
        self.g_input = g_input
        if not project and in_dim != dim:
            raise ValueError(f"project=False needs in_dim == dim, got {in_dim} and {dim}")
        self.in_dim, self.dim, self.use_f = in_dim, dim, use_f
        self.dustbin: Dustbin = dustbin
        self.iters, self.reg = iters, reg
        self.proj = nn.Sequential(nn.Linear(in_dim, dim), nn.LayerNorm(dim)) if project else nn.Identity()
        self.h = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, 1), nn.Tanh())
        self.omega = nn.Parameter(torch.tensor(1.0))
        # f's LayerNorm has eps 1e-6 as the official ``Elvis`` (its norm_layer); the projection's keeps 1e-5
        self.f = nn.Sequential(
            nn.Linear(1, f_hidden), nn.LayerNorm(f_hidden, eps=1e-6), nn.GELU(), nn.Linear(f_hidden, 1)
        )
        self.g = nn.Sequential(nn.Linear(1, g_hidden), nn.GELU(), nn.Linear(g_hidden, 1))
        self.apply(self._init)
        if dustbin != "learned":
            self.h.requires_grad_(False)

    @staticmethod
    def _init(m: nn.Module) -> None:
        # the official code: Xavier-uniform linear weights, zero biases, unit LayerNorm
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)

    def num_inference_parameters(self) -> int:
        """Parameters used at inference (projection, h when learned, ω, f; not g)."""
        parts: list[nn.Module] = [self.proj, self.f] + ([self.h] if self.dustbin == "learned" else [])
        return sum(p.numel() for m in parts for p in m.parameters()) + (0 if self.dustbin == "none" else 1)

    def transported(self, q: Tensor, q_mask: Tensor, x: Tensor, x_mask: Tensor) -> Tensor:
        """``S'`` ``[B, M, N]`` (steps 1-3)."""
        check_pair_batch(q, q_mask, x, x_mask)
        if q.shape[2] != self.in_dim:
            raise DataError(f"descriptors have dimension {q.shape[2]}, this ELViS expects {self.in_dim}")
        qp = F.normalize(self.proj(q), dim=-1)
        xp = F.normalize(self.proj(x), dim=-1)
        sim = torch.einsum("bmd,bnd->bmn", qp, xp)
        u = self.h(qp).squeeze(-1) if self.dustbin == "learned" else None
        v = self.h(xp).squeeze(-1) if self.dustbin == "learned" else None
        return ot_similarity(
            sim, q_mask, x_mask, dustbin=self.dustbin, u=u, v=v, omega=self.omega, iters=self.iters, reg=self.reg
        )

    def vote_scores(self, votes_: Tensor) -> Tensor:
        """``σ(f(s'))`` elementwise (or the vote itself without f)."""
        if not self.use_f:
            return votes_
        return torch.sigmoid(self.f(votes_[..., None]).squeeze(-1))

    def forward(self, q: Tensor, q_mask: Tensor, x: Tensor, x_mask: Tensor) -> Tensor:
        """The similarity ``s(q, x)`` ``[B]`` (step 4)."""
        rows, cols = votes(self.transported(q, q_mask, x, x_mask), q_mask, x_mask)
        return (self.vote_scores(rows) * q_mask).sum(1) + (self.vote_scores(cols) * x_mask).sum(1)

    def g_logit(self, s: Tensor, counts: Tensor) -> Tensor:
        """``g(s)`` (``g_input="sum"``, the paper) or ``g(s / (M+N))`` (``"mean"``) ``[B]``; ``counts = M + N``."""
        inp = s if self.g_input == "sum" else s / counts.to(s.dtype)
        return self.g(inp[:, None]).squeeze(-1)

    def logit(self, q: Tensor, q_mask: Tensor, x: Tensor, x_mask: Tensor) -> Tensor:
        """Training logit ``g(s)`` ``[B]`` (step 5)."""
        return self.g_logit(self.forward(q, q_mask, x, x_mask), q_mask.sum(1) + x_mask.sum(1))


def rerank_score(global_sim: Tensor, s: Tensor, *, lam: float = 0.5, tau: float = 0.5) -> Tensor:
    """``λ·global + (1 − λ)·σ(τ·s)`` (paper step 6)."""
    return lam * global_sim + (1 - lam) * torch.sigmoid(tau * s)


#: The official ``elvis/models/elvis.py`` (``Elvis``, ``binarized=False``) names → ours (prefix renames).
OFFICIAL_RENAMES: tuple[tuple[str, str], ...] = (
    ("remap_local.", "proj."),
    ("dust_bin_mlp.", "h."),
    ("dust_bin", "omega"),
)


def load_official_elvis(path: str | os.PathLike[str], **kwargs: Any) -> ELViS:
    """An :class:`ELViS` with the official torch.hub weights read from a **local** file (nothing is
    downloaded), e.g. ``dinov2_elvis_gld.pt`` fetched by hand from the authors' release.

    The official checkpoint is ``{"state": state_dict}`` (or the state dict itself) with the names of
    pavelsuma/ELViS: ``remap_local.{0,1}.*`` (projection and LayerNorm) → ``proj.*``, ``dust_bin_mlp.*`` →
    ``h.*``, ``dust_bin`` → ``omega``; ``f.*`` and ``g.*`` are named alike. The widths (D, d, f's and g's
    hidden sizes) are read off the weights; ``kwargs`` go to :class:`ELViS` (``iters``, ``reg``, ...).

    Raises:
        DataError: the file is missing, not a torch checkpoint, or not an ELViS state dict (one line).
    """
    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: official ELViS weights file not found (download it by hand; nothing is fetched)")
    try:
        obj = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the user's input
        raise DataError(f"{file}: not a torch checkpoint ({err})") from None
    state = obj.get("state", obj) if isinstance(obj, dict) else None
    if not isinstance(state, dict) or "remap_local.0.weight" not in state:
        raise DataError(f"{file}: not an official ELViS checkpoint (no 'remap_local.0.weight' in its state dict)")
    renamed: dict[str, Tensor] = {}
    for key, value in state.items():
        for old, new in OFFICIAL_RENAMES:
            if key.startswith(old):
                key = new + key[len(old) :]
                break
        renamed[key] = value
    dim, in_dim = renamed["proj.0.weight"].shape
    model = ELViS(
        int(in_dim),
        dim=int(dim),
        f_hidden=int(renamed["f.0.weight"].shape[0]),
        g_hidden=int(renamed["g.0.weight"].shape[0]),
        **kwargs,
    )
    try:
        model.load_state_dict(renamed)
    except RuntimeError as err:
        raise DataError(f"{file}: the ELViS weights do not fit ({str(err).splitlines()[0]})") from None
    return model.eval()
